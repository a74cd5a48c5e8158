//! The tools a turn is given (docs/agents.md#tools): those of tool servers, each an episode of
//! this host called in process or an MCP server reached over streamable HTTP
//! ([`RemoteMcp`](super::remote_mcp::RemoteMcp)). A tool keeps its own name unless an earlier
//! server already offers one of that name; it is then offered as `{server}__{name}`.

use std::collections::HashMap;
use std::sync::Arc;

use envhost_protocol::{Caller, Content, ToolResult};
use serde_json::{Map, Value, json};

use super::remote_mcp::RemoteMcp;
use crate::Episode;

/// Where a server's tools run.
pub enum ToolServer {
    /// An episode of this host, called in process as `caller` (its role decides the tools).
    Episode {
        /// The episode.
        episode: Arc<Episode>,
        /// Who calls.
        caller: Caller,
    },
    /// An MCP server over streamable HTTP.
    Remote(Arc<RemoteMcp>),
}

/// The tool servers of a turn, in the order their tools are offered. Cheap to clone.
#[derive(Clone, Default)]
pub struct Toolbox {
    servers: Arc<[(String, ToolServer)]>,
}

/// A tool as the model is offered it.
#[derive(Clone, Debug, PartialEq)]
pub struct OfferedTool {
    /// Its name in the turn.
    pub name: String,
    /// Its description (empty when it has none).
    pub description: String,
    /// Its input JSON Schema, as JSON text.
    pub input_schema: String,
}

/// The tools of a [`Toolbox`] at one moment, and which server answers each.
#[derive(Default)]
pub struct Listing {
    /// The tools, in the order offered.
    pub tools: Vec<OfferedTool>,
    /// For each offered name: the server's index and the tool's name there.
    routes: HashMap<String, (usize, String)>,
}

/// What a tool call answered: whether it failed, and its MCP content blocks as a JSON array.
#[derive(Clone, Debug, PartialEq)]
pub struct Called {
    /// MCP's `isError`.
    pub is_error: bool,
    /// The content blocks (`[{"type": "text", "text"}, ...]`).
    pub content: Value,
}

/// A tool server that could not answer (over A2A, a task `failed` with code
/// `mcp_unavailable`).
#[derive(Debug, thiserror::Error)]
#[error("the MCP server {server:?} is unavailable: {why}")]
pub struct Unavailable {
    /// The server's name.
    pub server: String,
    /// What went wrong (never the URL's query).
    pub why: String,
}

/// `result`'s content blocks as MCP writes them.
pub fn content_blocks(result: &ToolResult) -> Value {
    Value::Array(
        result
            .content
            .iter()
            .map(|c| match c {
                Content::Text(text) => json!({"type": "text", "text": text}),
                Content::Image { data, mime_type } => {
                    json!({"type": "image", "data": data, "mimeType": mime_type})
                }
                Content::Block(block) => serde_json::from_str(block.get()).unwrap_or(Value::Null),
            })
            .collect(),
    )
}

impl Toolbox {
    /// The tools of `episode` as `caller` sees them, under their own names.
    pub fn episode(episode: Arc<Episode>, caller: Caller) -> Self {
        let name = episode.catalog().name.clone();
        Self::new(vec![(name, ToolServer::Episode { episode, caller })])
    }

    /// The tools of `servers`, each `(name, server)`, in that order.
    pub fn new(servers: Vec<(String, ToolServer)>) -> Self {
        Self {
            servers: servers.into(),
        }
    }

    /// Every server's tools now.
    ///
    /// # Errors
    /// [`Unavailable`] when a remote server cannot be reached or answers no listing.
    pub async fn list(&self) -> Result<Listing, Unavailable> {
        let mut listing = Listing::default();
        for (index, (server, source)) in self.servers.iter().enumerate() {
            let tools = match source {
                ToolServer::Episode { episode, caller } => episode
                    .tools(caller)
                    .into_iter()
                    .map(|t| OfferedTool {
                        name: t.tool.name.clone(),
                        description: t.tool.description.clone().unwrap_or_default(),
                        input_schema: t.schema_json.clone(),
                    })
                    .collect(),
                ToolServer::Remote(remote) => remote.list().await.map_err(|why| Unavailable {
                    server: server.clone(),
                    why,
                })?,
            };
            for tool in tools {
                let own = tool.name.clone();
                let name = if listing.routes.contains_key(&own) {
                    format!("{server}__{own}")
                } else {
                    own.clone()
                };
                if listing.routes.contains_key(&name) {
                    continue;
                }
                listing.routes.insert(name.clone(), (index, own));
                listing.tools.push(OfferedTool { name, ..tool });
            }
        }
        Ok(listing)
    }

    /// Calls the tool offered as `name` in `listing` with `arguments`. A name `listing` does
    /// not offer answers an error result, `Unknown tool: NAME`, as an episode does.
    ///
    /// # Errors
    /// [`Unavailable`] when the tool's remote server cannot be reached.
    pub async fn call(
        &self,
        listing: &Listing,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Called, Unavailable> {
        let Some((index, own)) = listing.routes.get(name) else {
            return Ok(Called {
                is_error: true,
                content: json!([{"type": "text", "text": format!("Unknown tool: {name}")}]),
            });
        };
        let (server, source) = &self.servers[*index];
        match source {
            ToolServer::Episode { episode, caller } => {
                let result = episode.call_tool(own, arguments, caller.clone()).await;
                Ok(Called {
                    is_error: result.is_error,
                    content: content_blocks(&result),
                })
            }
            ToolServer::Remote(remote) => {
                remote
                    .call(own, arguments)
                    .await
                    .map_err(|why| Unavailable {
                        server: server.clone(),
                        why,
                    })
            }
        }
    }
}
