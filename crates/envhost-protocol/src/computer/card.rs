//! A computer's card and its tools' listing (computer.md#the-card): extensions in the
//! reference's order and shapes, the tools with the reference's exact schemas, and the point
//! tools' descriptions written for the default space.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use super::settings::Settings;
use super::spaces::Space;
use crate::card::{MCP_PATH, PROTOCOL_VERSION, RPC_PATH};
use crate::tool_access;

/// The reference's `tools/list` entries, every group's, in its order.
const TOOLS_LIST: &str = include_str!("tools-list.json");
/// The reference's card tool entries, in its order.
const CARD_TOOLS: &str = include_str!("card-tools.json");

/// The tools whose points a space applies to: their descriptions say the default space.
pub const POINT_TOOLS: [&str; 7] = [
    "computer_screenshot",
    "computer_click",
    "computer_drag",
    "computer_scroll",
    "computer_pointer_move",
    "computer_pointer_down",
    "computer_pointer_up",
];

/// The sentence the reference's listing ends its point tools' descriptions with (frame space).
const FRAME_SENTENCE: &str = " Points are in frame space by default: pixels of the frame's image.";

/// What a computer has, for its card and listing.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// The card's name.
    pub name: String,
    /// The `computer/v1` params (features), in the card's order.
    pub features: Map<String, Value>,
    /// The pointer group.
    pub pointer: bool,
    /// The keyboard group.
    pub keyboard: bool,
    /// The display's modes (a settable display when not empty).
    pub modes: Vec<(u32, u32)>,
    /// Whether commands can run (`computer-exec/v1`).
    pub exec: bool,
    /// Whether files can be written (`data/add`, intake's `add`).
    pub write_files: bool,
    /// Whether the driver keeps a desktop state of its own: `data/add` seeds it from a `data`
    /// part, `data/get` exports it as one (computer.md#data).
    pub state: bool,
}

/// The sentence a point tool's description ends with for `space` (and `scale`).
pub fn space_sentence(space: Space, scale: i64) -> String {
    match space {
        Space::Frame => FRAME_SENTENCE.to_owned(),
        Space::Norm => format!(
            " Points are in norm space by default: 0 to {scale} over the frame, so send x and y on that grid."
        ),
    }
}

