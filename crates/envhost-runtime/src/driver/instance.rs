//! One live instance of a driver: its store and the groups it exports, called under the CPU
//! deadline of each call.

use std::sync::Arc;

use wasmtime::Store;
use wasmtime::component::InstancePre;

use super::bindings::agentenv::computer::types::{
    Button, DisplayState, DriverError, FeatureSet, Point, ReadyCheck, ScrollDirection,
};
use super::bindings::exports::agentenv::computer::operations::CaptureImage;
use super::bindings::exports::agentenv::computer::{display_modes, keyboard, operations, pointer};
use super::component::Indices;
use super::journal::Input;
use crate::capability::timing::Timing;
use crate::capability::wasi::Seed;
use crate::limits::Limits;
use crate::store::StoreData;

/// Pixels a capture answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pixels {
    /// Three bytes (red, green, blue) a pixel, rows top to bottom.
    Rgb {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// `width × height × 3` bytes.
        rgb: Vec<u8>,
    },
    /// One palette index a pixel, rows top to bottom.
    Indexed {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// Three bytes a colour.
        palette: Vec<u8>,
        /// `width × height` indices.
        indices: Vec<u8>,
    },
}

impl Pixels {
    /// The image's size in pixels, `(width, height)`.
    pub fn size(&self) -> (u32, u32) {
        match self {
            Self::Rgb { width, height, .. } | Self::Indexed { width, height, .. } => {
                (*width, *height)
            }
        }
    }
}

/// How a driver's operation failed.
#[derive(Debug, thiserror::Error)]
pub enum DriverCallError {
    /// The driver answered with a contract error.
    #[error("{}: {}", .0.code_name(), .0.message)]
    Driver(DriverError),
    /// The driver does not have the group of the operation.
    #[error("the driver has no {0} group")]
    NoGroup(&'static str),
    /// The driver trapped, ran past its CPU deadline or exhausted its memory; the instance
    /// cannot be used again.
    #[error("the driver failed: {0}")]
    Fault(String),
}

impl DriverError {
    /// The code as the contract spells it, e.g. `invalid_argument`.
    pub fn code_name(&self) -> &'static str {
        use super::bindings::agentenv::computer::types::ErrorCode;
        match self.code {
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::OutOfBounds => "out_of_bounds",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::TargetUnavailable => "target_unavailable",
            ErrorCode::DeviceUnavailable => "device_unavailable",
            ErrorCode::LimitExceeded => "limit_exceeded",
            ErrorCode::Timeout => "timeout",
            ErrorCode::DeliveryFailed => "delivery_failed",
            ErrorCode::Internal => "internal",
        }
    }
}

/// What [`super::Driver::fork`] rebuilds an instance from: its input journal and the seed of
/// its random source.
#[derive(Clone, Debug)]
pub struct ForkPoint {
    pub(super) journal: Vec<Input>,
    pub(super) seed: Seed,
}

impl ForkPoint {
    /// The input operations a fork replays.
    pub fn len(&self) -> usize {
        self.journal.len()
    }

    /// Whether a fork replays nothing.
    pub fn is_empty(&self) -> bool {
        self.journal.is_empty()
    }
}

/// A live driver instance. A call that faults leaves it unusable: every later call answers
/// [`DriverCallError::Fault`].
pub struct DriverInstance {
    store: Store<StoreData>,
    operations: operations::Guest,
    pointer: Option<pointer::Guest>,
    keyboard: Option<keyboard::Guest>,
    display_modes: Option<display_modes::Guest>,
    limits: Limits,
    faulted: Option<String>,
    journal: Vec<Input>,
    seed: Seed,
}

/// The outcome of a guest call: the driver's own answer, or a fault.
type Outcome<T> = wasmtime::Result<Result<T, DriverError>>;

impl DriverInstance {
    /// Instantiates `pre` in `store` (made by [`StoreData::into_store`]) and finds its exports.
    pub(crate) async fn start(
        mut store: Store<StoreData>,
        pre: &InstancePre<StoreData>,
        indices: &Arc<Indices>,
        limits: Limits,
        seed: Seed,
    ) -> wasmtime::Result<Self> {
        let instance = pre.instantiate_async(&mut store).await?;
        let operations = indices.operations.load(&mut store, &instance)?;
        let pointer = match &indices.pointer {
            Some(i) => Some(i.load(&mut store, &instance)?),
            None => None,
        };
        let keyboard = match &indices.keyboard {
            Some(i) => Some(i.load(&mut store, &instance)?),
            None => None,
        };
        let display_modes = match &indices.display_modes {
            Some(i) => Some(i.load(&mut store, &instance)?),
            None => None,
        };
        Ok(Self {
            store,
            operations,
            pointer,
            keyboard,
            display_modes,
            limits,
            faulted: None,
            journal: Vec::new(),
            seed,
        })
    }

