//! `envhost new`: scaffolds an environment with one tool in Rust, Python or JavaScript, with a
//! `build.sh` that builds it into a component, and prints the commands that build and serve it.
//!
//! The project depends on this envhost's source tree (the guest SDKs and the WIT world), found
//! where this binary was built from, or at `--source`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// A guest language `envhost new` scaffolds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// Rust, on the `envhost-sdk` crate (cargo, target wasm32-wasip2).
    Rust,
    /// Python, on the `envhost_sdk` package (componentize-py from PyPI).
    Python,
    /// JavaScript, on the `@envhost/sdk` package (componentize-qjs from npm).
    Js,
}

/// `envhost new` arguments.
#[derive(clap::Args)]
pub struct New {
    /// The guest language.
    #[arg(long, value_enum)]
    lang: Lang,
    /// The environment's name (its card's name, and the prefix of its tool's name): a lowercase
    /// letter, then lowercase letters, digits, `-` or `_`.
    name: String,
    /// Where to create the project [default: ./NAME]; it must not exist, or be empty.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// envhost's source tree (the guest SDKs and `wit/`) [default: the tree this binary was built
    /// from].
    #[arg(long, env = "ENVHOST_SOURCE", value_name = "DIR")]
    source: Option<PathBuf>,
}

/// One file of a template: its path in the project, its text (with `{{…}}` placeholders), and
/// whether it is a script.
struct Template {
    path: &'static str,
    text: &'static str,
    executable: bool,
}

const fn file(path: &'static str, text: &'static str) -> Template {
    Template {
        path,
        text,
        executable: false,
    }
}

const fn script(path: &'static str, text: &'static str) -> Template {
    Template {
        path,
        text,
        executable: true,
    }
}

const RUST: &[Template] = &[
    file("Cargo.toml", include_str!("templates/rust/Cargo.toml")),
    file("src/lib.rs", include_str!("templates/rust/lib.rs")),
    script("build.sh", include_str!("templates/rust/build.sh")),
];

const PYTHON: &[Template] = &[
    file("app.py", include_str!("templates/python/app.py")),
    script("build.sh", include_str!("templates/python/build.sh")),
];

const JS: &[Template] = &[
    file("package.json", include_str!("templates/js/package.json")),
    file(".npmrc", include_str!("templates/js/npmrc")),
    file("src/index.js", include_str!("templates/js/index.js")),
    script("build.sh", include_str!("templates/js/build.sh")),
];

/// Creates the project and prints what to do next.
///
/// # Errors
/// A name that is not one, a project directory that exists and is not empty, a source tree
/// without the SDKs, or a write that fails.
pub fn run(args: &New) -> anyhow::Result<()> {
    check_name(&args.name)?;
    let source = source_tree(args.source.as_deref())?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    if dir
        .read_dir()
        .is_ok_and(|mut entries| entries.next().is_some())
    {
        bail!("{} exists and is not empty", dir.display());
    }
    let show = |path: PathBuf| path.display().to_string();
    let values = [
        ("{{name}}", args.name.clone()),
        ("{{crate}}", args.name.replace('-', "_")),
        ("{{wit}}", show(source.join("wit/environment"))),
        ("{{sdk_rust}}", show(source.join("sdk-guest"))),
        ("{{sdk_python}}", show(source.join("sdk-guest/python"))),
        ("{{sdk_js}}", show(source.join("sdk-guest/js"))),
    ];
    let templates = match args.lang {
        Lang::Rust => RUST,
        Lang::Python => PYTHON,
        Lang::Js => JS,
    };
    for template in templates {
        let text = values
            .iter()
            .fold(template.text.to_owned(), |text, (key, value)| {
                text.replace(key, value)
            });
        write(&dir.join(template.path), &text, template.executable)?;
    }
    print!("{}", next_steps(args, &dir)?);
    Ok(())
}

/// A lowercase letter, then up to 62 lowercase letters, digits, `-` or `_`.
fn check_name(name: &str) -> anyhow::Result<()> {
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && name.len() <= 63;
    if !valid {
        bail!(
            "{name:?} is not an environment name: a lowercase letter, then lowercase letters, digits, `-` or `_`"
        );
    }
    Ok(())
}

/// The source tree: `given`, or the one this binary was built from; it must hold the SDKs and
/// the WIT world.
fn source_tree(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tree = given.unwrap_or(&built_from);
    let tree = tree
        .canonicalize()
        .with_context(|| format!("envhost's source tree {}", tree.display()))?;
    for needed in ["wit/environment", "sdk-guest/python", "sdk-guest/js"] {
        if !tree.join(needed).is_dir() {
            bail!(
                "{} has no {needed}: pass envhost's source tree with --source (or ENVHOST_SOURCE)",
                tree.display()
            );
        }
    }
    Ok(tree)
}

fn write(path: &Path, text: &str, executable: bool) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    if executable {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("making {} executable", path.display()))?;
    }
    Ok(())
}

/// What to run next: the build, the serve, and the tool to call.
fn next_steps(args: &New, dir: &Path) -> anyhow::Result<String> {
    let envhost = std::env::current_exe().context("finding the envhost binary")?;
    let lang = match args.lang {
        Lang::Rust => "Rust",
        Lang::Python => "Python",
        Lang::Js => "JavaScript",
    };
    let dir = dir.display();
    let mut steps = String::new();
    writeln!(
        steps,
        "Created {name}, an environment in {lang} with one tool, in {dir}.\n\nBuild it, then serve it:\n\n    {dir}/build.sh\n    {envhost} serve {dir}/{name}.wasm --host 127.0.0.1\n\nIts first serve compiles the component, which takes {compile}; later serves load it from\nthe cache of compiled components in milliseconds. Then call its tool {name}_greet (argument `who`) with any MCP client at\nhttp://127.0.0.1:18765/mcp, or read its card at http://127.0.0.1:18765/.well-known/agent-env.json.",
        name = args.name,
        envhost = envhost.display(),
        compile = match args.lang {
            Lang::Rust => "about a second",
            Lang::Python => "about ten seconds (the Python interpreter is in it)",
            Lang::Js => "a second or two (the JavaScript engine is in it)",
        },
    )?;
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_identifiers() {
        for good in ["hello", "my-env", "env_2", "a"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Hello",
            "2env",
            "-env",
            "my env",
            "env/x",
            &"a".repeat(64),
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_placeholder_of_every_template_is_known() {
        let known = [
            "{{name}}",
            "{{crate}}",
            "{{wit}}",
            "{{sdk_rust}}",
            "{{sdk_python}}",
            "{{sdk_js}}",
        ];
        for template in RUST.iter().chain(PYTHON).chain(JS) {
            let mut rest = template.text;
            while let Some(start) = rest.find("{{") {
                let end = rest[start..]
                    .find("}}")
                    .map_or(rest.len(), |e| start + e + 2);
                assert!(
                    known.contains(&&rest[start..end]),
                    "{}: {}",
                    template.path,
                    &rest[start..end]
                );
                rest = &rest[end..];
            }
        }
    }
}
