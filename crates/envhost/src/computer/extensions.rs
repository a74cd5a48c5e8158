//! The extensions of a computer that are not tools (computer.md#serving): `computer-ready`,
//! `computer-display`, `computer-spaces` and `computer-keyboard`. Each method takes its request
//! as a JSON object, checks it as the reference's framework does, and answers what the
//! reference answers.

use envhost_protocol::computer::errors::Code;
use envhost_protocol::computer::frames::Display;
use envhost_protocol::computer::spaces::{Space, check_space};
use envhost_protocol::error::{CodedError, INVALID_PARAMS};
use serde_json::{Map, Value, json};

use super::Computer;

/// `computer-ready/v1`.
pub const READY: &str = "urn:agentenv:computer-ready/v1";
/// `computer-display/v1`.
pub const DISPLAY: &str = "urn:agentenv:computer-display/v1";
/// `computer-spaces/v1`.
pub const SPACES: &str = "urn:agentenv:computer-spaces/v1";
/// `computer-keyboard/v1` (the keyboard group).
pub const KEYBOARD: &str = "urn:agentenv:computer-keyboard/v1";
/// `computer-exec/v1` (commands granted).
pub const EXEC: &str = "urn:agentenv:computer-exec/v1";

/// Refuses keys of `body` outside `allowed`, as the reference's framework does.
///
/// # Errors
/// `invalid_params` "got an unexpected keyword argument 'KEY'".
pub fn only(body: &Map<String, Value>, allowed: &[&str]) -> Result<(), CodedError> {
    match body.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(CodedError::new(
            INVALID_PARAMS,
            format!("got an unexpected keyword argument '{key}'"),
        )),
        None => Ok(()),
    }
}

/// An optional integer of a request.
fn integer(body: &Map<String, Value>, key: &str) -> Result<Option<i64>, CodedError> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value.as_i64().map(Some).ok_or_else(|| {
            Code::InvalidArgument.error(format!("{key} is an integer, got {value}"))
        }),
    }
}

/// `computer-ready status`: `{"ready", "checks": [{"name", "ok", "detail"}]}`, the checks run
/// now (passing them all latches readiness).
pub async fn ready_status(computer: &Computer) -> Value {
    let checks = computer.ready_checks().await;
    let ready = checks.iter().all(|c| c.ok);
    json!({"ready": ready, "checks": checks})
}

/// `display` as `computer-display` answers it: `{"width", "height", "scale", "modes": [[w,
/// h], ...]}`.
fn display_answer(display: &Display, modes: &[(u32, u32)]) -> Value {
    let modes: Vec<Value> = modes.iter().map(|(w, h)| json!([w, h])).collect();
    json!({"width": display.width, "height": display.height, "scale": display.scale, "modes": modes})
}

/// `computer-display get`: the display now, with `modes`.
///
/// # Errors
/// `device_unavailable` (503) with the driver's message and hint when it cannot say.
pub async fn display_get(computer: &Computer, modes: &[(u32, u32)]) -> Result<Value, CodedError> {
    match computer.display_now().await {
        Ok(display) => Ok(display_answer(&display, modes)),
        Err(e) => {
            let mut unavailable = Code::DeviceUnavailable.error(e.message);
            unavailable.hint = e.hint;
            Err(unavailable)
        }
    }
}

/// `computer-display set {"width", "height", "scale"?}`: one of `modes`, set in a queue turn
/// (computer.md#display); answers as [`display_get`].
///
/// # Errors
/// `invalid_params` for another key or a missing size; `invalid_argument` for a value of the
/// wrong type, a size not among `modes` or a scale that is not positive; `input_busy`; the
/// driver's error.
pub async fn display_set(
    computer: &Computer,
    modes: &[(u32, u32)],
    body: &Map<String, Value>,
) -> Result<Value, CodedError> {
    only(body, &["width", "height", "scale"])?;
    let required = |key: &str| {
        integer(body, key)?.ok_or_else(|| {
            CodedError::new(
                INVALID_PARAMS,
                format!("missing a required argument: '{key}'"),
            )
        })
    };
    let (width, height) = (required("width")?, required("height")?);
    let scale = match body.get("scale") {
        None | Some(Value::Null) => None,
        Some(value) => Some(value.as_f64().ok_or_else(|| {
            Code::InvalidArgument.error(format!("scale is a number, got {value}"))
        })?),
    };
    let display = computer.set_display(width, height, scale, modes).await?;
    Ok(display_answer(&display, modes))
}

