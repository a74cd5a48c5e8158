//! The `computer_*` tools (computer.md#tools): each call's arguments checked in the
//! reference's order, mapped from its frame and space to the screen, and run through the
//! driver; every answer a structured result whose summary is its text block.

use std::sync::Arc;
use std::time::Duration;

use envhost_protocol::ToolResult;
use envhost_protocol::computer::errors::Code;
use envhost_protocol::computer::frames::Source;
use envhost_protocol::computer::keys::{Supported, chord};
use envhost_protocol::computer::pyfmt::g;
use envhost_protocol::computer::spaces::{Space, check_space, frame_point, frame_region};
use envhost_protocol::error::CodedError;
use envhost_runtime::driver::bindings::agentenv::computer::types::{
    Button, Point, ScrollDirection,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value, json};

use super::act::{Act, Op, Then, act, png_block};
use super::image;
use super::result::{frame_data, send};
use super::shape::button_name;
use super::state::{Computer, KeptFrame, Kind, Shot, coded};

/// The tools every computer has, in the reference's order.
pub const REQUIRED: [&str; 7] = [
    "computer_screenshot",
    "computer_click",
    "computer_drag",
    "computer_scroll",
    "computer_type",
    "computer_key",
    "computer_wait",
];

/// The pointer group's tools.
pub const POINTER: [&str; 5] = [
    "computer_pointer_move",
    "computer_pointer_down",
    "computer_pointer_up",
    "computer_pointer_position",
    "computer_pointer_list",
];

/// The keyboard group's tools.
pub const KEYBOARD: [&str; 2] = ["computer_keyboard_down", "computer_keyboard_up"];

/// The JPEG quality when a screenshot names none.
const JPEG_QUALITY: u8 = 85;

/// Calls tool `name` of `computer` with `arguments` for caller `identity`.
pub async fn call(
    computer: &Computer,
    name: &str,
    arguments: Map<String, Value>,
    identity: &str,
) -> ToolResult {
    let groups = computer.driver().groups();
    let known = REQUIRED.contains(&name)
        || (groups.pointer && POINTER.contains(&name))
        || (groups.keyboard && KEYBOARD.contains(&name));
    if !known {
        return ToolResult::text_error(format!("Unknown tool: {name}"));
    }
    let tools = Tools {
        computer,
        identity,
        arguments,
    };
    let answer = match name {
        "computer_screenshot" => tools.screenshot().await,
        "computer_click" => tools.click().await,
        "computer_drag" => tools.drag().await,
        "computer_scroll" => tools.scroll().await,
        "computer_type" => tools.type_text().await,
        "computer_key" => tools.key().await,
        "computer_wait" => tools.wait().await,
        "computer_pointer_move" => tools.pointer_move().await,
        "computer_pointer_down" => tools.pointer_button(true).await,
        "computer_pointer_up" => tools.pointer_button(false).await,
        "computer_pointer_position" => tools.pointer_position().await,
        "computer_pointer_list" => Ok(pointer_list()),
        "computer_keyboard_down" => tools.keyboard_down().await,
        _ => tools.keyboard_up().await,
    };
    answer.unwrap_or_else(ToolResult::coded)
}

/// One tool call.
struct Tools<'a> {
    computer: &'a Computer,
    identity: &'a str,
    arguments: Map<String, Value>,
}

/// An integer argument, also when written with a zero fraction (`1000.0`).
fn int(value: Option<&Value>) -> Result<Option<i64>, CodedError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Some(f as i64)),
                _ => Err(invalid(format!("{n} is not an integer"))),
            },
        },
        Some(other) => Err(invalid(format!("{other} is not an integer"))),
    }
}

fn invalid(message: impl Into<String>) -> CodedError {
    Code::InvalidArgument.error(message)
}

/// `name` from `low` to `high`, or `invalid_argument` in the reference's words.
fn check_range(name: &str, value: i64, low: i64, high: i64) -> Result<(), CodedError> {
    if (low..=high).contains(&value) {
        Ok(())
    } else {
        Err(invalid(format!(
            "{name} is from {low} to {high} on this computer, got {value}"
        )))
    }
}

fn pointer_list() -> ToolResult {
    let mut result = Map::new();
    result.insert("summary".into(), json!("1 pointer: default (foreground)"));
    result.insert(
        "pointers".into(),
        json!([{"id": "default", "kind": "foreground", "label": "The computer's pointer", "default": true}]),
    );
    send(result, None)
}

/// A point of a call, mapped: the frame, the screen pixel (none: at the pointer), the phrase
/// for the summary, and whether it was mapped from the frame.
struct Aim {
    frame: Option<Arc<KeptFrame>>,
    screen: Option<Point>,
    phrase: String,
    mapped: bool,
}

