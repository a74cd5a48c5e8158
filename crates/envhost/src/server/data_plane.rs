//! `POST /agentenv`: the JSON-RPC data plane (protocol.md#data-plane). Every answer is HTTP 200,
//! except a call refused because the episode's queue is full (429 with `Retry-After`).

use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::reply;
use super::state::Current;
use crate::embedding::{DataError, Episode};
use crate::transfers::namespace::NamespaceGrant;
use envhost_protocol::description::Operation;
use envhost_protocol::jsonrpc::{self, RpcError};
use envhost_protocol::part::{Part, parts_from_add_params};

/// Handles one data-plane request (protocol.md#envelope).
pub async fn rpc(Current(episode): Current, body: Bytes) -> Response {
    let served = &episode.catalog().description.operations;
    if served.contains(&Operation::Add)
        && let Some((id, parts)) = jsonrpc::parse_add_request(&body)
    {
        return answer(id, Operation::Add, add(&episode, parts).await);
    }
    let request = match jsonrpc::parse_request(&body, served) {
        Ok(request) => request,
        Err(e) => return reply::json(StatusCode::OK, &e.to_json()),
    };
    let result = dispatch(&episode, request.operation, &request.params).await;
    answer(request.id, request.operation, result)
}

/// The answer to request `id` of `operation` that came out as `result`.
fn answer(id: Value, operation: Operation, result: Result<Answer, DataError>) -> Response {
    match result {
        Ok(result) => {
            let size_hint = match &result {
                Answer::Parts { parts } => parts.iter().map(Part::size_hint).sum::<usize>() + 64,
                Answer::Empty {} => 64,
            };
            reply::json_sized(StatusCode::OK, &jsonrpc::success(id, result), size_hint)
        }
        Err(DataError::Params(detail)) => reply::json(
            StatusCode::OK,
            &RpcError::invalid_params(id, detail).to_json(),
        ),
        Err(DataError::Failed(message)) => reply::json(
            StatusCode::OK,
            &RpcError::handler_failed(id, operation, message).to_json(),
        ),
        Err(DataError::Busy(e)) => busy(&e.to_coded()),
    }
}

/// `data/add` of `parts`.
async fn add(episode: &Episode, parts: Vec<Part>) -> Result<Answer, DataError> {
    episode.add_data(parts).await?;
    Ok(Answer::Empty {})
}

/// A data-plane operation's result: `{}`, or `data/get`'s `{"parts": [...]}`.
#[derive(Serialize)]
#[serde(untagged)]
enum Answer {
    Parts { parts: Vec<Part> },
    Empty {},
}

/// 429 with `Retry-After` and the coded error's body.
pub fn busy(error: &envhost_protocol::error::CodedError) -> Response {
    reply::retry_after(reply::coded(error))
}

async fn dispatch(
    episode: &Episode,
    operation: Operation,
    params: &RawValue,
) -> Result<Answer, DataError> {
    match operation {
        Operation::Reset => {
            episode.reset().await?;
            Ok(Answer::Empty {})
        }
        Operation::Add => {
            add(
                episode,
                parts_from_add_params(params).map_err(DataError::Params)?,
            )
            .await
        }
        Operation::Get => {
            let grant = if episode.catalog().description.exports_through_grants() {
                write_namespace(params)?
            } else {
                None
            };
            Ok(Answer::Parts {
                parts: episode.get_data_with(grant).await?,
            })
        }
    }
}

/// The `write_namespace` grant of `data/get`'s `params`, none when absent or null
/// (protocol.md#exports).
///
/// # Errors
/// [`DataError::Params`] for params that are not an object, or a grant that is not one (naming
/// every field that fails, never a value: grants carry signatures).
fn write_namespace(params: &RawValue) -> Result<Option<NamespaceGrant>, DataError> {
    let by_name = || DataError::Params("data/get takes its params by name".into());
    let params: Value = serde_json::from_str(params.get()).map_err(|_| by_name())?;
    let params = params.as_object().ok_or_else(by_name)?;
    match params.get("write_namespace") {
        None | Some(Value::Null) => Ok(None),
        Some(grant) => NamespaceGrant::parse(grant).map(Some).map_err(|fields| {
            DataError::Params(format!(
                "write_namespace is not a valid namespace grant ({})",
                fields.join(", ")
            ))
        }),
    }
}