/// `computer-spaces get`: `{"default_space", "default_norm_scale"}`.
pub fn spaces_get(computer: &Computer) -> Value {
    let settings = computer.settings();
    json!({
        "default_space": settings.default_space.as_str(),
        "default_norm_scale": settings.default_norm_scale,
    })
}

/// `computer-spaces set {"default_space", "default_norm_scale"?}`: the default space (and norm
/// scale) from now on, which the point tools' descriptions then name; answers as
/// [`spaces_get`].
///
/// # Errors
/// `invalid_params` for another key or no `default_space`; `invalid_argument` for a space or
/// scale the contract refuses.
pub fn spaces_set(computer: &Computer, body: &Map<String, Value>) -> Result<Value, CodedError> {
    only(body, &["default_space", "default_norm_scale"])?;
    let Some(space) = body.get("default_space") else {
        return Err(CodedError::new(
            INVALID_PARAMS,
            "missing a required argument: 'default_space'",
        ));
    };
    let space = space.as_str().unwrap_or_default().to_owned();
    let settings = computer.settings();
    let (space, scale) = check_space(
        Some(&space),
        integer(body, "default_norm_scale")?,
        (Space::Frame, settings.default_norm_scale),
    )?;
    computer.update_settings(|s| {
        s.default_space = space;
        s.default_norm_scale = scale;
    });
    Ok(spaces_get(computer))
}

/// `computer-keyboard get`: `{"tap_hold_ms", "type_delay_ms", "layout", "max_hold_ms"}`.
pub fn keyboard_get(computer: &Computer) -> Value {
    let s = computer.settings();
    json!({
        "tap_hold_ms": s.tap_hold_ms,
        "type_delay_ms": s.type_delay_ms,
        "layout": s.layout,
        "max_hold_ms": s.max_hold_ms,
    })
}

/// `computer-keyboard set {"tap_hold_ms"?, "type_delay_ms"?, "layout"?, "max_hold_ms"?}`: the
/// values given from now on (ms: tap hold and typing delay 0 to 1,000, maximum hold 0 to
/// 600,000); answers as [`keyboard_get`].
///
/// # Errors
/// `invalid_params` for another key; `invalid_argument` for a value out of range;
/// `unsupported` for a layout other than the computer's.
pub fn keyboard_set(computer: &Computer, body: &Map<String, Value>) -> Result<Value, CodedError> {
    only(
        body,
        &["tap_hold_ms", "type_delay_ms", "layout", "max_hold_ms"],
    )?;
    let ranged = |key: &str, max: i64| -> Result<Option<u32>, CodedError> {
        match integer(body, key)? {
            None => Ok(None),
            Some(v) if (0..=max).contains(&v) => Ok(Some(v as u32)),
            Some(v) => {
                Err(Code::InvalidArgument.error(format!("{key} is from 0 to {max}, got {v}")))
            }
        }
    };
    let tap = ranged("tap_hold_ms", 1000)?;
    let delay = ranged("type_delay_ms", 1000)?;
    let hold = ranged("max_hold_ms", 600_000)?;
    let settings = computer.settings();
    if let Some(layout) = body.get("layout").and_then(Value::as_str)
        && layout != settings.layout
    {
        return Err(Code::Unsupported.error(format!(
            "this computer types in the layouts ['{}'], not '{layout}'",
            settings.layout
        )));
    }
    computer.update_settings(|s| {
        s.tap_hold_ms = tap.unwrap_or(s.tap_hold_ms);
        s.type_delay_ms = delay.unwrap_or(s.type_delay_ms);
        s.max_hold_ms = hold.unwrap_or(s.max_hold_ms);
    });
    Ok(keyboard_get(computer))
}
