//! One served episode: the environment's catalog, the episode, its tool-access rules, its MCP
//! sessions, and the resolver its `data/add` fetches files with.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use super::catalog::{Catalog, ServedTool};
use super::mcp::session::Sessions;
use crate::protocol::role::Caller;
use crate::protocol::tool_access::{Change, Rules};
use crate::runtime::Episode;
use crate::transfers::Resolver;

/// What the routes of one episode share.
pub struct Mount {
    /// The environment's precomputed answers.
    pub catalog: Arc<Catalog>,
    /// The episode.
    pub episode: Episode,
    /// Resolves `data/add` file parts.
    pub resolver: Resolver,
    /// The open MCP sessions.
    pub sessions: Sessions,
    rules: Mutex<Rules>,
}

impl Mount {
    /// Serves `episode` of the environment `catalog` describes, with no tool-access rules yet.
    pub fn new(catalog: Arc<Catalog>, episode: Episode, resolver: Resolver) -> Self {
        Self {
            catalog,
            episode,
            resolver,
            sessions: Sessions::default(),
            rules: Mutex::new(Rules::default()),
        }
    }

    /// Whether `tool` is hidden from and refused to `caller` (§7.3); always false when the
    /// environment does not enforce tool access.
    pub fn is_disabled(&self, caller: &Caller, tool: &ServedTool) -> bool {
        self.catalog.description.tool_access
            && self
                .rules
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_disabled(
                    caller.role_key(),
                    &tool.tool.name,
                    tool.tool.hidden_by_default,
                )
    }

    /// Applies a tool-access change (§7.2); answers the rules now stored under its role.
    pub fn change_rules(&self, change: &Change, disabled: bool) -> Value {
        self.rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .apply(change, disabled)
    }
}
