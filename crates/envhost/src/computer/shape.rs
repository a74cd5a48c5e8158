//! What a driver's card says of it: its `computer/v1` params from its features, with the
//! platform detected as the reference detects it when the driver names none.

use envhost_protocol::computer::card::Shape;
use envhost_runtime::driver::Driver;
use envhost_runtime::driver::bindings::agentenv::computer::types::{Button, Platform};
use serde_json::{Map, Value, json};

/// A button's name on the wire.
pub fn button_name(button: Button) -> &'static str {
    match button {
        Button::Left => "left",
        Button::Right => "right",
        Button::Middle => "middle",
        Button::Back => "back",
        Button::Forward => "forward",
    }
}

/// The platform this process runs on, only what is known: `os`, on Linux `distribution` and
/// `version` from `/etc/os-release`, `arch` (`amd64`, `arm64` or the machine's name), and
/// `display` from `XDG_SESSION_TYPE`, `DISPLAY` or `WAYLAND_DISPLAY`.
pub fn detected_platform() -> Platform {
    let os = std::env::consts::OS;
    let release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let field = |key: &str| {
        release.lines().find_map(|line| {
            let value = line.strip_prefix(key)?.strip_prefix('=')?;
            Some(value.trim_matches('"').to_owned()).filter(|v| !v.is_empty())
        })
    };
    let linux = os == "linux";
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let display = match var("XDG_SESSION_TYPE").as_deref() {
        Some(kind @ ("x11" | "wayland")) => Some(kind.to_owned()),
        _ if var("DISPLAY").is_some() => Some("x11".to_owned()),
        _ if var("WAYLAND_DISPLAY").is_some() => Some("wayland".to_owned()),
        _ => None,
    };
    Platform {
        os: Some(os.to_owned()),
        distribution: if linux { field("ID") } else { None },
        version: if linux { field("VERSION_ID") } else { None },
        arch: Some(arch.to_owned()),
        display,
    }
}

/// The card's shape of `driver` served as `name`, with `modes`, and whether it was granted an
/// X display (then its detected platform's `display` is `x11`). Commands and files are off:
/// the server turns them on with their grants.
pub fn shape(driver: &Driver, name: String, modes: Vec<(u32, u32)>, x11_granted: bool) -> Shape {
    let f = driver.features();
    let platform = f.platform.clone().unwrap_or_else(|| {
        let mut detected = detected_platform();
        if x11_granted {
            detected.display = Some("x11".to_owned());
        }
        detected
    });
    let mut shown = Map::new();
    for (key, value) in [
        ("os", &platform.os),
        ("distribution", &platform.distribution),
        ("version", &platform.version),
        ("arch", &platform.arch),
        ("display", &platform.display),
    ] {
        if let Some(value) = value {
            shown.insert(key.into(), json!(value));
        }
    }
    let keys = match &f.keys {
        None => json!("all"),
        Some(keys) => json!(keys),
    };
    let supports: Value = serde_json::from_str(&f.supports).unwrap_or(json!([]));
    let mut features = Map::new();
    features.insert(
        "buttons".into(),
        json!(
            f.buttons
                .iter()
                .map(|b| button_name(*b))
                .collect::<Vec<_>>()
        ),
    );
    features.insert("max_click_count".into(), json!(f.max_click_count));
    features.insert("keys".into(), keys);
    features.insert("max_text_length".into(), json!(f.max_text_length));
    features.insert("max_wait_ms".into(), json!(f.max_wait_ms));
    features.insert("max_drag_points".into(), json!(f.max_drag_points));
    features.insert("max_duration_ms".into(), json!(f.max_duration_ms));
    features.insert("max_key_repeat".into(), json!(f.max_key_repeat));
    features.insert("max_scroll_amount".into(), json!(f.max_scroll_amount));
    features.insert("delivery".into(), json!("foreground"));
    features.insert("platform".into(), Value::Object(shown));
    features.insert("supports".into(), supports);
    let groups = driver.groups();
    Shape {
        name,
        features,
        pointer: groups.pointer,
        keyboard: groups.keyboard,
        modes,
        exec: false,
        write_files: false,
        state: driver.has_state(),
    }
}
