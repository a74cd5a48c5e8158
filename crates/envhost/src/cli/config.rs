//! `envhost serve`'s configuration: environments from the command line (`NAME=PATH` or `PATH`)
//! and from a TOML file, with per-environment limits over command-line defaults.
//!
//! ```toml
//! max_episodes = 10000     # optional; the command line wins when it gives one
//! pool = true              # optional
//!
//! [[environments]]
//! name = "slack"
//! component = "guests/target/wasm32-wasip2/release/slack.wasm"
//! card_name = "chat"       # optional: the card's name and {environment_name}
//! memory_mib = 128         # optional limits; the command line's defaults otherwise
//! cpu_deadline_ms = 2000
//! call_timeout_ms = 30000
//! max_queued_calls = 16
//! idle_timeout_s = 600     # 0: never evicted
//! ```
//!
//! Agents served beside the environments (docs/agents.md#serving), each bound to one:
//!
//! ```toml
//! [agents.tool]
//! component = "guests/target/wasm32-wasip2/release/tool_agent.wasm"
//! environment = "slack"    # optional: the first environment when absent
//! model = "my-model"       # optional: --model when absent
//! ```
//!
//! The egress policy of fetched file parts (docs/serve.md#egress-policy), added to the command
//! line's `--fetch-allow` and `--fetch-deny`:
//!
//! ```toml
//! [fetch]
//! allow = ["10.1.0.0/16", "files.corp.internal"]
//! deny = ["10.0.0.0/8", "*.internal"]
//! ```
//!
//! Or one computer driver instead of environments (docs/computer.md#grants):
//!
//! ```toml
//! [driver]
//! component = "guests/target/wasm32-wasip2/release/x11_driver.wasm"
//! display = ":99"          # optional: the x11 capability's display
//! exec = true              # optional: computer-exec/v1
//! home = "/home/agent"     # optional: files and commands' home
//! name = "desktop"         # optional: the card's name
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::EnvironmentConfig;
use crate::Limits;
use anyhow::Context as _;
use serde::Deserialize;

/// Per-environment settings; every one optional.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    /// Linear memory per instance, in MiB.
    pub memory_mib: Option<usize>,
    /// Guest CPU time per call, in milliseconds.
    pub cpu_deadline_ms: Option<u64>,
    /// Wall time a caller waits per call, in milliseconds.
    pub call_timeout_ms: Option<u64>,
    /// Calls that may wait for an episode at once.
    pub max_queued_calls: Option<usize>,
    /// Seconds without a call before an episode is evicted; 0 never evicts.
    pub idle_timeout_s: Option<u64>,
}

impl Overrides {
    /// `self` over `defaults`.
    pub fn over(&self, defaults: &Overrides) -> Overrides {
        Overrides {
            memory_mib: self.memory_mib.or(defaults.memory_mib),
            cpu_deadline_ms: self.cpu_deadline_ms.or(defaults.cpu_deadline_ms),
            call_timeout_ms: self.call_timeout_ms.or(defaults.call_timeout_ms),
            max_queued_calls: self.max_queued_calls.or(defaults.max_queued_calls),
            idle_timeout_s: self.idle_timeout_s.or(defaults.idle_timeout_s),
        }
    }

    /// The limits these give, the built-in defaults for what they leave unset.
    pub fn limits(&self) -> Limits {
        let base = Limits::default();
        Limits {
            memory_bytes: self.memory_mib.map_or(base.memory_bytes, |m| m << 20),
            cpu_deadline: self
                .cpu_deadline_ms
                .map_or(base.cpu_deadline, Duration::from_millis),
            call_timeout: self
                .call_timeout_ms
                .map_or(base.call_timeout, Duration::from_millis),
            max_queued_calls: self.max_queued_calls.unwrap_or(base.max_queued_calls),
        }
    }

    /// The idle timeout these give (none by default).
    pub fn idle_timeout(&self) -> Option<Duration> {
        self.idle_timeout_s
            .filter(|s| *s > 0)
            .map(Duration::from_secs)
    }
}

/// One `[[environments]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEnvironment {
    name: String,
    component: PathBuf,
    card_name: Option<String>,
    #[serde(flatten)]
    overrides: Overrides,
}

/// The `[driver]` table: a computer driver and what the operator grants it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDriver {
    /// The driver component.
    pub component: PathBuf,
    /// The X display its `x11` capability connects to.
    pub display: Option<String>,
    /// Whether its callers may run commands.
    #[serde(default)]
    pub exec: bool,
    /// The session user's home.
    pub home: Option<PathBuf>,
    /// The card's name.
    pub name: Option<String>,
}

/// An `[agents.NAME]` table: an agent, the environment it is bound to, its model.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileAgent {
    /// The agent component.
    pub component: PathBuf,
    /// The environment whose episodes it acts on; the first one when none.
    pub environment: Option<String>,
    /// The model's name at the endpoint; `--model` when none.
    pub model: Option<String>,
}

/// The `[fetch]` table: the egress policy's rules.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileFetch {
    /// Rules that let fetches through.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Rules that refuse fetches.
    #[serde(default)]
    pub deny: Vec<String>,
}

/// The TOML file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// The most episodes alive at once.
    pub max_episodes: Option<usize>,
    /// Whether instances come from the pooling allocator.
    pub pool: Option<bool>,
    #[serde(default)]
    environments: Vec<FileEnvironment>,
    /// A computer driver to serve instead of environments.
    pub driver: Option<FileDriver>,
    /// Agents, by name.
    #[serde(default)]
    pub agents: std::collections::BTreeMap<String, FileAgent>,
    /// The egress policy's rules.
    #[serde(default)]
    pub fetch: FileFetch,
}