    /// Arms the CPU deadline, or refuses when an earlier call faulted.
    fn arm(&mut self) -> Result<(), DriverCallError> {
        if let Some(fault) = &self.faulted {
            return Err(DriverCallError::Fault(fault.clone()));
        }
        StoreData::arm_deadline(&mut self.store, &self.limits);
        Ok(())
    }

    /// Turns a guest call's outcome into the answer, remembering a fault.
    fn settle<T>(&mut self, outcome: Outcome<T>) -> Result<T, DriverCallError> {
        match outcome {
            Ok(answer) => answer.map_err(DriverCallError::Driver),
            Err(e) => {
                let fault = format!("{e:#}");
                self.faulted = Some(fault.clone());
                Err(DriverCallError::Fault(fault))
            }
        }
    }

    /// The driver's name and features.
    ///
    /// # Errors
    /// [`DriverCallError::Fault`].
    pub async fn describe(&mut self) -> Result<(String, FeatureSet), DriverCallError> {
        self.arm()?;
        let ops = &self.operations;
        let outcome: Outcome<(String, FeatureSet)> = async {
            let name = ops.call_name(&mut self.store).await?;
            let features = ops.call_features(&mut self.store).await?;
            Ok(Ok((name, features)))
        }
        .await;
        self.settle(outcome)
    }

    /// The display now.
    ///
    /// # Errors
    /// The driver's error, or a fault.
    pub async fn display(&mut self) -> Result<DisplayState, DriverCallError> {
        self.arm()?;
        let outcome = self.operations.call_display(&mut self.store).await;
        self.settle(outcome)
    }

    /// The whole display's pixels.
    ///
    /// # Errors
    /// The driver's error, or a fault (including a capture handle the store does not hold).
    pub async fn capture(&mut self) -> Result<Pixels, DriverCallError> {
        self.arm()?;
        let outcome = self.operations.call_capture(&mut self.store).await;
        let image = self.settle(outcome)?;
        Ok(match image {
            CaptureImage::Drawn(image) => Pixels::Rgb {
                width: image.width,
                height: image.height,
                rgb: image.rgb,
            },
            CaptureImage::Indexed(image) => Pixels::Indexed {
                width: image.width,
                height: image.height,
                palette: image.palette,
                indices: image.indices,
            },
            CaptureImage::Held(handle) => {
                let taken = self.store.data_mut().pixels.take(handle);
                let captured = self.settle(taken.map(Ok))?;
                Pixels::Rgb {
                    width: captured.width,
                    height: captured.height,
                    rgb: captured.rgb,
                }
            }
        })
    }

    /// The driver's own ready checks.
    ///
    /// # Errors
    /// A fault.
    pub async fn ready_checks(&mut self) -> Result<Vec<ReadyCheck>, DriverCallError> {
        self.arm()?;
        let outcome = self.operations.call_ready_checks(&mut self.store).await;
        self.settle(outcome.map(Ok))
    }

    /// Clicks `button` `count` times at `at`, `modifiers` held.
    ///
    /// # Errors
    /// The driver's error, or a fault.
    pub async fn click(
        &mut self,
        at: Point,
        button: Button,
        count: u32,
        modifiers: &[String],
    ) -> Result<(), DriverCallError> {
        self.apply(Input::Click {
            at,
            button,
            count,
            modifiers: modifiers.to_vec(),
        })
        .await
        .map(drop)
    }

    /// Drags `button` through `path` over about `duration_ms`, `modifiers` held.
    ///
    /// # Errors
    /// The driver's error, or a fault.
    pub async fn drag(
        &mut self,
        path: &[Point],
        button: Button,
        duration_ms: u32,
        modifiers: &[String],
    ) -> Result<(), DriverCallError> {
        self.apply(Input::Drag {
            path: path.to_vec(),
            button,
            duration_ms,
            modifiers: modifiers.to_vec(),
        })
        .await
        .map(drop)
    }

    /// Scrolls `amount` notches `direction` at `at`, `modifiers` held.
    ///
    /// # Errors
    /// The driver's error, or a fault.
    pub async fn scroll(
        &mut self,
        at: Point,
        direction: ScrollDirection,
        amount: u32,
        modifiers: &[String],
    ) -> Result<(), DriverCallError> {
        self.apply(Input::Scroll {
            at,
            direction,
            amount,
            modifiers: modifiers.to_vec(),
        })
        .await
        .map(drop)
    }

