//! `envhost-build-c`: the two steps of building a C environment that need Rust crates rather than
//! a C toolchain.
//!
//! ```text
//! envhost-build-c bindings --wit wit/environment --world environment --out-dir GEN
//! clang-19 --target=wasm32-wasi -mexec-model=reactor ... GEN/environment.c GEN/environment_component_type.o -o core.wasm
//! envhost-build-c component core.wasm -o env.wasm
//! ```
//!
//! `bindings` runs wit-bindgen's C generator (what `wit-bindgen c` does) and writes
//! `<world>.h`, `<world>.c` and `<world>_component_type.o` (the world's type, as a custom section
//! the linker keeps). `component` runs wit-component's `ComponentEncoder` on the core module,
//! adapting its `wasi_snapshot_preview1` imports with the reactor adapter of the wasmtime release
//! the host uses (what `wasm-tools component new --adapt` does).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use wasi_preview1_component_adapter_provider::{
    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
};
use wit_bindgen_core::Files;
use wit_bindgen_core::wit_parser::Resolve;
use wit_component::ComponentEncoder;

/// Builds C environments: C bindings of a WIT world, and componentization of a core module.
#[derive(Parser)]
#[command(version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Writes the C bindings of a WIT world (as `wit-bindgen c`).
    Bindings {
        /// The WIT package: a directory or a `.wit` file.
        #[arg(long)]
        wit: PathBuf,
        /// The world to generate, e.g. `environment`.
        #[arg(long)]
        world: String,
        /// Where to write `<world>.h`, `<world>.c` and `<world>_component_type.o`.
        #[arg(long)]
        out_dir: PathBuf,
    },
    /// Makes a component of a wasm32-wasi (preview1) core module that embeds its world's type,
    /// adapting WASI preview1 to preview2 (as `wasm-tools component new --adapt`).
    Component {
        /// The core module, as linked by clang.
        module: PathBuf,
        /// The component to write.
        #[arg(short, long)]
        output: PathBuf,
    },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Bindings {
            wit,
            world,
            out_dir,
        } => bindings(&wit, &world, &out_dir),
        Command::Component { module, output } => component(&module, &output),
    }
}

/// Generates the C bindings of `world` from the WIT package at `wit` into `out_dir`.
fn bindings(wit: &Path, world: &str, out_dir: &Path) -> Result<()> {
    let mut resolve = Resolve::default();
    let (package, _) = resolve
        .push_path(wit)
        .with_context(|| format!("reading WIT from {}", wit.display()))?;
    let world = resolve.select_world(&[package], Some(world))?;
    let mut files = Files::default();
    wit_bindgen_c::Opts::default()
        .build()
        .generate(&mut resolve, world, &mut files)?;
    fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    for (name, contents) in files.iter() {
        let path = out_dir.join(name);
        fs::write(&path, contents).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Encodes the core module at `module` as a component at `output`.
fn component(module: &Path, output: &Path) -> Result<()> {
    let core = fs::read(module).with_context(|| format!("reading {}", module.display()))?;
    let encoded = ComponentEncoder::default()
        .module(&core)?
        .adapter(
            WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )?
        .validate(true)
        .encode()
        .with_context(|| format!("encoding {} as a component", module.display()))?;
    fs::write(output, encoded).with_context(|| format!("writing {}", output.display()))
}
