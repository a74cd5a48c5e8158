//! A hosted computer: one episode of a computer driver, with what the protocol keeps per
//! episode (its tool-access rules, its commands), and its operations with the `computer/v1`
//! contract's semantics, the same in-process as over HTTP (docs/computer.md).

use std::sync::{Arc, Mutex, PoisonError, RwLock};

use envhost_protocol::computer::card::{card, listing};
use envhost_protocol::computer::errors::Code;
use envhost_protocol::description::Operation;
use envhost_protocol::error::{CodedError, PERMISSION_DENIED};
use envhost_protocol::tool_access::{Change, Rules};
use envhost_protocol::{Caller, ToolResult};
use envhost_runtime::driver::ForkError;
use serde_json::{Map, Value, json};

use super::driver_catalog::DriverCatalog;
use super::episode::DataError;
use crate::computer::exec::Exec;
use crate::computer::extensions::{self, only};
use crate::computer::{Computer, data, files, tools};
use crate::ids::Secret;

/// The identity every caller's tool calls act as: frames and held keys are the computer's,
/// whichever session or role calls (as the reference driver keeps them).
const IDENTITY: &str = "default";

/// One hosted computer. Cheap to share (`Arc`); its input operations are serialised by its
/// queue, reads run beside them.
pub struct ComputerEpisode {
    id: String,
    /// The id's key in the host's tables ([`crate::ids`]).
    key: u128,
    /// The secret of its agent URL.
    secret: Secret,
    catalog: Arc<DriverCatalog>,
    /// Swapped for a fresh one by [`ComputerEpisode::reset`].
    computer: RwLock<Arc<Computer>>,
    rules: Mutex<Rules>,
    exec: Option<Exec>,
}

impl ComputerEpisode {
    pub(super) fn new(
        (key, id): (u128, String),
        catalog: Arc<DriverCatalog>,
        computer: Arc<Computer>,
    ) -> Self {
        let exec = catalog.exec();
        Self {
            id,
            key,
            secret: Secret::fresh(),
            catalog,
            computer: RwLock::new(computer),
            rules: Mutex::default(),
            exec,
        }
    }

    /// The episode's id (32 lowercase hex digits).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The id's key in the host's tables.
    pub(crate) fn key(&self) -> u128 {
        self.key
    }

    /// The episode's own secret, which its agent URL carries (serve.md#access).
    pub fn secret(&self) -> &Secret {
        &self.secret
    }

    /// The driver it is a computer of.
    pub fn catalog(&self) -> &Arc<DriverCatalog> {
        &self.catalog
    }

    /// The computer now: the driver instance and the contract's state around it (frames, input
    /// queue, readiness, settings, held keys).
    pub fn computer(&self) -> Arc<Computer> {
        self.computer
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The card's name.
    pub fn name(&self) -> &str {
        &self.catalog.shape().name
    }

    /// The data-plane operations it answers: `data/add` and `data/get` when its driver keeps a
    /// state of its own or a home is granted, else `data/get` only.
    pub fn operations(&self) -> &'static [Operation] {
        let shape = self.catalog.shape();
        if shape.write_files || shape.state {
            &[Operation::Add, Operation::Get]
        } else {
            &[Operation::Get]
        }
    }

    /// The card (computer.md#serving), under the settings now (the point tools' descriptions
    /// name the default space).
    pub fn card(&self) -> Value {
        card(self.catalog.shape(), &self.computer().settings())
    }

