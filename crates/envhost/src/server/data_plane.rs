//! `POST /agentenv`: the JSON-RPC data plane (protocol.md#data-plane). Every answer is HTTP 200,
//! except a call refused because the episode's queue is full (429 with `Retry-After`).

use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};

use super::reply;
use super::state::Current;
use crate::embedding::{DataError, Episode};
use envhost_protocol::description::Operation;
use envhost_protocol::jsonrpc::{self, RpcError};
use envhost_protocol::part::Part;

/// Seconds a caller refused as busy is asked to wait.
pub const RETRY_AFTER_SECONDS: &str = "1";

/// Handles one data-plane request (protocol.md#envelope).
pub async fn rpc(Current(episode): Current, body: Bytes) -> Response {
    let served = &episode.catalog().description.operations;
    let request = match jsonrpc::parse_request(&body, served) {
        Ok(request) => request,
        Err(e) => return reply::json(StatusCode::OK, &e.to_json()),
    };
    let answer = match dispatch(&episode, request.operation, request.params).await {
        Ok(result) => jsonrpc::success(request.id, result),
        Err(DataError::Params(detail)) => RpcError::invalid_params(request.id, detail).to_json(),
        Err(DataError::Failed(message)) => {
            RpcError::handler_failed(request.id, request.operation, message).to_json()
        }
        Err(DataError::Busy(e)) => return busy(&e.to_coded()),
    };
    reply::json(StatusCode::OK, &answer)
}

/// 429 with `Retry-After` and the coded error's body.
pub fn busy(error: &envhost_protocol::error::CodedError) -> Response {
    let mut response = reply::coded(error);
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(RETRY_AFTER_SECONDS),
    );
    response.into_response()
}

async fn dispatch(
    episode: &Episode,
    operation: Operation,
    params: Value,
) -> Result<Value, DataError> {
    match operation {
        Operation::Reset => {
            episode.reset().await?;
            Ok(json!({}))
        }
        Operation::Add => {
            episode.add_data(add_params(params)?).await?;
            Ok(json!({}))
        }
        Operation::Get => Ok(json!({"parts": episode.get_data().await?})),
    }
}

/// The parts of `data/add` params (protocol.md#add-data): an object with a non-empty `parts` list
/// of valid parts.
fn add_params(params: Value) -> Result<Vec<Part>, DataError> {
    let Value::Object(mut params) = params else {
        return Err(DataError::Params(
            "data/add takes its params by name: {\"parts\": [...]}".into(),
        ));
    };
    let items = match params.remove("parts") {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(DataError::Params("parts: input should be a list".into())),
        None => return Err(DataError::Params("parts: field required".into())),
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, p)| Part::from_json(p).map_err(|e| DataError::Params(format!("parts[{i}]: {e}"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(params: Value) -> String {
        match add_params(params) {
            Err(DataError::Params(d)) => d,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn add_params_need_a_list_of_valid_parts() {
        assert!(detail(json!([1])).contains("by name"));
        assert_eq!(detail(json!({})), "parts: field required");
        assert!(detail(json!({"parts": [{"kind": "nope"}]})).starts_with("parts[0]:"));
        assert!(detail(json!({"parts": [["text", "x", null]]})).starts_with("parts[0]:"));
        let one = json!({"parts": [{"kind": "text", "text": "x"}], "extra": 1});
        assert_eq!(add_params(one).unwrap().len(), 1);
    }
}