    /// Types `text` through key events.
    ///
    /// # Errors
    /// The driver's error, or a fault.
    pub async fn type_text(
        &mut self,
        text: &str,
        tap_hold_ms: u32,
        type_delay_ms: u32,
    ) -> Result<(), DriverCallError> {
        self.apply(Input::Type {
            text: text.to_owned(),
            tap_hold_ms,
            type_delay_ms,
        })
        .await
        .map(drop)
    }

    /// Presses the chord `keys`.
    ///
    /// # Errors
    /// The driver's error, or a fault.
    pub async fn press(
        &mut self,
        keys: &[String],
        tap_hold_ms: u32,
    ) -> Result<(), DriverCallError> {
        self.apply(Input::Press {
            keys: keys.to_vec(),
            tap_hold_ms,
        })
        .await
        .map(drop)
    }

    /// The desktop's state as JSON text, when the driver keeps one of its own.
    ///
    /// # Errors
    /// A fault.
    pub async fn export_state(&mut self) -> Result<Option<String>, DriverCallError> {
        self.arm()?;
        let outcome = self.operations.call_export_state(&mut self.store).await;
        self.settle(outcome.map(Ok))
    }

    /// Seeds the desktop's state from JSON text.
    ///
    /// # Errors
    /// The driver's error (`unsupported` for a driver without a state of its own), or a fault.
    pub async fn seed(&mut self, json: &str) -> Result<(), DriverCallError> {
        self.apply(Input::Seed {
            json: json.to_owned(),
        })
        .await
        .map(drop)
    }

    /// Moves the pointer to `at` (pointer group).
    ///
    /// # Errors
    /// [`DriverCallError::NoGroup`], the driver's error, or a fault.
    pub async fn move_to(&mut self, at: Point) -> Result<(), DriverCallError> {
        self.apply(Input::Move { at }).await.map(drop)
    }

    /// Presses (`down`) or releases `button` where the pointer is (pointer group).
    ///
    /// # Errors
    /// [`DriverCallError::NoGroup`], the driver's error, or a fault.
    pub async fn button(&mut self, button: Button, down: bool) -> Result<(), DriverCallError> {
        self.apply(Input::Button { button, down }).await.map(drop)
    }

    /// Where the pointer is (pointer group).
    ///
    /// # Errors
    /// [`DriverCallError::NoGroup`], the driver's error, or a fault.
    pub async fn position(&mut self) -> Result<Point, DriverCallError> {
        let group = self
            .pointer
            .clone()
            .ok_or(DriverCallError::NoGroup("pointer"))?;
        self.arm()?;
        let outcome = group.call_position(&mut self.store).await;
        self.settle(outcome)
    }

    /// Presses (`down`) or releases `keys` (keyboard group).
    ///
    /// # Errors
    /// [`DriverCallError::NoGroup`], the driver's error, or a fault.
    pub async fn keys(&mut self, keys: &[String], down: bool) -> Result<(), DriverCallError> {
        self.apply(Input::Keys {
            keys: keys.to_vec(),
            down,
        })
        .await
        .map(drop)
    }