    fn rules(&self) -> std::sync::MutexGuard<'_, Rules> {
        self.rules.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `tool` is hidden from and refused to `caller` (protocol.md#visibility).
    pub fn is_disabled(&self, caller: &Caller, tool: &str) -> bool {
        self.rules().is_disabled(caller.role_key(), tool, false)
    }

    /// The tools `caller` may use, as MCP's `tools/list` gives them (`{"name", "description",
    /// "inputSchema", "outputSchema", "annotations"}`, the reference's), in the reference's
    /// order; the point tools' descriptions name the default space.
    pub fn list_tools(&self, caller: &Caller) -> Vec<Value> {
        let settings = self.computer().settings();
        listing(
            self.catalog.shape(),
            settings.default_space,
            settings.default_norm_scale,
        )
        .into_iter()
        .filter(|t| !self.is_disabled(caller, t["name"].as_str().unwrap_or_default()))
        .collect()
    }

    /// `tools/call` of `name` with `arguments` for `caller` (computer.md#tools): a refusal by
    /// tool access (`permission_denied`), an unknown tool, arguments the contract refuses and
    /// the driver's errors are error results.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        caller: &Caller,
    ) -> ToolResult {
        if self.is_disabled(caller, name) {
            let mut refused = Code::PermissionDenied.error(format!(
                "Tool '{name}' is disabled for role '{}'",
                caller.role_key()
            ));
            refused.code = PERMISSION_DENIED.into();
            return ToolResult::coded(refused);
        }
        tools::call(&self.computer(), name, arguments, IDENTITY).await
    }

    /// Applies a tool-access change (protocol.md#rule-store); answers the rules now stored under
    /// its role, `{"role", "disabled", "allowed"}`.
    pub fn change_tool_access(&self, change: &Change, disabled: bool) -> Value {
        self.rules().apply(change, disabled)
    }

    /// A capture of the whole display now, as PNG bytes, at the display's native size; it is
    /// kept as no frame, so the frames the tools answer are unchanged.
    ///
    /// # Errors
    /// The driver's coded error, or `internal` for a capture of the wrong size.
    pub async fn screenshot(&self) -> Result<Vec<u8>, CodedError> {
        self.computer().screenshot().await
    }

    /// Starts the computer afresh: a new instance of its driver, with no frames, no keys held,
    /// its readiness to be checked again, and the settings and tool access it has now. Files
    /// under the home stay as they are.
    ///
    /// # Errors
    /// [`DataError::Failed`] for a driver granted a display (its state is the X server's,
    /// which a new instance does not reset) or an instance that cannot be started.
    pub async fn reset(&self) -> Result<(), DataError> {
        let old = self.computer();
        let driver = old.driver();
        if let Some(display) = driver.display() {
            return Err(DataError::Failed(format!(
                "the driver is granted the display {display}: its state lives in that X server, \
                 so it cannot be reset"
            )));
        }
        let instance = driver
            .instantiate("reset")
            .await
            .map_err(|e| DataError::Failed(format!("starting the driver: {e:#}")))?;
        let fresh = Computer::new(driver.clone(), instance, old.settings());
        *self
            .computer
            .write()
            .unwrap_or_else(PoisonError::into_inner) = fresh;
        Ok(())
    }

    /// `data/add` of `parts` (computer.md#data): every part checked first, then each `data`
    /// part seeds the driver's state in turn, then the file parts are written under the home.
    ///
    /// # Errors
    /// [`DataError::Failed`] with `add_failed`'s message: a part that does not fit this
    /// computer, the driver's refusal (`code: message`), a file that cannot be written.
    pub async fn add_data(&self, parts: &[Value]) -> Result<(), DataError> {
        let shape = self.catalog.shape();
        let home = self.catalog.grants().home.clone();
        let added = data::added(parts, shape.state, home.is_some()).map_err(DataError::Failed)?;
        let computer = self.computer();
        for seed in &added.seeds {
            computer
                .seed(seed)
                .await
                .map_err(|e| DataError::Failed(format!("{}: {}", e.code, e.message)))?;
        }
        if added.files.is_empty() {
            return Ok(());
        }
        let home = home.unwrap_or_default();
        tokio::task::spawn_blocking(move || files::write(&home, &added.files))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
            .map_err(DataError::Failed)
    }

    /// `data/get` (computer.md#data): the driver's state as a `{"kind": "data", "data"}` part
    /// when it keeps one, then the files under the home's data paths as file parts.
    ///
    /// # Errors
    /// [`DataError::Failed`] when the driver faults or answers a state that is not JSON.
    pub async fn get_data(&self) -> Result<Vec<Value>, DataError> {
        let computer = self.computer();
        let mut parts = Vec::new();
        if self.catalog.shape().state {
            let state = computer
                .export_state()
                .await
                .map_err(|e| DataError::Failed(format!("{}: {}", e.code, e.message)))?;
            if let Some(text) = state {
                let data: Value = serde_json::from_str(&text).map_err(|e| {
                    DataError::Failed(format!("the driver's state is not JSON: {e}"))
                })?;
                parts.push(json!({"kind": "data", "data": data}));
            }
        }
        if let Some(home) = self.catalog.grants().home.clone() {
            let paths = computer.settings().data_paths;
            let files = tokio::task::spawn_blocking(move || files::export(&home, &paths))
                .await
                .unwrap_or_default();
            parts.extend(files);
        }
        Ok(parts)
    }

