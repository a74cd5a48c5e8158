//! Changes to what the host serves this episode, made while it runs (envhost's
//! docs/protocol.md#tool-updates).

use crate::bindings::agentenv::environment::serving as host;
use crate::error::EnvError;

/// Changes the description of tool `name` (as declared, or as served) for this episode: its card
/// entry and `tools/list` change together, for every caller (the reference's `update_tool`).
///
/// # Errors
/// `unknown_tool` when no tool has that name.
pub fn update_tool(name: &str, description: &str) -> Result<(), EnvError> {
    host::update_tool(name, description).map_err(|message| EnvError::new("unknown_tool", message))
}
