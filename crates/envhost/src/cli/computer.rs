//! `envhost serve --driver PATH.wasm`: a host of one computer driver, its root computer served
//! as the reference serves a driver and more computers beside it (docs/computer.md).

use std::sync::Arc;

use crate::protocol::computer::settings::{SETTINGS_ENV, Settings};
use crate::server::{self, computers::Computers};
use crate::{ComputerConfig, ComputerGrants, Host, HostConfig};

use super::access::Binding;
use super::config::FileDriver;
use super::refusal;

/// The computer `driver` names, as `card_name` (else the table's `name`, else the driver's
/// own), named in the host after its file, its settings from `AGENTENV_COMPUTER_SETTINGS`.
///
/// # Errors
/// The settings are not valid.
pub fn config(driver: FileDriver, card_name: Option<String>) -> anyhow::Result<ComputerConfig> {
    let settings =
        Settings::parse(std::env::var(SETTINGS_ENV).ok().as_deref()).map_err(anyhow::Error::msg)?;
    let name = driver
        .component
        .file_stem()
        .map_or_else(|| "computer".into(), |s| s.to_string_lossy().into_owned());
    let mut computer = ComputerConfig::new(name, driver.component);
    computer.card_name = card_name.or(driver.name);
    computer.grants = ComputerGrants {
        display: driver.display,
        exec: driver.exec,
        home: driver.home,
    };
    computer.settings = settings;
    Ok(computer)
}

/// Serves `computer` where `binding` says, with at most `max_episodes` computers (the root
/// counted), also under `url_prefix`, until `shutdown` completes.
///
/// # Errors
/// The driver, its root computer or the listener are refused.
pub async fn serve(
    computer: ComputerConfig,
    max_episodes: usize,
    binding: &Binding,
    url_prefix: server::UrlPrefix,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    // SAFETY: geteuid reads the process's effective user id; it cannot fail or touch memory.
    if computer.grants.exec && unsafe { libc::geteuid() } == 0 {
        tracing::warn!(
            "--exec as root: every command a caller sends through computer-exec runs as root; \
             serve as an unprivileged user (the session's), or drop --exec"
        );
    }
    let driver = computer.name.clone();
    let mut config = HostConfig::new(Vec::new());
    config.computers = vec![computer];
    config.max_episodes = max_episodes.max(1);
    config.pooling = false;
    let host = Arc::new(Host::new(config).await.map_err(refusal::host)?);
    let computers = Computers::new(host, &driver)
        .await?
        .with_url_prefix(url_prefix);
    let name = computers.root().name().to_owned();
    let router = server::computers::router(computers, binding.access.clone());
    let listener = binding.listen().await?;
    let bound = listener.local_addr()?;
    tracing::info!(
        "serving the computer {name} at http://{bound}/ (card /.well-known/agent-env.json, MCP /mcp)"
    );
    binding.announce(bound);
    server::run(listener, router, shutdown).await?;
    Ok(())
}