    /// Whether commands are granted (`computer-exec/v1`).
    pub fn has_exec(&self) -> bool {
        self.exec.is_some()
    }

    /// `computer-exec run {"argv", "request_id", "cwd"?, "env"?, "timeout_s"?}`: the command's
    /// `{"exit_code", "stdout", "stderr", "truncated", "timed_out"}` (computer.md#grants); a
    /// repeated `request_id` answers the first result.
    ///
    /// # Errors
    /// `extension_not_found` (404) without the grant; `invalid_params` for another key;
    /// `invalid_argument` for a bad request or a program that cannot start.
    pub async fn exec(&self, request: &Map<String, Value>) -> Result<Value, CodedError> {
        let Some(exec) = &self.exec else {
            return Err(not_served(extensions::EXEC, "run"));
        };
        only(request, &["argv", "request_id", "cwd", "env", "timeout_s"])?;
        exec.run(request).await
    }

    /// Calls method `method` of extension `uri` with `params`, as its route does over HTTP:
    /// `computer-ready status`, `computer-display get`/`set`, `computer-spaces get`/`set`,
    /// `computer-keyboard get`/`set` (the keyboard group), `computer-exec run` (commands
    /// granted). Answers the method's JSON answer.
    ///
    /// # Errors
    /// `extension_not_found` (404) for a method this computer does not serve; the method's own
    /// coded errors ([`crate::computer::extensions`]).
    pub async fn call_extension(
        &self,
        uri: &str,
        method: &str,
        params: &Map<String, Value>,
    ) -> Result<Value, CodedError> {
        let computer = self.computer();
        let shape = self.catalog.shape();
        match (uri, method) {
            (extensions::READY, "status") => Ok(extensions::ready_status(&computer).await),
            (extensions::DISPLAY, "get") => {
                extensions::display_get(&computer, self.catalog.modes()).await
            }
            (extensions::DISPLAY, "set") if !shape.modes.is_empty() => {
                extensions::display_set(&computer, self.catalog.modes(), params).await
            }
            (extensions::SPACES, "get") => Ok(extensions::spaces_get(&computer)),
            (extensions::SPACES, "set") => extensions::spaces_set(&computer, params),
            (extensions::KEYBOARD, "get") if shape.keyboard => {
                Ok(extensions::keyboard_get(&computer))
            }
            (extensions::KEYBOARD, "set") if shape.keyboard => {
                extensions::keyboard_set(&computer, params)
            }
            (extensions::EXEC, "run") => self.exec(params).await,
            _ => Err(not_served(uri, method)),
        }
    }

    /// This computer's state now, for a fork or a restore (computer.md#episodes-and-forks).
    ///
    /// # Errors
    /// [`ForkError::Display`] for a driver granted a display.
    pub(super) async fn state(&self) -> Result<crate::computer::ComputerSnapshot, ForkError> {
        let computer = self.computer();
        if let Some(display) = computer.driver().display() {
            return Err(ForkError::Display(display.to_owned()));
        }
        Ok(computer.snapshot().await)
    }
}

impl std::fmt::Debug for ComputerEpisode {
    /// Its id and its driver's name in the host; never its secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComputerEpisode")
            .field("id", &self.id)
            .field("driver", &self.catalog.name)
            .finish_non_exhaustive()
    }
}

/// `extension_not_found` (404): `uri`'s `method` is not served here.
fn not_served(uri: &str, method: &str) -> CodedError {
    let mut error = CodedError::new(
        "extension_not_found",
        format!("this computer serves no method {method:?} of extension {uri:?}"),
    );
    error.status = 404;
    error
}
