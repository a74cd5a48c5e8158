//! One computer's state: a driver instance and what the contract keeps around it (computer.md): the
//! frames, the input queue, the readiness latch, the settings, the keys each caller holds.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use envhost_protocol::computer::errors::Code;
use envhost_protocol::computer::frames::{Display, Frame, FrameStore, Source};
use envhost_protocol::computer::pyfmt::g;
use envhost_protocol::computer::settings::Settings;
use envhost_protocol::error::{Applied, CodedError};
use envhost_runtime::driver::bindings::agentenv::computer::types::{
    Applied as DriverApplied, DisplayState, ErrorCode,
};
use envhost_runtime::driver::{Driver, DriverCallError, DriverInstance, ForkError, ForkPoint};
use tokio::sync::Mutex as AsyncMutex;

use super::image;
use super::queue::{Counts, InputQueue};

/// What the host keeps with a frame: the PNG every screenshot answers with, and the input
/// counts when its root was captured.
#[derive(Debug)]
pub struct Shot {
    /// The frame's PNG.
    pub png: Vec<u8>,
    /// Inputs delivered when its root was captured.
    pub inputs: Arc<Counts>,
}

/// A kept frame.
pub type KeptFrame = Frame<Shot>;

/// A ready check's outcome, as `computer-ready/v1` reports it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Check {
    /// `display`, `capture`, or a driver check's name.
    pub name: String,
    /// Whether it passed.
    pub ok: bool,
    /// What it found.
    pub detail: String,
}

/// A computer's state at one moment, held in memory: what a fork or a restore starts from.
#[derive(Clone, Debug)]
pub struct ComputerSnapshot {
    point: ForkPoint,
    settings: Settings,
    held: HashMap<String, Vec<String>>,
}

impl ComputerSnapshot {
    /// The input operations it replays.
    pub fn inputs(&self) -> usize {
        self.point.len()
    }
}

/// One computer: a live driver instance and the contract's state around it.
pub struct Computer {
    driver: Arc<Driver>,
    instance: AsyncMutex<DriverInstance>,
    frames: Mutex<FrameStore<Shot>>,
    pub(super) queue: InputQueue,
    ready: AtomicBool,
    ready_lock: AsyncMutex<()>,
    settings: Mutex<Settings>,
    held: Mutex<HashMap<String, Vec<String>>>,
    /// Per caller, the timer that releases what it holds after `max_hold_ms`.
    release_timers: Mutex<HashMap<String, tokio::task::JoinHandle<()>>>,
    /// This computer, for its release timers.
    me: Weak<Computer>,
}

/// Whether an operation sends input: its fault is then `delivery_failed`, else `internal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// It sends input.
    Input,
    /// It reads.
    Other,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A driver's failure of `operation` as the contract's coded error: the driver's own code, or
/// for a fault `delivery_failed` (input) or `internal` (anything else), applied unknown.
pub(super) fn coded(operation: &str, kind: Kind, error: DriverCallError) -> CodedError {
    match error {
        DriverCallError::Driver(e) => {
            let code = match e.code {
                ErrorCode::InvalidArgument => Code::InvalidArgument,
                ErrorCode::OutOfBounds => Code::OutOfBounds,
                ErrorCode::Unsupported => Code::Unsupported,
                ErrorCode::TargetUnavailable => Code::TargetUnavailable,
                ErrorCode::DeviceUnavailable => Code::DeviceUnavailable,
                ErrorCode::LimitExceeded => Code::LimitExceeded,
                ErrorCode::Timeout => Code::Timeout,
                ErrorCode::DeliveryFailed => Code::DeliveryFailed,
                ErrorCode::Internal => Code::Internal,
            };
            let mut coded = code.error(e.message);
            coded.hint = e.hint;
            coded.applied = match e.applied {
                DriverApplied::Yes => Applied::Yes,
                DriverApplied::No => Applied::No,
                DriverApplied::Unknown => Applied::Unknown,
            };
            coded
        }
        other => {
            let code = match kind {
                Kind::Input => Code::DeliveryFailed,
                Kind::Other => Code::Internal,
            };
            code.error(format!("@{operation} failed: {other}"))
        }
    }
}