impl File {
    /// Reads `path`; components named relative to it are resolved against its directory.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut file: File =
            toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        for env in &mut file.environments {
            if env.component.is_relative() {
                env.component = base.join(&env.component);
            }
        }
        for agent in file.agents.values_mut() {
            if agent.component.is_relative() {
                agent.component = base.join(&agent.component);
            }
        }
        if let Some(driver) = &mut file.driver {
            anyhow::ensure!(
                file.environments.is_empty(),
                "{} names both environments and a [driver]: a server serves one or the other",
                path.display()
            );
            if driver.component.is_relative() {
                driver.component = base.join(&driver.component);
            }
        }
        Ok(file)
    }

    /// Its environments, with `defaults` under their own settings.
    pub fn environments(&self, defaults: &Overrides) -> Vec<EnvironmentConfig> {
        self.environments
            .iter()
            .map(|env| {
                let settings = env.overrides.over(defaults);
                EnvironmentConfig {
                    name: env.name.clone(),
                    component: env.component.clone(),
                    card_name: env.card_name.clone(),
                    limits: settings.limits(),
                    idle_timeout: settings.idle_timeout(),
                }
            })
            .collect()
    }
}

/// An environment given on the command line: `NAME=PATH`, or `PATH` named after its file stem.
pub fn command_line_environment(arg: &str, defaults: &Overrides) -> EnvironmentConfig {
    let (name, path) = match arg.split_once('=') {
        Some((name, path)) if !name.is_empty() && !name.contains('/') => {
            (name.to_owned(), PathBuf::from(path))
        }
        _ => {
            let path = PathBuf::from(arg);
            let stem = path
                .file_stem()
                .map_or_else(|| arg.to_owned(), |s| s.to_string_lossy().into_owned());
            (stem, path)
        }
    };
    EnvironmentConfig {
        name,
        component: path,
        card_name: None,
        limits: defaults.limits(),
        idle_timeout: defaults.idle_timeout(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environments_come_named_or_from_their_file() {
        let defaults = Overrides::default();
        let named = command_line_environment("chat=dir/slack.wasm", &defaults);
        assert_eq!(
            (named.name.as_str(), named.component.as_path()),
            ("chat", Path::new("dir/slack.wasm"))
        );
        let plain = command_line_environment("dir/slack.wasm", &defaults);
        assert_eq!(plain.name, "slack");
    }

    #[test]
    fn agent_tables_name_their_component_environment_and_model() {
        let dir = std::env::temp_dir().join(format!("envhost-agents-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("agents.toml");
        std::fs::write(
            &path,
            "[agents.tool]\ncomponent = \"a.wasm\"\nenvironment = \"slack\"\nmodel = \"m\"\n[agents.plain]\ncomponent = \"/abs/b.wasm\"\n",
        )
        .unwrap();
        let file = File::load(&path).unwrap();
        let tool = &file.agents["tool"];
        assert_eq!(tool.component, dir.join("a.wasm"));
        assert_eq!(
            (tool.environment.as_deref(), tool.model.as_deref()),
            (Some("slack"), Some("m"))
        );
        assert_eq!(file.agents["plain"].component, Path::new("/abs/b.wasm"));
        assert!(file.agents["plain"].environment.is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_driver_table_names_its_component_and_grants() {
        let dir = std::env::temp_dir().join(format!("envhost-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("computer.toml");
        std::fs::write(
            &path,
            "[driver]\ncomponent = \"x11_driver.wasm\"\ndisplay = \":99\"\nexec = true\n",
        )
        .unwrap();
        let driver = File::load(&path).unwrap().driver.unwrap();
        assert_eq!(driver.component, dir.join("x11_driver.wasm"));
        assert_eq!(driver.display.as_deref(), Some(":99"));
        assert!(driver.exec && driver.home.is_none());
        std::fs::write(
            &path,
            "[driver]\ncomponent = \"d.wasm\"\n[[environments]]\nname = \"s\"\ncomponent = \"s.wasm\"\n",
        )
        .unwrap();
        let both = File::load(&path).unwrap_err().to_string();
        assert!(both.contains("both environments and a [driver]"), "{both}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn file_settings_override_command_line_defaults() {
        let file: File = toml::from_str(
            r#"
            max_episodes = 5
            [[environments]]
            name = "slack"
            component = "slack.wasm"
            memory_mib = 64
            idle_timeout_s = 0
            "#,
        )
        .unwrap();
        let defaults = Overrides {
            memory_mib: Some(128),
            cpu_deadline_ms: Some(500),
            idle_timeout_s: Some(60),
            ..Overrides::default()
        };
        let envs = file.environments(&defaults);
        assert_eq!(file.max_episodes, Some(5));
        assert!(file.fetch.allow.is_empty() && file.fetch.deny.is_empty());
        assert_eq!(envs[0].limits.memory_bytes, 64 << 20);
        assert_eq!(envs[0].limits.cpu_deadline, Duration::from_millis(500));
        assert_eq!(envs[0].idle_timeout, None);
        assert!(toml::from_str::<File>("bogus = 1").is_err());
        let fetch: File =
            toml::from_str("[fetch]\nallow = [\"a.b\"]\ndeny = [\"10.0.0.0/8\"]\n").unwrap();
        assert_eq!(
            (fetch.fetch.allow, fetch.fetch.deny),
            (vec!["a.b".to_owned()], vec!["10.0.0.0/8".to_owned()])
        );
        assert!(toml::from_str::<File>("[fetch]\nallowed = []\n").is_err());
    }
}
