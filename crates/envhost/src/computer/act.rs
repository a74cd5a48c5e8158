//! One input call (computer.md#queue): its turn in the queue, what the turn can change read
//! again once it has it, the operation (after a move, repeated or held), then the result with
//! others' input since its frame and, when asked, a fresh frame.

use std::sync::Arc;
use std::time::Duration;

use envhost_protocol::ToolResult;
use envhost_protocol::error::{Applied, CodedError};
use envhost_runtime::driver::DriverCallError;
use envhost_runtime::driver::bindings::agentenv::computer::types::{
    Button, Point, ScrollDirection,
};
use serde_json::{Map, Value, json};

use envhost_protocol::computer::errors::Code;

use super::queue::Turn;
use super::result::{frame_data, send};
use super::state::{Computer, KeptFrame, Kind, coded};

/// An input operation of the driver.
#[derive(Clone, Debug)]
pub enum Op {
    /// `click`; `at` none: at the pointer.
    Click {
        at: Option<Point>,
        button: Button,
        count: u32,
        modifiers: Vec<String>,
    },
    /// `drag`.
    Drag {
        path: Vec<Point>,
        button: Button,
        duration_ms: u32,
        modifiers: Vec<String>,
    },
    /// `scroll`; `at` none: at the pointer.
    Scroll {
        at: Option<Point>,
        direction: ScrollDirection,
        amount: u32,
        modifiers: Vec<String>,
    },
    /// `type-text`.
    Type { text: String },
    /// `press`.
    Press { keys: Vec<String> },
    /// The pointer group's `move-to`.
    Move { at: Point },
    /// The pointer group's `button-down` (`down`) or `button-up`.
    Button { button: Button, down: bool },
    /// The keyboard group's `key-down` (`down`) or `key-up`.
    Keys { keys: Vec<String>, down: bool },
}

impl Op {
    /// The operation's name in messages (`@click failed: …`).
    fn name(&self) -> &'static str {
        match self {
            Self::Click { .. } => "click",
            Self::Drag { .. } => "drag",
            Self::Scroll { .. } => "scroll",
            Self::Type { .. } => "type_text",
            Self::Press { .. } => "press",
            Self::Move { .. } => "pointer_move",
            Self::Button { down: true, .. } => "pointer_down",
            Self::Button { down: false, .. } => "pointer_up",
            Self::Keys { down: true, .. } => "key_down",
            Self::Keys { down: false, .. } => "key_up",
        }
    }

    /// Whether the operation acts at the pointer (its point is read in the turn).
    fn at_pointer(&self) -> bool {
        matches!(
            self,
            Self::Click { at: None, .. } | Self::Scroll { at: None, .. }
        )
    }
}

/// What happens after the input is delivered, inside the turn.
pub enum Then {
    /// Nothing.
    Nothing,
    /// The caller holds these keys now.
    Hold(Vec<String>),
    /// The caller no longer holds these keys.
    Release(Vec<String>),
}

/// One input call.
pub struct Act<'a> {
    /// Whose call it is.
    pub identity: &'a str,
    /// The frame the call refers to (for others' input since it).
    pub frame: Option<Arc<KeptFrame>>,
    /// Whether the point was mapped from `frame` (checked again in the turn).
    pub mapped: bool,
    /// Whether to capture a frame after the input.
    pub screenshot: bool,
    /// The summary so far.
    pub summary: String,
    /// How many times to run the operation.
    pub repeat: u32,
    /// A move before the operation.
    pub move_to: Option<Point>,
    /// Keys to release after holding them this many ms.
    pub hold: Option<(u32, Vec<String>)>,
    /// Bookkeeping once the input is delivered.
    pub then: Then,
}

