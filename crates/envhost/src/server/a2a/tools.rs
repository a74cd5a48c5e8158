//! mcp-config/v1's servers (docs/agent-env.md#mcp-config): where a deployment's tasks get their
//! tools. A URL that is the agent URL of an episode of this host (`…/agent/{id}/{secret}/mcp`,
//! its secret right) is bound to that episode in process; any other `http(s)` URL is an MCP
//! server reached over streamable HTTP with the headers it was added with, held to the egress
//! policy.

use std::collections::HashMap;
use std::sync::Arc;

use envhost_protocol::Caller;
use envhost_protocol::card::MCP_PATH;
use envhost_protocol::role::{ROLE_HEADER, normalize_role};
use http::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::super::access::agent_route;
use super::super::state::AppState;
use crate::agent::remote_mcp::RemoteMcp;
use crate::agent::{ToolServer, Toolbox};

/// Where a server's tools run.
enum Binding {
    /// The episode `id` of this host.
    Episode(String),
    /// An MCP server over streamable HTTP.
    Remote(Arc<RemoteMcp>),
}

/// One server added with mcp-config/v1.
pub struct McpServer {
    /// Its name.
    pub name: String,
    /// Its URL as added.
    pub url: String,
    /// Whether it was added with headers.
    pub has_headers: bool,
    /// The role of its `AgentEnv-Role` header, when it has one.
    role: Option<String>,
    binding: Binding,
}

/// `path` without `state`'s URL prefix.
fn unprefixed<'a>(state: &AppState, path: &'a str) -> &'a str {
    let prefix = state.url_prefix.as_str();
    match path.strip_prefix(prefix) {
        Some(rest) if !prefix.is_empty() && rest.starts_with('/') => rest,
        _ => path,
    }
}

impl McpServer {
    /// The server `name` at `url`, sent `headers` (a JSON object of strings).
    ///
    /// # Errors
    /// What is wrong with `url` or `headers`.
    pub fn bind(
        state: &AppState,
        name: String,
        url: String,
        headers: &Map<String, Value>,
    ) -> Result<Self, String> {
        let parsed = url::Url::parse(&url).map_err(|e| format!("url is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!(
                "url must be http or https, not {}",
                parsed.scheme()
            ));
        }
        let mut sent = HashMap::new();
        let mut role = None;
        for (key, value) in headers {
            let Value::String(value) = value else {
                return Err(format!("header {key} must be a string"));
            };
            let header = HeaderName::from_bytes(key.as_bytes())
                .map_err(|_| format!("{key:?} is not a header name"))?;
            let header_value = HeaderValue::from_str(value)
                .map_err(|_| format!("the value of header {key} cannot be sent"))?;
            if header.as_str() == ROLE_HEADER {
                role = Some(value.clone());
            }
            sent.insert(header, header_value);
        }
        let path = unprefixed(state, parsed.path());
        let local = agent_route(path).filter(|(id, secret, after)| {
            *after == MCP_PATH
                && state
                    .host
                    .episode(id)
                    .is_some_and(|e| e.secret().matches(secret))
        });
        let binding = match local {
            Some((id, _, _)) => Binding::Episode(id.to_owned()),
            None => Binding::Remote(Arc::new(RemoteMcp::new(
                url.clone(),
                sent,
                state.host.egress_client(),
            ))),
        };
        Ok(Self {
            name,
            url,
            has_headers: !headers.is_empty(),
            role,
            binding,
        })
    }

    /// The server `name` bound in process to episode `id` of this host, shown as `url`, called
    /// as `role` when given.
    pub fn local(name: String, url: String, id: String, role: Option<String>) -> Self {
        Self {
            name,
            url,
            has_headers: role.is_some(),
            role,
            binding: Binding::Episode(id),
        }
    }

    /// The id of the episode of this host it is bound to, when it is.
    pub fn episode_id(&self) -> Option<&str> {
        match &self.binding {
            Binding::Episode(id) => Some(id),
            Binding::Remote(_) => None,
        }
    }

    /// The role of its `AgentEnv-Role` header.
    pub fn role(&self) -> Option<&str> {
        self.role.as_deref()
    }
}

/// The toolbox of a task of `session` over `servers`, their tools called as `role` unless a
/// server names its own.
///
/// # Errors
/// The name of a server whose episode has ended.
pub fn toolbox(
    state: &AppState,
    servers: &[McpServer],
    role: Option<&str>,
    session: &str,
) -> Result<Toolbox, String> {
    let mut bound = Vec::with_capacity(servers.len());
    for server in servers {
        let source = match &server.binding {
            Binding::Episode(id) => {
                let episode = state.host.episode(id).ok_or_else(|| server.name.clone())?;
                let role = server.role.as_deref().or(role).map(Value::from);
                let caller = Caller {
                    role: normalize_role(role.as_ref()),
                    session: Some(session.to_owned()),
                };
                ToolServer::Episode { episode, caller }
            }
            Binding::Remote(remote) => ToolServer::Remote(remote.clone()),
        };
        bound.push((server.name.clone(), source));
    }
    Ok(Toolbox::new(bound))
}
