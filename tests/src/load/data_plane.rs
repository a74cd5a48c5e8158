//! The environment's card and data plane: reading the card, seeding the environment (or an
//! episode) and resetting it.

use anyhow::Context as _;
use bytes::Bytes;
use http::Method;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use super::conn::{Conn, Target, require_success};
use super::rpc::rpc_answer;

/// The channel [`seed`] adds and the load clients post to (the Python bench's).
pub const CHANNEL: &str = "bench";

/// What the bench reads of the environment card.
#[derive(Deserialize)]
pub struct Card {
    /// The environment's name, the prefix of its tool names.
    pub name: String,
    /// Its interfaces, among them the MCP one.
    #[serde(default, rename = "additionalInterfaces")]
    interfaces: Option<Vec<Interface>>,
}

/// An entry of the card's `additionalInterfaces`.
#[derive(Deserialize)]
struct Interface {
    /// Its path.
    #[serde(default)]
    url: Option<String>,
    /// Its transport, `mcp` for MCP.
    #[serde(default)]
    transport: Option<String>,
}

impl Card {
    /// The MCP path: the first `mcp` interface's, else `/mcp` (as the reference client reads it).
    pub fn mcp_path(&self) -> &str {
        self.interfaces
            .iter()
            .flatten()
            .filter(|i| i.transport.as_deref() == Some("mcp"))
            .find_map(|i| i.url.as_deref().filter(|u| !u.is_empty()))
            .unwrap_or("/mcp")
    }
}

/// Fetches the environment card.
///
/// # Errors
/// When the card cannot be fetched or read.
pub async fn fetch_card(conn: &mut Conn, target: &Target) -> anyhow::Result<Card> {
    let response = conn
        .exchange(
            target,
            Method::GET,
            "/.well-known/agent-env.json",
            Bytes::new(),
        )
        .await
        .context("fetching the card")?;
    require_success(&response).context("fetching the card")?;
    serde_json::from_slice(response.body()).context("reading the card")
}

/// Calls data-plane `method` with `params`.
///
/// # Errors
/// When the call fails or answers an error.
pub async fn data_call(
    conn: &mut Conn,
    target: &Target,
    method: &str,
    params: Value,
) -> anyhow::Result<()> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let response = conn
        .exchange(target, Method::POST, "/agentenv", body.into())
        .await
        .with_context(|| method.to_owned())?;
    rpc_answer::<IgnoredAny>(&response, 1, method).map(drop)
}

/// Empties the environment.
///
/// # Errors
/// When `data/reset` fails.
pub async fn reset(conn: &mut Conn, target: &Target) -> anyhow::Result<()> {
    data_call(conn, target, "data/reset", json!({})).await
}

/// Empties the environment and adds the channel the clients post to, [`CHANNEL`].
///
/// # Errors
/// When `data/reset` or `data/add` fails.
pub async fn seed(conn: &mut Conn, target: &Target) -> anyhow::Result<()> {
    reset(conn, target).await?;
    let channels = json!({"channels": [{"name": CHANNEL, "topic": ""}]});
    data_call(
        conn,
        target,
        "data/add",
        json!({"parts": [{"kind": "data", "data": channels}]}),
    )
    .await
}