/// Runs `op` on `computer` as `act` says.
///
/// # Errors
/// A coded error; `applied: unknown` once any input of the call was sent.
pub async fn act(computer: &Computer, act: Act<'_>, op: Op) -> Result<ToolResult, CodedError> {
    let settings = computer.settings();
    let turn = computer.queue.turn(computer.queue_wait()).await?;
    if let (true, Some(frame)) = (act.mapped, &act.frame) {
        frame.check_current(&computer.display_now().await?)?;
    }
    let mut summary = act.summary;
    let mut op = op;
    if op.at_pointer() {
        let at = computer
            .instance()
            .await
            .position()
            .await
            .map_err(|e| coded("pointer_position", Kind::Other, e))?;
        summary = format!("{summary} at the pointer, screen ({}, {})", at.x, at.y);
        match &mut op {
            Op::Click { at: to, .. } | Op::Scroll { at: to, .. } => *to = Some(at),
            _ => {}
        }
    }
    let others = act.frame.as_ref().map_or(0, |f| {
        computer.queue.others_since(&f.image.inputs, act.identity)
    });
    let mut sent = false;
    let outcome = deliver(
        computer,
        &op,
        &act.move_to,
        act.repeat,
        &settings,
        &mut sent,
    )
    .await;
    let (outcome, turn) = match (outcome, act.hold) {
        (Ok(()), Some((ms, keys))) => hold_then_release(computer, ms, keys, turn).await,
        (outcome, _) => (outcome, Some(turn)),
    };
    if sent {
        computer.queue.delivered(act.identity);
    }
    if let Err(mut error) = outcome {
        if sent {
            error.applied = Applied::Unknown;
        }
        return Err(error);
    }
    match act.then {
        Then::Nothing => {}
        Then::Hold(keys) => {
            let mut held = computer.held();
            let mine = held.entry(act.identity.to_owned()).or_default();
            for key in keys {
                if !mine.contains(&key) {
                    mine.push(key);
                }
            }
            drop(held);
            computer.arm_release(act.identity);
        }
        Then::Release(keys) => {
            let mut held = computer.held();
            if let Some(mine) = held.get_mut(act.identity) {
                mine.retain(|k| !keys.contains(k));
                if mine.is_empty() {
                    held.remove(act.identity);
                    drop(held);
                    computer.disarm_release(act.identity);
                }
            }
        }
    }
    drop(turn);
    let mut result = Map::new();
    result.insert("summary".into(), Value::Null);
    result.insert("applied".into(), json!("yes"));
    result.insert("delivery".into(), json!("foreground"));
    result.insert("others_since_frame".into(), json!(others));
    if !act.screenshot {
        result.insert("summary".into(), json!(summary));
        return Ok(send(result, None));
    }
    match computer.capture(act.identity).await {
        Ok(frame) => {
            result.insert(
                "summary".into(),
                json!(format!("{summary}, then captured {}", frame.id)),
            );
            result.insert("frame".into(), frame_data(&frame));
            Ok(send(result, Some(png_block(&frame))))
        }
        Err(e) => {
            let failed = format!(
                "{summary}; the screenshot after it failed ({}: {})",
                e.code, e.message
            );
            result.insert("summary".into(), json!(failed));
            Ok(send(result, None))
        }
    }
}

/// A frame's PNG as an image block: base64 and its MIME type.
pub fn png_block(frame: &KeptFrame) -> (String, &'static str) {
    use base64::Engine as _;
    (
        base64::engine::general_purpose::STANDARD.encode(&frame.image.png),
        "image/png",
    )
}

/// The operation, after the optional move, `repeat` times; `sent` is set once any input was.
async fn deliver(
    computer: &Computer,
    op: &Op,
    move_to: &Option<Point>,
    repeat: u32,
    settings: &envhost_protocol::computer::settings::Settings,
    sent: &mut bool,
) -> Result<(), CodedError> {
    let failed = |e: DriverCallError| coded(op.name(), Kind::Input, e);
    let mut instance = computer.instance().await;
    if let Some(at) = move_to {
        instance
            .move_to(*at)
            .await
            .map_err(|e| coded("pointer_move", Kind::Input, e))?;
        *sent = true;
    }
    for _ in 0..repeat {
        match op {
            Op::Click {
                at,
                button,
                count,
                modifiers,
            } => {
                let at = at.unwrap_or(Point { x: 0, y: 0 });
                instance.click(at, *button, *count, modifiers).await
            }
            Op::Drag {
                path,
                button,
                duration_ms,
                modifiers,
            } => instance.drag(path, *button, *duration_ms, modifiers).await,
            Op::Scroll {
                at,
                direction,
                amount,
                modifiers,
            } => {
                let at = at.unwrap_or(Point { x: 0, y: 0 });
                instance.scroll(at, *direction, *amount, modifiers).await
            }
            Op::Type { text } => {
                instance
                    .type_text(text, settings.tap_hold_ms, settings.type_delay_ms)
                    .await
            }
            Op::Press { keys } => instance.press(keys, settings.tap_hold_ms).await,
            Op::Move { at } => instance.move_to(*at).await,
            Op::Button { button, down } => instance.button(*button, *down).await,
            Op::Keys { keys, down } => instance.keys(keys, *down).await,
        }
        .map_err(failed)?;
        *sent = true;
    }
    Ok(())
}

/// Keeps `keys` down `ms` milliseconds, then releases them in reverse order, all in `turn`,
/// which it gives back (none when the release task failed). The wait and the release run in a
/// task of their own, which owns the turn: a caller that goes away mid-hold still has its keys
/// released before the next input.
async fn hold_then_release(
    computer: &Computer,
    ms: u32,
    keys: Vec<String>,
    turn: Turn,
) -> (Result<(), CodedError>, Option<Turn>) {
    let Some(computer) = computer.shared() else {
        return (
            Err(Code::Internal.error("the computer is gone")),
            Some(turn),
        );
    };
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
        let reversed: Vec<String> = keys.into_iter().rev().collect();
        let released = computer
            .instance()
            .await
            .keys(&reversed, false)
            .await
            .map_err(|e| coded("key_up", Kind::Input, e));
        (released, turn)
    });
    match release.await {
        Ok((released, turn)) => (released, Some(turn)),
        Err(e) => (
            Err(Code::DeliveryFailed.error(format!("@key_up failed: {e}"))),
            None,
        ),
    }
}
