//! `POST /agentenv`: the JSON-RPC data plane (§3). Every answer is HTTP 200.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use serde_json::{Value, json};

use super::mount::Mount;
use super::reply;
use crate::protocol::description::Operation;
use crate::protocol::jsonrpc::{self, RpcError};
use crate::protocol::part::Part;
use crate::runtime::CallError;

/// How an operation failed.
enum Failure {
    /// -32602 with this detail.
    Params(String),
    /// -32000 with this message.
    Handler(String),
}

impl From<CallError> for Failure {
    fn from(e: CallError) -> Self {
        Self::Handler(match e {
            CallError::Guest(coded) => coded.message,
            other => other.to_string(),
        })
    }
}

/// Handles one data-plane request (§3.1).
pub async fn rpc(State(mount): State<Arc<Mount>>, body: Bytes) -> Response {
    let served = &mount.catalog.description.operations;
    let answer = match jsonrpc::parse_request(&body, served) {
        Err(e) => e.to_json(),
        Ok(request) => match dispatch(&mount, request.operation, request.params).await {
            Ok(result) => jsonrpc::success(request.id, result),
            Err(Failure::Params(detail)) => RpcError::invalid_params(request.id, detail).to_json(),
            Err(Failure::Handler(message)) => {
                RpcError::handler_failed(request.id, request.operation, message).to_json()
            }
        },
    };
    reply::json(StatusCode::OK, &answer)
}

async fn dispatch(mount: &Mount, operation: Operation, params: Value) -> Result<Value, Failure> {
    match operation {
        Operation::Reset => {
            mount.episode.reset().await?;
            Ok(json!({}))
        }
        Operation::Add => {
            let parts = add_params(params).map_err(Failure::Params)?;
            let parts = mount
                .resolver
                .resolve_parts(parts)
                .await
                .map_err(|e| Failure::Handler(e.to_string()))?;
            mount.episode.add_data(parts).await?;
            Ok(json!({}))
        }
        Operation::Get => {
            let parts = mount.episode.get_data().await?;
            Ok(json!({"parts": parts}))
        }
    }
}

/// The parts of `data/add` params (§3.3): an object with a non-empty `parts` list of valid parts.
fn add_params(params: Value) -> Result<Vec<Part>, String> {
    let Value::Object(mut params) = params else {
        return Err("data/add takes its params by name: {\"parts\": [...]}".into());
    };
    let items = match params.remove("parts") {
        Some(Value::Array(items)) => items,
        Some(_) => return Err("parts: input should be a list".into()),
        None => return Err("parts: field required".into()),
    };
    if items.is_empty() {
        return Err("parts: list should have at least 1 item".into());
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, p)| serde_json::from_value(p).map_err(|e| format!("parts[{i}]: {e}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_params_need_a_non_empty_list_of_parts() {
        assert!(add_params(json!([1])).unwrap_err().contains("by name"));
        assert_eq!(add_params(json!({})).unwrap_err(), "parts: field required");
        assert_eq!(
            add_params(json!({"parts": []})).unwrap_err(),
            "parts: list should have at least 1 item"
        );
        assert!(
            add_params(json!({"parts": [{"kind": "nope"}]}))
                .unwrap_err()
                .starts_with("parts[0]:")
        );
        assert_eq!(
            add_params(json!({"parts": [{"kind": "text", "text": "x"}], "extra": 1}))
                .unwrap()
                .len(),
            1
        );
    }
}