impl Tools<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.arguments.get(key).filter(|v| !v.is_null())
    }

    fn arg<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, CodedError> {
        self.get(key)
            .map(|v| serde_json::from_value(v.clone()).map_err(|e| invalid(format!("{key}: {e}"))))
            .transpose()
    }

    fn number(&self, key: &str) -> Result<Option<f64>, CodedError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(other) => Err(invalid(format!("{key} is a number, got {other}"))),
        }
    }

    fn flag(&self, key: &str) -> Result<bool, CodedError> {
        Ok(self.arg::<bool>(key)?.unwrap_or(false))
    }

    fn supported_keys(&self) -> Supported {
        match &self.computer.driver().features().keys {
            None => Supported::All,
            Some(keys) => Supported::Only(keys.clone()),
        }
    }

    fn space(&self) -> Result<(Space, i64), CodedError> {
        let settings = self.computer.settings();
        let space: Option<String> = self.arg("space")?;
        check_space(
            space.as_deref(),
            int(self.get("norm_scale"))?,
            (settings.default_space, settings.default_norm_scale),
        )
    }

    fn button(&self) -> Result<Button, CodedError> {
        let name: Option<String> = self.arg("button")?;
        let name = name.unwrap_or_else(|| "left".to_owned());
        let buttons = &self.computer.driver().features().buttons;
        buttons
            .iter()
            .copied()
            .find(|b| button_name(*b) == name)
            .ok_or_else(|| {
                let names: Vec<&str> = buttons.iter().map(|b| button_name(*b)).collect();
                Code::Unsupported.error(format!(
                    "this computer has no {name} button; it has {}",
                    names.join(", ")
                ))
            })
    }

    fn modifiers(&self) -> Result<Vec<String>, CodedError> {
        match self.get("modifiers") {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) if items.is_empty() => Ok(Vec::new()),
            Some(Value::Array(_)) => {
                let keys: Vec<String> = self.arg("modifiers")?.unwrap_or_default();
                chord(&keys, &self.supported_keys())
            }
            Some(_) => Err(invalid("modifiers is a list of W3C key names")),
        }
    }

    fn frame(&self, frame_id: Option<&str>) -> Result<Arc<KeptFrame>, CodedError> {
        self.computer.frames().get(frame_id, self.identity)
    }

    fn latest(&self) -> Option<Arc<KeptFrame>> {
        self.computer.frames().latest(self.identity)
    }

    /// The point of `x` and `y`: at the pointer when both are absent, the pointer group is
    /// there and no frame is named.
    async fn aim(&self, x: Option<f64>, y: Option<f64>) -> Result<Aim, CodedError> {
        let frame_id: Option<String> = self.arg("frame_id")?;
        let pointer = self.computer.driver().groups().pointer;
        if x.is_none() && y.is_none() && pointer && frame_id.is_none() {
            return Ok(Aim {
                frame: self.latest(),
                screen: None,
                phrase: String::new(),
                mapped: false,
            });
        }
        let (Some(x), Some(y)) = (x, y) else {
            let or = if pointer {
                ", or neither to act at the pointer"
            } else {
                ""
            };
            return Err(invalid(format!("give x and y{or}")));
        };
        let frame = self.frame(frame_id.as_deref())?;
        frame.check_current(&self.computer.display_now().await?)?;
        let (space, scale) = self.space()?;
        let (fx, fy) = frame_point(&frame, x, y, space, scale)?;
        let (sx, sy) = frame.to_screen(fx, fy);
        let in_space = if space == Space::Norm {
            format!(" (norm {scale})")
        } else {
            String::new()
        };
        let phrase = format!(" at ({}, {}){in_space} in {}", g(x), g(y), frame.id);
        Ok(Aim {
            frame: Some(frame),
            screen: Some(Point {
                x: sx as i32,
                y: sy as i32,
            }),
            phrase,
            mapped: true,
        })
    }

    /// An input call of this tool's caller, with its `screenshot` argument.
    fn input<'b>(
        &'b self,
        frame: Option<Arc<KeptFrame>>,
        mapped: bool,
        summary: String,
    ) -> Result<Act<'b>, CodedError> {
        Ok(Act {
            identity: self.identity,
            frame,
            mapped,
            screenshot: self.flag("screenshot")?,
            summary,
            repeat: 1,
            move_to: None,
            hold: None,
            then: Then::Nothing,
        })
    }

    async fn screenshot(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let format: String = self.arg("format")?.unwrap_or_else(|| "png".to_owned());
        if format != "png" && format != "jpeg" {
            return Err(invalid(format!(
                "format is 'png' or 'jpeg', got '{format}'"
            )));
        }
        let quality = int(self.get("quality"))?;
        if let Some(q) = quality
            && !(format == "jpeg" && (1..=95).contains(&q))
        {
            return Err(invalid("quality is for format=jpeg, from 1 to 95"));
        }
        let frame_id: Option<String> = self.arg("frame_id")?;
        let region: Option<Vec<Number>> = self.arg("region")?;
        let (frame, summary) = match region {
            None => {
                if frame_id.is_some() {
                    return Err(invalid(
                        "frame_id names the frame a region crops; give a region too",
                    ));
                }
                let frame = self.computer.capture(self.identity).await?;
                let d = frame.display;
                let scale = if d.scale == 1.0 {
                    String::new()
                } else {
                    format!(" at scale {}", g(d.scale))
                };
                let summary = format!(
                    "Captured {}: {}×{} of the {}×{}{scale} display",
                    frame.id,
                    frame.width(),
                    frame.height(),
                    d.width,
                    d.height
                );
                (frame, summary)
            }
            Some(region) => {
                let parent = self.frame(frame_id.as_deref())?;
                parent.check_current(&self.computer.display_now().await?)?;
                let (space, scale) = self.space()?;
                let (x0, y0, x1, y1) = frame_region(&parent, &region, space, scale)?;
                let png = image::crop(&parent.image.png, (x0, y0, x1, y1))
                    .map_err(|e| Code::Internal.error(format!("cropping {}: {e}", parent.id)))?;
                let shot = Shot {
                    png,
                    inputs: parent.image.inputs.clone(),
                };
                let source = Source::Crop {
                    parent: &parent,
                    origin: (x0, y0),
                };
                let frame =
                    self.computer
                        .frames()
                        .add(source, (x1 - x0, y1 - y0), shot, self.identity);
                let summary = format!(
                    "Cropped {}: {}×{} of {} at ({x0}, {y0})",
                    frame.id,
                    frame.width(),
                    frame.height(),
                    parent.id
                );
                (frame, summary)
            }
        };
        let image = if format == "jpeg" {
            let quality = quality.map_or(JPEG_QUALITY, |q| q as u8);
            let jpeg = image::jpeg(&frame.image.png, quality)
                .map_err(|e| Code::Internal.error(e.to_string()))?;
            use base64::Engine as _;
            (
                base64::engine::general_purpose::STANDARD.encode(jpeg),
                "image/jpeg",
            )
        } else {
            png_block(&frame)
        };
        let Value::Object(mut result) = frame_data(&frame) else {
            unreachable!("frame data is an object")
        };
        result.insert("summary".into(), json!(summary));
        Ok(send(result, Some(image)))
    }

    async fn click(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let button = self.button()?;
        let count = int(self.get("count"))?.unwrap_or(1);
        let max = i64::from(self.computer.driver().features().max_click_count);
        check_range("count", count, 1, max)?;
        let modifiers = self.modifiers()?;
        let aim = self.aim(self.number("x")?, self.number("y")?).await?;
        let times = if count > 1 {
            format!(" ×{count}")
        } else {
            String::new()
        };
        let summary = format!("Clicked {}{times}{}", button_name(button), aim.phrase);
        let call = self.input(aim.frame, aim.mapped, summary)?;
        let op = Op::Click {
            at: aim.screen,
            button,
            count: count as u32,
            modifiers,
        };
        act(self.computer, call, op).await
    }

    async fn drag(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let button = self.button()?;
        let features = self.computer.driver().features();
        let max_points = features.max_drag_points;
        let path = match self.get("path") {
            Some(Value::Array(points)) if (2..=max_points as usize).contains(&points.len()) => {
                points.clone()
            }
            _ => {
                return Err(invalid(format!(
                    "path has from 2 to {max_points} points on this computer"
                )));
            }
        };
        let duration = match int(self.get("duration_ms"))? {
            Some(ms) => ms,
            None => i64::from(self.computer.settings().drag_duration_ms),
        };
        check_range(
            "duration_ms",
            duration,
            0,
            i64::from(features.max_duration_ms),
        )?;
        let modifiers = self.modifiers()?;
        let frame_id: Option<String> = self.arg("frame_id")?;
        let frame = self.frame(frame_id.as_deref())?;
        frame.check_current(&self.computer.display_now().await?)?;
        let (space, scale) = self.space()?;
        let mut screen = Vec::with_capacity(path.len());
        for point in &path {
            let xy = match point {
                Value::Array(xy) if xy.len() == 2 => (xy[0].as_f64(), xy[1].as_f64()),
                _ => (None, None),
            };
            let (Some(x), Some(y)) = xy else {
                return Err(invalid("each path point is [x, y]"));
            };
            let (fx, fy) = frame_point(&frame, x, y, space, scale)?;
            let (sx, sy) = frame.to_screen(fx, fy);
            screen.push(Point {
                x: sx as i32,
                y: sy as i32,
            });
        }
        let summary = format!(
            "Dragged {} through {} points of {} in {duration} ms",
            button_name(button),
            path.len(),
            frame.id
        );
        let call = self.input(Some(frame), true, summary)?;
        let op = Op::Drag {
            path: screen,
            button,
            duration_ms: duration as u32,
            modifiers,
        };
        act(self.computer, call, op).await
    }

    async fn scroll(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let direction: Option<String> = self.arg("direction")?;
        let (direction, name) = match direction.as_deref() {
            Some("up") => (ScrollDirection::Up, "up"),
            Some("down") => (ScrollDirection::Down, "down"),
            Some("left") => (ScrollDirection::Left, "left"),
            Some("right") => (ScrollDirection::Right, "right"),
            _ => return Err(invalid("direction is up, down, left or right")),
        };
        let amount = int(self.get("amount"))?.unwrap_or(3);
        let max = i64::from(self.computer.driver().features().max_scroll_amount);
        check_range("amount", amount, 1, max)?;
        let modifiers = self.modifiers()?;
        let aim = self.aim(self.number("x")?, self.number("y")?).await?;
        let summary = format!("Scrolled {name} {amount}{}", aim.phrase);
        let call = self.input(aim.frame, aim.mapped, summary)?;
        let op = Op::Scroll {
            at: aim.screen,
            direction,
            amount: amount as u32,
            modifiers,
        };
        act(self.computer, call, op).await
    }

    async fn type_text(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let text: String = self.arg("text")?.unwrap_or_default();
        if text.is_empty() {
            return Err(invalid("text is empty"));
        }
        let length = text.chars().count();
        let max = self.computer.driver().features().max_text_length as usize;
        if length > max {
            return Err(invalid(format!(
                "text is at most {max} characters on this computer, got {length}"
            )));
        }
        let mut control: Vec<String> = text
            .chars()
            .filter(|c| *c != '\n' && *c != '\t' && c.is_control())
            .map(|c| format!("'U+{:04X}'", c as u32))
            .collect();
        control.sort();
        control.dedup();
        if !control.is_empty() {
            return Err(invalid(format!(
                "text has control characters [{}]; press keys with computer_key",
                control.join(", ")
            )));
        }
        let call = self.input(self.latest(), false, format!("Typed {length} characters"))?;
        act(self.computer, call, Op::Type { text }).await
    }

    async fn key(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let keys = self.keys_argument()?;
        let names = chord(&keys, &self.supported_keys())?;
        let repeat = int(self.get("repeat"))?.unwrap_or(1);
        let max = i64::from(self.computer.driver().features().max_key_repeat);
        check_range("repeat", repeat, 1, max)?;
        let times = if repeat > 1 {
            format!(" ×{repeat}")
        } else {
            String::new()
        };
        let summary = format!("Pressed {}{times}", names.join("+"));
        let mut call = self.input(self.latest(), false, summary)?;
        call.repeat = repeat as u32;
        act(self.computer, call, Op::Press { keys: names }).await
    }

    /// `keys` as a list of strings, or `invalid_argument` as the reference words it.
    fn keys_argument(&self) -> Result<Vec<String>, CodedError> {
        self.arg::<Vec<String>>("keys")
            .ok()
            .flatten()
            .ok_or_else(|| {
                invalid("keys is a non-empty list of W3C key values, such as ['Control', 's']")
            })
    }

    async fn wait(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let ms = int(self.get("ms"))?.unwrap_or(1000);
        let max = i64::from(self.computer.driver().features().max_wait_ms);
        check_range("ms", ms, 0, max)?;
        tokio::time::sleep(Duration::from_millis(ms as u64)).await;
        let mut result = Map::new();
        let summary = format!("Waited {ms} ms");
        if !self.flag("screenshot")? {
            result.insert("summary".into(), json!(summary));
            result.insert("waited_ms".into(), json!(ms));
            return Ok(send(result, None));
        }
        let frame = self.computer.capture(self.identity).await?;
        result.insert(
            "summary".into(),
            json!(format!("{summary}, then captured {}", frame.id)),
        );
        result.insert("waited_ms".into(), json!(ms));
        result.insert("frame".into(), frame_data(&frame));
        Ok(send(result, Some(png_block(&frame))))
    }

    async fn pointer_move(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let (Some(x), Some(y)) = (self.number("x")?, self.number("y")?) else {
            return Err(invalid("give x and y"));
        };
        let aim = self.aim(Some(x), Some(y)).await?;
        let at = aim.screen.unwrap_or(Point { x: 0, y: 0 });
        let summary = format!("Moved the pointer{}", aim.phrase);
        let call = self.input(aim.frame, aim.mapped, summary)?;
        act(self.computer, call, Op::Move { at }).await
    }

    async fn pointer_button(&self, down: bool) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let button = self.button()?;
        let (x, y) = (self.number("x")?, self.number("y")?);
        if x.is_none() != y.is_none() {
            return Err(invalid("give both x and y, or neither"));
        }
        let verb = if down { "Pressed" } else { "Released" };
        let op = Op::Button { button, down };
        if x.is_none() {
            let summary = format!("{verb} {}", button_name(button));
            let call = self.input(self.latest(), false, summary)?;
            return act(self.computer, call, op).await;
        }
        let aim = self.aim(x, y).await?;
        let summary = format!("{verb} {}{}", button_name(button), aim.phrase);
        let mut call = self.input(aim.frame, aim.mapped, summary)?;
        call.move_to = aim.screen;
        act(self.computer, call, op).await
    }

    async fn pointer_position(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let at = self
            .computer
            .instance()
            .await
            .position()
            .await
            .map_err(|e| coded("pointer_position", Kind::Other, e))?;
        let frame_id: Option<String> = self.arg("frame_id")?;
        let frame = match frame_id {
            Some(id) => Some(self.frame(Some(&id))?),
            None => self.latest(),
        };
        let mut result = Map::new();
        let screen = json!({"x": at.x, "y": at.y});
        let Some(frame) = frame else {
            result.insert(
                "summary".into(),
                json!(format!("The pointer is at screen ({}, {})", at.x, at.y)),
            );
            result.insert("screen".into(), screen);
            return Ok(send(result, None));
        };
        let (fx, fy) = frame.from_screen(f64::from(at.x), f64::from(at.y));
        let inside = frame.contains(fx as f64, fy as f64);
        let place = if inside {
            format!("({fx}, {fy}) in {}", frame.id)
        } else {
            format!("outside {}, at ({fx}, {fy}) in its pixels", frame.id)
        };
        result.insert(
            "summary".into(),
            json!(format!(
                "The pointer is {place}, screen ({}, {})",
                at.x, at.y
            )),
        );
        result.insert("screen".into(), screen);
        result.insert("frame_id".into(), json!(frame.id));
        result.insert("x".into(), json!(fx));
        result.insert("y".into(), json!(fy));
        result.insert("inside_frame".into(), json!(inside));
        Ok(send(result, None))
    }

    async fn keyboard_down(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let keys = self.keys_argument()?;
        let names = chord(&keys, &self.supported_keys())?;
        let max_hold = i64::from(self.computer.settings().max_hold_ms);
        let hold = int(self.get("hold_ms"))?;
        if let Some(ms) = hold
            && !(0..=max_hold).contains(&ms)
        {
            return Err(invalid(format!(
                "hold_ms is from 0 to {max_hold}, got {ms}"
            )));
        }
        let joined = names.join("+");
        let call = match hold {
            Some(ms) => {
                let mut call =
                    self.input(self.latest(), false, format!("Held {joined} for {ms} ms"))?;
                call.hold = Some((ms as u32, names.clone()));
                call
            }
            None => {
                let mut call =
                    self.input(self.latest(), false, format!("Pressed and held {joined}"))?;
                call.then = Then::Hold(names.clone());
                call
            }
        };
        act(
            self.computer,
            call,
            Op::Keys {
                keys: names,
                down: true,
            },
        )
        .await
    }

    async fn keyboard_up(&self) -> Result<ToolResult, CodedError> {
        self.computer.ensure_ready().await?;
        let names = match self.get("keys") {
            Some(_) => chord(&self.keys_argument()?, &self.supported_keys())?,
            None => self
                .computer
                .held()
                .get(self.identity)
                .cloned()
                .unwrap_or_default(),
        };
        if names.is_empty() {
            return Err(invalid("you are holding no keys"));
        }
        let mut call = self.input(
            self.latest(),
            false,
            format!("Released {}", names.join("+")),
        )?;
        call.then = Then::Release(names.clone());
        act(
            self.computer,
            call,
            Op::Keys {
                keys: names,
                down: false,
            },
        )
        .await
    }
}