/// A driver's display, checked to have a positive size and scale.
fn display(state: DisplayState) -> Result<Display, CodedError> {
    if state.width == 0 || state.height == 0 || state.scale.is_nan() || state.scale <= 0.0 {
        return Err(Code::Internal.error(format!(
            "@display returned {}×{} at scale {}, not a positive size and scale",
            state.width,
            state.height,
            g(state.scale)
        )));
    }
    Ok(Display {
        width: state.width,
        height: state.height,
        scale: state.scale,
    })
}

impl Computer {
    /// A computer on `instance` of `driver`, under `settings`.
    pub fn new(driver: Arc<Driver>, instance: DriverInstance, settings: Settings) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            driver,
            instance: AsyncMutex::new(instance),
            frames: Mutex::new(FrameStore::default()),
            queue: InputQueue::default(),
            ready: AtomicBool::new(false),
            ready_lock: AsyncMutex::new(()),
            settings: Mutex::new(settings),
            held: Mutex::new(HashMap::new()),
            release_timers: Mutex::new(HashMap::new()),
            me: me.clone(),
        })
    }

    /// This computer's state now, to fork or restore from (computer.md#episodes-and-forks): the
    /// driver instance's input journal and seed, and the settings and keys callers hold.
    pub async fn snapshot(&self) -> ComputerSnapshot {
        ComputerSnapshot {
            point: self.instance().await.fork_point(),
            settings: self.settings(),
            held: self.held().clone(),
        }
    }

    /// A new computer of `driver` in the state of `snapshot`: the journal replayed into a fresh
    /// instance (sleeps skipped), the settings and held keys copied; no frames and an empty
    /// queue, so a caller takes a screenshot first. `label` names the instance in the log.
    ///
    /// # Errors
    /// [`ForkError`]: a driver granted a display cannot be restored; a replay that faults.
    pub async fn restore(
        driver: Arc<Driver>,
        snapshot: &ComputerSnapshot,
        label: &str,
    ) -> Result<Arc<Self>, ForkError> {
        let instance = driver.fork(snapshot.point.clone(), label).await?;
        let computer = Self::new(driver, instance, snapshot.settings.clone());
        *computer.held() = snapshot.held.clone();
        Ok(computer)
    }

    /// A new computer in this one's state: [`Computer::restore`] of [`Computer::snapshot`],
    /// with the readiness latch copied. The fork is of this computer's state when the call gets
    /// its instance.
    ///
    /// # Errors
    /// As [`Computer::restore`].
    pub async fn fork(&self, label: &str) -> Result<Arc<Self>, ForkError> {
        let snapshot = self.snapshot().await;
        let fork = Self::restore(self.driver.clone(), &snapshot, label).await?;
        fork.ready
            .store(self.ready.load(Ordering::Acquire), Ordering::Release);
        Ok(fork)
    }

    /// This computer as shared, for work that outlives a call (none once it is being dropped).
    pub(super) fn shared(&self) -> Option<Arc<Self>> {
        self.me.upgrade()
    }

    /// The driver.
    pub fn driver(&self) -> &Arc<Driver> {
        &self.driver
    }

    /// The settings now.
    pub fn settings(&self) -> Settings {
        lock(&self.settings).clone()
    }

    /// Changes the settings.
    pub fn update_settings(&self, change: impl FnOnce(&mut Settings)) {
        change(&mut lock(&self.settings));
    }

    /// The driver instance, for operations.
    pub(super) async fn instance(&self) -> tokio::sync::MutexGuard<'_, DriverInstance> {
        self.instance.lock().await
    }

    /// The frames.
    pub(super) fn frames(&self) -> MutexGuard<'_, FrameStore<Shot>> {
        lock(&self.frames)
    }

    /// The keys each caller holds.
    pub(super) fn held(&self) -> MutexGuard<'_, HashMap<String, Vec<String>>> {
        lock(&self.held)
    }

    /// (Re)arms the timer that releases, `max_hold_ms` from now, whatever `identity` still
    /// holds then (computer.md#keyboard), replacing its earlier timer.
    pub(super) fn arm_release(&self, identity: &str) {
        let after = Duration::from_millis(u64::from(lock(&self.settings).max_hold_ms));
        let me = self.me.clone();
        let owner = identity.to_owned();
        let timer = tokio::spawn(async move {
            tokio::time::sleep(after).await;
            if let Some(computer) = me.upgrade() {
                computer.release_all(&owner).await;
            }
        });
        if let Some(earlier) = lock(&self.release_timers).insert(identity.to_owned(), timer) {
            earlier.abort();
        }
    }

    /// Cancels `identity`'s release timer: it holds nothing now.
    pub(super) fn disarm_release(&self, identity: &str) {
        if let Some(timer) = lock(&self.release_timers).remove(identity) {
            timer.abort();
        }
    }

    /// Releases, in reverse order and in a queue turn of its own (waiting while the queue is
    /// busy), every key `identity` holds.
    async fn release_all(&self, identity: &str) {
        let turn = loop {
            match self.queue.turn(self.queue_wait()).await {
                Ok(turn) => break turn,
                Err(_) => continue,
            }
        };
        lock(&self.release_timers).remove(identity);
        let Some(keys) = self.held().remove(identity) else {
            return;
        };
        let reversed: Vec<String> = keys.into_iter().rev().collect();
        match self.instance().await.keys(&reversed, false).await {
            Ok(()) => self.queue.delivered(identity),
            Err(e) => tracing::warn!(
                caller = identity,
                error = %e,
                "releasing the keys held past max_hold_ms failed"
            ),
        }
        drop(turn);
    }

    /// The display now.
    ///
    /// # Errors
    /// The driver's error, or `internal`.
    pub async fn display_now(&self) -> Result<Display, CodedError> {
        let state = self
            .instance()
            .await
            .display()
            .await
            .map_err(|e| coded("display", Kind::Other, e))?;
        display(state)
    }

    /// Sets the display to the mode `width` × `height` of `modes` at `scale` (else the current
    /// scale), in a queue turn (computer.md#display). Frames captured at another display are
    /// stale from then on.
    ///
    /// # Errors
    /// `invalid_argument` for a size that is not one of `modes`; `input_busy`; the driver's
    /// error, or `delivery_failed` when it faults.
    pub async fn set_display(
        &self,
        width: i64,
        height: i64,
        scale: Option<f64>,
        modes: &[(u32, u32)],
    ) -> Result<Display, CodedError> {
        let mode = modes
            .iter()
            .copied()
            .find(|&(w, h)| i64::from(w) == width && i64::from(h) == height);
        let Some((width, height)) = mode else {
            let listed: Vec<String> = modes.iter().map(|(w, h)| format!("{w}×{h}")).collect();
            return Err(Code::InvalidArgument.error(format!(
                "{width}×{height} is not one of this computer's display modes: {}",
                listed.join(", ")
            )));
        };
        if let Some(scale) = scale.filter(|s| !s.is_finite() || *s <= 0.0) {
            return Err(Code::InvalidArgument
                .error(format!("scale is a positive number, got {}", g(scale))));
        }
        let _turn = self.queue.turn(self.queue_wait()).await?;
        let scale = match scale {
            Some(scale) => scale,
            None => self.display_now().await?.scale,
        };
        let state = self
            .instance()
            .await
            .set_display(width, height, scale)
            .await
            .map_err(|e| coded("set_display", Kind::Input, e))?;
        display(state)
    }

    /// Seeds the desktop's state from `json`, in a queue turn (computer.md#data).
    ///
    /// # Errors
    /// `input_busy`; the driver's error; `delivery_failed` when it faults.
    pub async fn seed(&self, json: &str) -> Result<(), CodedError> {
        let _turn = self.queue.turn(self.queue_wait()).await?;
        self.instance()
            .await
            .seed(json)
            .await
            .map_err(|e| coded("seed", Kind::Input, e))
    }

    /// The desktop's state as JSON text, when the driver keeps one of its own.
    ///
    /// # Errors
    /// `internal` when the driver faults.
    pub async fn export_state(&self) -> Result<Option<String>, CodedError> {
        self.instance()
            .await
            .export_state()
            .await
            .map_err(|e| coded("export_state", Kind::Other, e))
    }

    /// The display and a capture of it as PNG, checked to be the display at native size.
    async fn capture_png(&self) -> Result<(Display, Vec<u8>, (u32, u32)), CodedError> {
        let mut instance = self.instance().await;
        let state = instance
            .display()
            .await
            .map_err(|e| coded("display", Kind::Other, e))?;
        let display = display(state)?;
        let pixels = instance
            .capture()
            .await
            .map_err(|e| coded("capture", Kind::Other, e))?;
        drop(instance);
        let size = pixels.size();
        let expected = display.native_size();
        if size != expected {
            return Err(Code::Internal.error(format!(
                "@capture returned {}×{}, but the display at scale {} is {}×{}",
                size.0,
                size.1,
                g(display.scale),
                expected.0,
                expected.1
            )));
        }
        let png = image::encode(&pixels)
            .map_err(|e| Code::Internal.error(format!("@capture returned {e}")))?;
        Ok((display, png, size))
    }

    /// A capture of the whole display now, as PNG (`round(width × scale)` ×
    /// `round(height × scale)` pixels), kept as no frame: the frames callers see are unchanged.
    ///
    /// # Errors
    /// The driver's error, or `internal` for a capture of the wrong size.
    pub async fn screenshot(&self) -> Result<Vec<u8>, CodedError> {
        Ok(self.capture_png().await?.1)
    }

    /// A new frame of the whole display, the latest of caller `identity`. The input counts are
    /// read before the capture, so input landing while it runs counts as after the frame.
    ///
    /// # Errors
    /// The driver's error, or `internal` for a capture of the wrong size.
    pub async fn capture(&self, identity: &str) -> Result<Arc<KeptFrame>, CodedError> {
        let inputs = Arc::new(self.queue.snapshot());
        let (display, png, size) = self.capture_png().await?;
        let captured_at = chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.6fZ")
            .to_string();
        let source = Source::Capture {
            display,
            captured_at,
        };
        Ok(self
            .frames()
            .add(source, size, Shot { png, inputs }, identity))
    }

    /// The readiness checks, in order: `display`, `capture`, then the driver's own; passing
    /// them all latches readiness for the computer's life.
    ///
    /// # Errors
    /// None: a check that fails is reported as failed.
    pub async fn ready_checks(&self) -> Vec<Check> {
        let check = |name: &str, ok: bool, detail: String| Check {
            name: name.to_owned(),
            ok,
            detail,
        };
        let mut checks = Vec::new();
        match self.display_now().await {
            Ok(display) => {
                checks.push(check("display", true, display.describe()));
                match self.capture_png().await {
                    Ok((_, _, (w, h))) => checks.push(check("capture", true, format!("{w}×{h}"))),
                    Err(e) => checks.push(check("capture", false, e.message)),
                }
            }
            Err(e) => {
                checks.push(check("display", false, e.message));
                checks.push(check(
                    "capture",
                    false,
                    "the display didn't answer".to_owned(),
                ));
            }
        }
        match self.instance().await.ready_checks().await {
            Ok(own) => checks.extend(own.into_iter().map(|c| check(&c.name, c.ok, c.detail))),
            Err(e) => checks.push(check("driver", false, e.to_string())),
        }
        if checks.iter().all(|c| c.ok) {
            self.ready.store(true, Ordering::Release);
        }
        checks
    }

    /// Refuses until the ready checks have passed once; runs them when none has yet.
    ///
    /// # Errors
    /// `device_unavailable` ("the computer isn't ready: …").
    pub async fn ensure_ready(&self) -> Result<(), CodedError> {
        if self.ready.load(Ordering::Acquire) {
            return Ok(());
        }
        let _one = self.ready_lock.lock().await;
        if self.ready.load(Ordering::Acquire) {
            return Ok(());
        }
        let failed: Vec<String> = self
            .ready_checks()
            .await
            .into_iter()
            .filter(|c| !c.ok)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        if failed.is_empty() {
            Ok(())
        } else {
            Err(Code::DeviceUnavailable
                .error(format!("the computer isn't ready: {}", failed.join("; "))))
        }
    }

    /// How long an input call waits for the queue.
    pub(super) fn queue_wait(&self) -> Duration {
        Duration::from_secs_f64(lock(&self.settings).queue_wait_s)
    }
}
