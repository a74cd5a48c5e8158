//! A computer driver as served: the driver compiled once and what every computer of it shares:
//! its card's shape (features, groups, display modes, the grants' extensions), the settings a
//! new computer starts with, and the operator's grants.

use std::path::PathBuf;
use std::sync::Arc;

use envhost_protocol::computer::card::Shape;
use envhost_protocol::computer::settings::Settings;
use envhost_runtime::Runtime;
use envhost_runtime::driver::{Driver, DriverLoadError, Grants};

use super::config::{ComputerConfig, ComputerGrants};
use crate::computer::exec::Exec;
use crate::computer::shape::shape;

/// Why a computer driver could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ComputerLoadError {
    /// The component's file could not be read.
    #[error("reading the component: {0}")]
    Read(std::io::Error),
    /// The component is not a driver this host can serve, or is not granted what it imports.
    #[error(transparent)]
    Driver(DriverLoadError),
    /// The driver's instance that answers its display modes could not be started.
    #[error("starting the driver: {0}")]
    Start(String),
    /// The driver failed to answer its display modes.
    #[error("asking the driver its display modes: {0}")]
    Modes(String),
}

/// A computer driver loaded once; each computer of it is an episode
/// ([`crate::ComputerEpisode`]).
pub struct DriverCatalog {
    /// Its name in the host.
    pub name: String,
    driver: Arc<Driver>,
    shape: Shape,
    settings: Settings,
    grants: ComputerGrants,
}

impl DriverCatalog {
    /// Loads `config`'s driver with `runtime`: reads and compiles the component, checks its
    /// imports against the display grant and its features against the contract, and asks its
    /// display modes when it has the display-modes group.
    ///
    /// # Errors
    /// [`ComputerLoadError`], saying what failed.
    pub async fn load(
        runtime: &Runtime,
        config: &ComputerConfig,
    ) -> Result<Self, ComputerLoadError> {
        let bytes = std::fs::read(&config.component).map_err(ComputerLoadError::Read)?;
        let grants = Grants {
            display: config.grants.display.clone(),
        };
        let driver = Driver::from_bytes(runtime, bytes, config.limits, &grants)
            .await
            .map_err(ComputerLoadError::Driver)?;
        let card_name = config
            .card_name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| driver.name().to_owned());
        let modes = if driver.groups().display_modes {
            let mut instance = driver
                .instantiate(&card_name)
                .await
                .map_err(|e| ComputerLoadError::Start(format!("{e:#}")))?;
            instance
                .modes()
                .await
                .map_err(|e| ComputerLoadError::Modes(e.to_string()))?
        } else {
            Vec::new()
        };
        let mut shape = shape(&driver, card_name, modes, grants.display.is_some());
        shape.exec = config.grants.exec;
        shape.write_files = config.grants.home.is_some();
        Ok(Self {
            name: config.name.clone(),
            driver: Arc::new(driver),
            shape,
            settings: config.settings.clone(),
            grants: config.grants.clone(),
        })
    }

    /// The driver.
    pub fn driver(&self) -> &Arc<Driver> {
        &self.driver
    }

    /// The card's shape: its name, features, groups, display modes, and the extensions and
    /// intake the grants add.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The settings a new computer starts with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// What the operator granted.
    pub fn grants(&self) -> &ComputerGrants {
        &self.grants
    }

    /// The display modes (`computer-display set` takes one of them; none without the
    /// display-modes group).
    pub fn modes(&self) -> &[(u32, u32)] {
        &self.shape.modes
    }

    /// The commands of a new computer when they are granted (each computer keeps its own
    /// `request_id`s): run in the home, else `$HOME`, else `/`, with `DISPLAY` set to the
    /// granted display, each output stream kept up to the settings' `exec_output_bytes`, with
    /// their `exec_timeout_s` when a call names no timeout.
    pub(super) fn exec(&self) -> Option<Exec> {
        self.grants.exec.then(|| {
            let home: PathBuf = self
                .grants
                .home
                .clone()
                .or_else(|| std::env::var_os("HOME").map(Into::into))
                .unwrap_or_else(|| "/".into());
            Exec::new(
                home,
                self.grants.display.clone(),
                self.settings.exec_output_bytes,
                self.settings.exec_timeout_s,
            )
        })
    }
}
