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

/// A tool's card entry `{name, description, inputSchema}` (protocol.md#card-tools). The input
/// schema is the one `tools/list` gives, less its `title`.
fn tool_entry(tool: &super::description::Tool) -> Value {
    let mut schema: Object = tool.input_schema.clone();
    schema.remove("title");
    json!({"name": tool.name, "description": tool.description, "inputSchema": schema})
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
}