fn parsed(cache: &'static OnceLock<Vec<Value>>, text: &str) -> &'static [Value] {
    cache.get_or_init(|| serde_json::from_str(text).unwrap_or_default())
}

/// Whether the tool `name` is served by a computer of `shape`.
fn served(shape: &Shape, name: &str) -> bool {
    if name.starts_with("computer_pointer_") {
        shape.pointer
    } else if name.starts_with("computer_keyboard_") {
        shape.keyboard
    } else {
        true
    }
}

/// `entries` served by `shape`, their point tools' descriptions ending with the default
/// space's sentence (whitespace collapsed, as the reference writes them).
fn tools(entries: &[Value], shape: &Shape, space: Space, scale: i64) -> Vec<Value> {
    let sentence = space_sentence(space, scale);
    entries
        .iter()
        .filter(|t| served(shape, t["name"].as_str().unwrap_or_default()))
        .map(|tool| {
            let mut tool = tool.clone();
            let name = tool["name"].as_str().unwrap_or_default().to_owned();
            if POINT_TOOLS.contains(&name.as_str()) {
                let described = tool["description"].as_str().unwrap_or_default();
                let base = described.strip_suffix(FRAME_SENTENCE).unwrap_or(described);
                let base = base.split_whitespace().collect::<Vec<_>>().join(" ");
                tool["description"] = Value::String(format!("{base}{sentence}"));
            }
            tool
        })
        .collect()
}

/// The `tools/list` entries of `shape` (inputs, outputs and annotations exactly the
/// reference's), for the default `space`.
pub fn listing(shape: &Shape, space: Space, scale: i64) -> Vec<Value> {
    static CACHE: OnceLock<Vec<Value>> = OnceLock::new();
    tools(parsed(&CACHE, TOOLS_LIST), shape, space, scale)
}

fn method(verb: &str, endpoint: &str, request: Value) -> Value {
    json!({"method": verb, "endpoint": endpoint, "request": request})
}

fn no_params() -> Value {
    json!({"type": "object", "properties": {}})
}

fn extension(uri: &str, description: &str, params: Value) -> Value {
    json!({"uri": uri, "description": description, "params": params, "required": null})
}

/// The card of `shape` under `settings` (computer.md#the-card): every field present, unset
/// ones null, extensions in the reference's order.
pub fn card(shape: &Shape, settings: &Settings) -> Value {
    let mut extensions = Vec::new();
    let mut display = json!({
        "modes": shape.modes.iter().map(|(w, h)| json!([w, h])).collect::<Vec<_>>(),
        "methods": {"get": method("GET", "/agentenv/ext/computer-display/get", no_params())},
    });
    if !shape.modes.is_empty() {
        display["methods"]["set"] = method(
            "POST",
            "/agentenv/ext/computer-display/set",
            json!({"type": "object", "properties": {"width": {"type": "integer"}, "height": {"type": "integer"}, "scale": {"type": "number", "default": null}}, "required": ["width", "height"]}),
        );
    }
    extensions.push(extension(
        "urn:agentenv:computer-display/v1",
        "Get or set the display's resolution and scale.",
        display,
    ));
    if shape.exec {
        extensions.push(extension(
            "urn:agentenv:computer-exec/v1",
            "Run a command inside the desktop session as the session user; a repeated request_id returns the first result.",
            json!({
                "max_output_bytes": settings.exec_output_bytes,
                "max_timeout_s": 3600,
                "methods": {"run": method("POST", "/agentenv/ext/computer-exec/run", json!({"type": "object", "properties": {"argv": {"type": "array"}, "request_id": {"type": "string"}, "cwd": {"type": "string", "default": null}, "env": {"type": "object", "default": null}, "timeout_s": {"type": "number", "default": null}}, "required": ["argv", "request_id"]}))},
            }),
        ));
    }
    if shape.keyboard {
        extensions.push(extension(
            "urn:agentenv:computer-keyboard/v1",
            "Get or set the tap hold, typing delay, layout and maximum hold.",
            json!({
                "tap_hold_ms": {"min": 0, "max": 1000},
                "type_delay_ms": {"min": 0, "max": 1000},
                "max_hold_ms": {"min": 0, "max": 600000},
                "layouts": [settings.layout],
                "methods": {
                    "get": method("GET", "/agentenv/ext/computer-keyboard/get", no_params()),
                    "set": method("POST", "/agentenv/ext/computer-keyboard/set", json!({"type": "object", "properties": {"tap_hold_ms": {"type": "integer", "default": null}, "type_delay_ms": {"type": "integer", "default": null}, "layout": {"type": "string", "default": null}, "max_hold_ms": {"type": "integer", "default": null}}})),
                },
            }),
        ));
    }
    extensions.push(extension(
        "urn:agentenv:computer-ready/v1",
        "Whether the computer is usable now, by real checks; never sends input.",
        json!({"methods": {"status": method("GET", "/agentenv/ext/computer-ready/status", no_params())}}),
    ));
    extensions.push(extension(
        "urn:agentenv:computer-spaces/v1",
        "Get or set the default coordinate space, written into the tool descriptions.",
        json!({
            "spaces": ["frame", "norm"],
            "methods": {
                "get": method("GET", "/agentenv/ext/computer-spaces/get", no_params()),
                "set": method("POST", "/agentenv/ext/computer-spaces/set", json!({"type": "object", "properties": {"default_space": {"type": "string"}, "default_norm_scale": {"type": "integer", "default": null}}, "required": ["default_space"]})),
            },
        }),
    ));
    extensions.push(extension(
        "urn:agentenv:computer/v1",
        "The seven computer_* tools: screenshot, click, drag, scroll, type, key, wait.",
        Value::Object(shape.features.clone()),
    ));
    if shape.pointer {
        let buttons = shape
            .features
            .get("buttons")
            .cloned()
            .unwrap_or(json!(["left"]));
        extensions.push(extension(
            "urn:agentenv:computer-pointer/v1",
            "The computer_pointer_* tools, and click and scroll at the pointer.",
            json!({"buttons": buttons, "kinds": ["foreground"]}),
        ));
    }
    let mut intake = Map::new();
    let state = json!({"part": "data", "format": "json", "load": "replace"});
    let mut add = Vec::new();
    if shape.state {
        add.push(state.clone());
    }
    if shape.write_files {
        add.push(json!({"part": "file", "format": "file-tree", "load": "additive"}));
    }
    if !add.is_empty() {
        intake.insert("add".into(), Value::Array(add));
    }
    let mut get = Vec::new();
    if shape.state {
        get.push(json!({"part": "data", "format": "json"}));
    }
    get.push(json!({"part": "file", "format": "file-tree"}));
    intake.insert("get".into(), Value::Array(get));
    extensions.push(extension(
        "urn:agentenv:intake/v1",
        "data/add writes files under the session user's home; data/get returns the env's data paths.",
        Value::Object(intake),
    ));
    extensions.extend(tool_access::card_entries());
    extensions.push(extension(
        "urn:agentenv:data-objects/v1",
        "data/get takes a write_namespace grant and may upload its export under it.",
        Value::Null,
    ));
    static CACHE: OnceLock<Vec<Value>> = OnceLock::new();
    let card_tools = tools(
        parsed(&CACHE, CARD_TOOLS),
        shape,
        settings.default_space,
        settings.default_norm_scale,
    );
    let operations: Vec<&str> = if shape.write_files || shape.state {
        vec!["data/add", "data/get"]
    } else {
        vec!["data/get"]
    };
    json!({
        "name": shape.name,
        "protocolVersion": PROTOCOL_VERSION,
        "url": RPC_PATH,
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": MCP_PATH, "transport": "mcp"}],
        "capabilities": {"extensions": extensions, "tools": card_tools, "operations": operations},
        "children_environments": null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference driver's shape.
    fn reference() -> Shape {
        let card: Value =
            serde_json::from_str(include_str!("testdata/reference-card.json")).unwrap();
        let features = card["capabilities"]["extensions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["uri"] == "urn:agentenv:computer/v1")
            .unwrap()["params"]
            .as_object()
            .unwrap()
            .clone();
        Shape {
            name: "reference".into(),
            features,
            pointer: true,
            keyboard: true,
            modes: Vec::new(),
            exec: true,
            write_files: true,
            state: false,
        }
    }

    #[test]
    fn the_reference_shape_gives_the_references_card_and_listing() {
        let expected: Value =
            serde_json::from_str(include_str!("testdata/reference-card.json")).unwrap();
        let ours = card(&reference(), &Settings::default());
        // Key order too: the texts are equal, not only the values.
        assert_eq!(ours.to_string(), expected.to_string());
        let listed: Vec<Value> = serde_json::from_str(TOOLS_LIST).unwrap();
        assert_eq!(listing(&reference(), Space::Frame, 1000), listed);
    }

    #[test]
    fn the_default_space_is_written_into_the_point_tools() {
        let listed = listing(&reference(), Space::Norm, 1000);
        let click = listed
            .iter()
            .find(|t| t["name"] == "computer_click")
            .unwrap();
        assert_eq!(
            click["description"],
            "Click at a point of a frame. Points are in norm space by default: 0 to 1000 over the frame, so send x and y on that grid."
        );
        let wait = listed
            .iter()
            .find(|t| t["name"] == "computer_wait")
            .unwrap();
        assert_eq!(
            wait["description"],
            "Wait, then optionally return a fresh frame."
        );
    }

    #[test]
    fn groups_decide_which_tools_and_extensions_there_are() {
        let shape = Shape {
            pointer: false,
            keyboard: false,
            exec: false,
            write_files: false,
            state: false,
            ..reference()
        };
        let names: Vec<String> = listing(&shape, Space::Frame, 1000)
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names.len(), 7);
        let card = card(&shape, &Settings::default());
        let uris: Vec<&str> = card["capabilities"]["extensions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["uri"].as_str().unwrap())
            .collect();
        assert!(!uris.contains(&"urn:agentenv:computer-pointer/v1"));
        assert!(!uris.contains(&"urn:agentenv:computer-exec/v1"));
        assert_eq!(card["capabilities"]["operations"], json!(["data/get"]));
    }
}
