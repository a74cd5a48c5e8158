//! The environment card, `GET /.well-known/agent-env.json` (protocol.md#card).

use serde_json::{Value, json};

use super::description::{Description, Object};
use super::tool_access;

/// The card's `protocolVersion`.
pub const PROTOCOL_VERSION: &str = "1.0";
/// The card's path.
pub const WELL_KNOWN_PATH: &str = "/.well-known/agent-env.json";
/// The data plane's path, and the card's `url`.
pub const RPC_PATH: &str = "/agentenv";
/// The MCP endpoint's path.
pub const MCP_PATH: &str = "/mcp";

/// A tool's card entry `{name, description, inputSchema}` (protocol.md#card-tools), its input
/// schema the reference's simplified one ([`card_schema`]).
fn tool_entry(tool: &super::description::Tool) -> Value {
    json!({"name": tool.name, "description": tool.description,
           "inputSchema": card_schema(&tool.input_schema)})
}

/// The JSON types a card keeps.
const CARD_TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "array", "object"];

/// The string formats a card keeps.
const CARD_FORMATS: [&str; 4] = ["date-time", "date", "time", "uuid"];

/// A tool's input schema as the reference's card gives it (protocol.md#card-tools): `{"type":
/// "object", "properties": {...}, "required": [...]}` (`required` left out when empty), each
/// property simplified by [`card_property`].
pub fn card_schema(input_schema: &Object) -> Value {
    let properties: Object = input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(k, v)| (k.clone(), card_property(v)))
                .collect()
        })
        .unwrap_or_default();
    let mut schema = Object::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    if let Some(required) = input_schema
        .get("required")
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty())
    {
        schema.insert("required".into(), Value::Array(required.clone()));
    }
    Value::Object(schema)
}

/// One property as the reference's card gives it: its type (`Optional[T]` as `T`'s, another
/// union or a type of its own as nothing), `enum` with its type, a string's date, time or uuid
/// `format`, then its `description` and `default`.
fn card_property(schema: &Value) -> Value {
    let mut out = card_type(schema);
    for key in ["description", "default"] {
        if let Some(value) = schema.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    Value::Object(out)
}

/// The type part of [`card_property`].
fn card_type(schema: &Value) -> Object {
    let mut out = Object::new();
    if let Some(any_of) = schema.get("anyOf").and_then(Value::as_array) {
        let not_null: Vec<&Value> = any_of
            .iter()
            .filter(|s| s.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        return match not_null.as_slice() {
            [only] => card_type(only),
            _ => out,
        };
    }
    if let Some(values) = schema.get("enum") {
        out.insert("enum".into(), values.clone());
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => match kinds
            .iter()
            .filter(|k| k.as_str() != Some("null"))
            .collect::<Vec<_>>()
            .as_slice()
        {
            [only] => only.as_str(),
            _ => None,
        },
        other => other.and_then(Value::as_str),
    };
    match kind {
        Some(kind) if CARD_TYPES.contains(&kind) => {
            out.insert("type".into(), kind.into());
            if let Some(format) = schema
                .get("format")
                .filter(|f| f.as_str().is_some_and(|f| CARD_FORMATS.contains(&f)))
            {
                out.insert("format".into(), format.clone());
            }
        }
        _ => {}
    }
    out
}

/// The URI an environment declares to take `data/get`'s `write_namespace` grant
/// (protocol.md#exports).
pub const DATA_OBJECTS_URI: &str = "urn:agentenv:data-objects/v1";

/// The card entry of [`DATA_OBJECTS_URI`], the reference's bytes.
fn data_objects_entry() -> Value {
    json!({"uri": DATA_OBJECTS_URI,
           "description": "data/get takes a write_namespace grant and may upload its export under it.",
           "params": null, "required": null})
}

/// The card of `description` (protocol.md#card), every field present, unset ones null: extensions
/// in card order followed by the tool-access pair when tool access is on and the data-objects
/// declaration when the environment exports through grants (protocol.md#card-extensions), tools
/// in card order, and the data-plane operations served.
pub fn card(description: &Description) -> Value {
    let mut extensions: Vec<Value> = description
        .extensions
        .iter()
        .filter(|e| e.uri != DATA_OBJECTS_URI)
        .map(|e| e.card_entry())
        .collect();
    if description.tool_access {
        for entry in tool_access::card_entries() {
            if !extensions.iter().any(|e| e["uri"] == entry["uri"]) {
                extensions.push(entry);
            }
        }
    }
    if description.exports_through_grants() {
        extensions.push(data_objects_entry());
    }
    let tools: Vec<Value> = description.tools.iter().map(tool_entry).collect();
    let operations: Vec<&str> = description.operations.iter().map(|o| o.method()).collect();
    json!({
        "name": description.name,
        "protocolVersion": PROTOCOL_VERSION,
        "url": RPC_PATH,
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": MCP_PATH, "transport": "mcp"}],
        "capabilities": {
            "extensions": (!extensions.is_empty()).then_some(extensions),
            "tools": (!tools.is_empty()).then_some(tools),
            "operations": operations,
        },
        "children_environments": null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::description::Operation;

    #[test]
    fn a_bare_card_has_nulls_and_its_operations() {
        let d = Description {
            name: "demo".into(),
            tools: Vec::new(),
            extensions: Vec::new(),
            operations: vec![Operation::Get],
            tool_access: false,
        };
        assert_eq!(
            card(&d),
            json!({"name": "demo", "protocolVersion": "1.0", "url": "/agentenv", "preferredTransport": "JSONRPC",
                   "additionalInterfaces": [{"url": "/mcp", "transport": "mcp"}],
                   "capabilities": {"extensions": null, "tools": null, "operations": ["data/get"]},
                   "children_environments": null})
        );
    }

    #[test]
    fn tool_access_adds_its_two_extensions() {
        let d = Description {
            name: "demo".into(),
            tools: Vec::new(),
            extensions: Vec::new(),
            operations: Vec::new(),
            tool_access: true,
        };
        let c = card(&d);
        assert_eq!(
            c["capabilities"]["extensions"][1]["params"]["endpoint"],
            "/tools/enable"
        );
    }

    #[test]
    fn a_cards_schema_is_the_references_simplified_one() {
        let pydantic = json!({"properties": {
            "text": {"description": "The text.", "title": "Text", "type": "string"},
            "to": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "title": "To"},
            "times": {"default": 1, "title": "Times", "type": "integer"},
            "when": {"format": "date-time", "title": "When", "type": "string"},
            "kind": {"enum": ["a", "b"], "title": "Kind", "type": "string"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}], "title": "Either"},
            "point": {"$ref": "#/$defs/Point"},
            "tags": {"items": {"type": "string"}, "title": "Tags", "type": "array"}},
            "required": ["text", "when", "kind", "either", "point", "tags"],
            "title": "echoArguments", "type": "object"});
        let schemars = json!({"properties": {"to": {"type": ["string", "null"], "default": null}},
                              "type": "object"});
        let simplified = |v: Value| card_schema(v.as_object().unwrap()).to_string();
        assert_eq!(
            simplified(pydantic),
            r#"{"type":"object","properties":{"text":{"type":"string","description":"The text."},"to":{"type":"string","default":null},"times":{"type":"integer","default":1},"when":{"type":"string","format":"date-time"},"kind":{"enum":["a","b"],"type":"string"},"either":{},"point":{},"tags":{"type":"array"}},"required":["text","when","kind","either","point","tags"]}"#
        );
        assert_eq!(
            simplified(schemars),
            r#"{"type":"object","properties":{"to":{"type":"string","default":null}}}"#
        );
    }
}
