//! `envhost serve --driver PATH.wasm`: one computer driver served as the reference serves a
//! driver (docs/computer.md).

use std::path::Path;
use std::sync::Arc;

use crate::computer::Computer;
use crate::computer::exec::Exec;
use crate::computer::shape::shape;
use crate::protocol::computer::settings::{SETTINGS_ENV, Settings};
use crate::runtime::driver::{Driver, Grants};
use crate::runtime::{Limits, Runtime};
use crate::server::{
    self,
    computers::{Computers, MakeExec, Template},
};
use anyhow::Context as _;

use super::access::Binding;
use super::refusal;

/// What the operator grants a served computer besides its driver's capabilities.
pub struct Granted {
    /// Commands (`computer-exec/v1`).
    pub exec: bool,
    /// The session user's home: `data/add` writes files under it, `data/get` exports from it,
    /// commands run in it.
    pub home: Option<std::path::PathBuf>,
    /// The most computers served at once, the root counted (`--max-episodes`).
    pub max_episodes: usize,
}

/// Loads the driver at `path` with `grants` and serves a computer on it where `binding` says,
/// named `name` (else the driver's own name), with `granted` commands, files and computers
/// (episodes and forks beside the root), also under `url_prefix`, until `shutdown` completes.
///
/// # Errors
/// The settings, the driver or the listener are refused.
pub async fn serve(
    path: &Path,
    grants: &Grants,
    granted: Granted,
    name: Option<String>,
    binding: &Binding,
    url_prefix: server::UrlPrefix,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let settings =
        Settings::parse(std::env::var(SETTINGS_ENV).ok().as_deref()).map_err(anyhow::Error::msg)?;
    let runtime = Runtime::new().context("starting the runtime")?;
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let driver = Arc::new(
        Driver::from_bytes(&runtime, bytes, Limits::default(), grants)
            .await
            .map_err(|e| refusal::driver(&e, path))?,
    );
    let name = name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| driver.name().to_owned());
    let mut instance = driver
        .instantiate(&name)
        .await
        .map_err(|e| anyhow::anyhow!("starting the driver: {e:#}"))?;
    let modes = if driver.groups().display_modes {
        instance
            .modes()
            .await
            .map_err(|e| anyhow::anyhow!("asking the driver its display modes: {e}"))?
    } else {
        Vec::new()
    };
    let shape = shape(&driver, name.clone(), modes, grants.display.is_some());
    // SAFETY: geteuid reads the process's effective user id; it cannot fail or touch memory.
    if granted.exec && unsafe { libc::geteuid() } == 0 {
        tracing::warn!(
            "--exec as root: every command a caller sends through computer-exec runs as root; \
             serve as an unprivileged user (the session's), or drop --exec"
        );
    }
    let exec = granted.exec.then(|| {
        let home = granted
            .home
            .clone()
            .or_else(|| std::env::var_os("HOME").map(Into::into))
            .unwrap_or_else(|| "/".into());
        let (display, output_bytes, timeout_s) = (
            grants.display.clone(),
            settings.exec_output_bytes,
            settings.exec_timeout_s,
        );
        let make: MakeExec =
            Arc::new(move || Exec::new(home.clone(), display.clone(), output_bytes, timeout_s));
        make
    });
    let computer = Computer::new(driver, instance, settings);
    let template = Template {
        shape,
        exec,
        home: granted.home,
    };
    let router = server::computers::router(
        Computers::new(computer, template, granted.max_episodes).with_url_prefix(url_prefix),
        binding.access.clone(),
    );
    let listener = binding.listen().await?;
    let bound = listener.local_addr()?;
    tracing::info!(
        "serving the computer {name} at http://{bound}/ (card /.well-known/agent-env.json, MCP /mcp)"
    );
    binding.announce(bound);
    server::run(listener, router, shutdown).await?;
    Ok(())
}