    /// Sends `input` to the driver and adds it to the journal unless the call faulted (a
    /// driver's refusal is journalled: a deterministic driver refuses it again on replay).
    /// Answers the display for [`Input::SetDisplay`], `None` for the others.
    ///
    /// # Errors
    /// [`DriverCallError::NoGroup`] (nothing journalled), the driver's error, or a fault.
    async fn apply(&mut self, input: Input) -> Result<Option<DisplayState>, DriverCallError> {
        if let Some(group) = input.group() {
            let exported = match group {
                "pointer" => self.pointer.is_some(),
                "keyboard" => self.keyboard.is_some(),
                _ => self.display_modes.is_some(),
            };
            if !exported {
                return Err(DriverCallError::NoGroup(group));
            }
        }
        self.arm()?;
        let store = &mut self.store;
        let ops = &self.operations;
        let outcome: Outcome<Option<DisplayState>> = match &input {
            Input::Click {
                at,
                button,
                count,
                modifiers,
            } => ops
                .call_click(&mut *store, *at, *button, *count, modifiers)
                .await
                .map(|r| r.map(|()| None)),
            Input::Drag {
                path,
                button,
                duration_ms,
                modifiers,
            } => ops
                .call_drag(&mut *store, path, *button, *duration_ms, modifiers)
                .await
                .map(|r| r.map(|()| None)),
            Input::Scroll {
                at,
                direction,
                amount,
                modifiers,
            } => ops
                .call_scroll(&mut *store, *at, *direction, *amount, modifiers)
                .await
                .map(|r| r.map(|()| None)),
            Input::Type {
                text,
                tap_hold_ms,
                type_delay_ms,
            } => ops
                .call_type_text(&mut *store, text, *tap_hold_ms, *type_delay_ms)
                .await
                .map(|r| r.map(|()| None)),
            Input::Press { keys, tap_hold_ms } => ops
                .call_press(&mut *store, keys, *tap_hold_ms)
                .await
                .map(|r| r.map(|()| None)),
            Input::Seed { json } => ops
                .call_seed(&mut *store, json)
                .await
                .map(|r| r.map(|()| None)),
            Input::Move { at } => match &self.pointer {
                Some(group) => group
                    .call_move_to(&mut *store, *at)
                    .await
                    .map(|r| r.map(|()| None)),
                None => unreachable_group(),
            },
            Input::Button { button, down } => match &self.pointer {
                Some(group) if *down => group
                    .call_button_down(&mut *store, *button)
                    .await
                    .map(|r| r.map(|()| None)),
                Some(group) => group
                    .call_button_up(&mut *store, *button)
                    .await
                    .map(|r| r.map(|()| None)),
                None => unreachable_group(),
            },
            Input::Keys { keys, down } => match &self.keyboard {
                Some(group) if *down => group
                    .call_key_down(&mut *store, keys)
                    .await
                    .map(|r| r.map(|()| None)),
                Some(group) => group
                    .call_key_up(&mut *store, keys)
                    .await
                    .map(|r| r.map(|()| None)),
                None => unreachable_group(),
            },
            Input::SetDisplay {
                width,
                height,
                scale,
            } => match &self.display_modes {
                Some(group) => group
                    .call_set_display(&mut *store, *width, *height, *scale)
                    .await
                    .map(|r| r.map(Some)),
                None => unreachable_group(),
            },
        };
        let answer = self.settle(outcome);
        if !matches!(answer, Err(DriverCallError::Fault(_))) {
            self.journal.push(input);
        }
        answer
    }

    /// The input operations this instance was given, in order.
    pub fn journal(&self) -> &[Input] {
        &self.journal
    }

    /// What a fork of this instance starts from: its journal and random seed now.
    pub fn fork_point(&self) -> ForkPoint {
        ForkPoint {
            journal: self.journal.clone(),
            seed: self.seed,
        }
    }

    /// Replays `journal` into this instance, with the driver's sleeps skipped; a driver's
    /// refusal is part of the journal, a fault ends the replay.
    ///
    /// # Errors
    /// [`DriverCallError::Fault`] or [`DriverCallError::NoGroup`] of the input that failed.
    pub(crate) async fn replay(&mut self, journal: &[Input]) -> Result<(), DriverCallError> {
        self.store.data_mut().timing = Timing::skipping();
        let mut outcome = Ok(());
        for input in journal {
            match self.apply(input.clone()).await {
                Ok(_) | Err(DriverCallError::Driver(_)) => {}
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        self.store.data_mut().timing = Timing::default();
        outcome
    }

    /// The display's modes (display-modes group).
    ///
    /// # Errors
    /// [`DriverCallError::NoGroup`], or a fault.
    pub async fn modes(&mut self) -> Result<Vec<(u32, u32)>, DriverCallError> {
        let group = self
            .display_modes
            .clone()
            .ok_or(DriverCallError::NoGroup("display-modes"))?;
        self.arm()?;
        let outcome = group.call_modes(&mut self.store).await;
        self.settle(outcome.map(Ok))
    }

    /// Sets the display (display-modes group).
    ///
    /// # Errors
    /// [`DriverCallError::NoGroup`], the driver's error, or a fault.
    pub async fn set_display(
        &mut self,
        width: u32,
        height: u32,
        scale: f64,
    ) -> Result<DisplayState, DriverCallError> {
        let state = self
            .apply(Input::SetDisplay {
                width,
                height,
                scale,
            })
            .await?;
        state.ok_or_else(|| DriverCallError::Fault("set-display answered no display".into()))
    }
}

/// A group's call when the group is missing: [`DriverInstance::apply`] checks first.
fn unreachable_group<T>() -> Outcome<T> {
    Err(wasmtime::format_err!(
        "the driver does not export the group"
    ))
}
