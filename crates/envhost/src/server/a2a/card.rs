//! A deployment's agent card (docs/agent-env.md#the-card): A2A 0.3.0 as the agentenv framework
//! writes it, `url` relative (`/a2a`), streaming, and the extensions the deployment serves with
//! their endpoints (relative to the deployment's base URL) and methods.

use serde_json::{Value, json};

use super::deployment::{Deployment, lock};
use super::settings::{SUPPORTED, schema};

/// Where agent-env reads the card, after the deployment's base URL (the framework serves it at
/// `/.well-known/agent-card.json` too).
pub const CARD_PATH: &str = "/.well-known/agent.json";

/// The A2A protocol version the card declares.
pub const PROTOCOL_VERSION: &str = "0.3.0";

fn agent_config() -> Value {
    json!({
        "description": "Set or read agent configuration.",
        "params": {
            "endpoint": "/ext/agent-config",
            "methods": {
                "set": {"method": "POST", "request": {"supported": SUPPORTED, "schema": schema()}},
                "get": {"method": "GET", "response": {"required": ["config"]}},
            },
        },
        "uri": "urn:agentenv:agent-config/v1",
    })
}

fn mcp_config() -> Value {
    json!({
        "description": "Register MCP servers the agent should use.",
        "params": {
            "endpoint": "/ext/mcp-config",
            "methods": {
                "add": {"method": "POST", "request": {"required": ["url"], "optional": ["headers", "name"]}},
                "list": {"method": "GET", "response": {"required": ["mcp_servers"]}},
            },
        },
        "uri": "urn:agentenv:mcp-config/v1",
    })
}

fn trajectory() -> Value {
    json!({
        "description": "Retrieve an agent trajectory.",
        "params": {
            "endpoint": "/ext/trajectory",
            "methods": {
                "get": {"method": "POST", "request": {"oneOf": [
                    {"required": ["task_id"]},
                    {"required": ["task_id", "objects"]},
                    {"required": ["context_id"]},
                    {"required": ["context_id", "objects"]},
                    {"required": ["task_id", "after"], "optional": ["limit"]},
                    {"required": ["context_id", "after"], "optional": ["limit"]},
                ]}},
            },
        },
        "uri": "urn:agentenv:trajectory/v1",
    })
}

fn snapshot() -> Value {
    json!({
        "description": "Save and restore agent-native state.",
        "params": {
            "endpoint": "/ext/snapshot",
            "methods": {
                "save": {
                    "method": "POST",
                    "request": {"required": ["context_id", "objects"]},
                    "response": {"required": ["context_id", "objects"]},
                },
                "load": {
                    "method": "PUT",
                    "request": {"required": ["objects"], "optional": ["target_context_id"]},
                    "response": {"required": ["context_id"]},
                },
            },
        },
        "uri": "urn:agentenv:snapshot/v1",
    })
}

/// The card of `deployment`: its agent-config `name` and `description`, or the agent's name
/// and a description naming it.
pub fn card(deployment: &Deployment) -> Value {
    let settings = lock(&deployment.settings).clone();
    let name = settings
        .name
        .unwrap_or_else(|| deployment.agent().to_owned());
    let description = settings.description.unwrap_or_else(|| {
        format!(
            "envhost agent {}, a WebAssembly component",
            deployment.agent()
        )
    });
    json!({
        "capabilities": {
            "extensions": [agent_config(), mcp_config(), trajectory(), snapshot()],
            "pushNotifications": false,
            "stateTransitionHistory": false,
            "streaming": true,
        },
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "description": description,
        "name": name,
        "preferredTransport": "JSONRPC",
        "protocolVersion": PROTOCOL_VERSION,
        "skills": [],
        "url": "/a2a",
        "version": env!("CARGO_PKG_VERSION"),
    })
}
