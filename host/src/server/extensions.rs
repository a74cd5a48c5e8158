//! Extension routes (§8): every path an extension method declares, dispatched by path and verb.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use serde_json::Value;

use super::mount::Mount;
use super::reply;
use crate::protocol::error::{Applied, CodedError, EXTENSION_FAILED};
use crate::protocol::extension::{bind, body_params, query_params};
use crate::protocol::role::{ROLE_HEADER, rest_caller};
use crate::runtime::{CallContext, CallError};

/// `extension_failed` (500, applied unknown): the extension failed without a coded answer.
fn failed(message: String) -> CodedError {
    CodedError {
        code: EXTENSION_FAILED.into(),
        message,
        retryable: false,
        applied: Applied::Unknown,
        hint: None,
        status: 500,
    }
}

/// Serves the extension method at the request's path and verb: 404 for a path no extension
/// declares, 405 (with `Allow`) for a verb it does not serve.
pub async fn dispatch(
    State(mount): State<Arc<Mount>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path();
    let Some(route) = mount.catalog.route(path, &method) else {
        let routes = mount.catalog.routes(path);
        if routes.is_empty() {
            return (StatusCode::NOT_FOUND, "Not Found").into_response();
        }
        let allow = routes
            .iter()
            .map(|r| r.method.http_method.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let allow = HeaderValue::from_str(&allow).unwrap_or(HeaderValue::from_static(""));
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, allow)],
            "Method Not Allowed",
        )
            .into_response();
    };
    let params = if route.method.http_method == Method::GET {
        Ok(query_params(uri.query().unwrap_or("")))
    } else {
        body_params(&body)
    };
    let request = match params.and_then(|p| bind(p, &route.method.request_schema)) {
        Ok(request) => Value::Object(request).to_string(),
        Err(e) => return reply::coded(&e),
    };
    let caller = rest_caller(
        reply::header(&headers, ROLE_HEADER),
        reply::header(&headers, "mcp-session-id"),
    );
    let (uri, op) = (&route.uri, &route.method.op);
    let context = CallContext::new(caller, format!("{uri}#{op}"), request.clone());
    match mount
        .episode
        .call_extension(uri, op, request, context)
        .await
    {
        Ok(answer) => match serde_json::from_str::<Value>(&answer) {
            Ok(value) => reply::json(StatusCode::OK, &value),
            Err(e) => reply::coded(&failed(format!("the extension answered invalid JSON: {e}"))),
        },
        Err(CallError::Guest(e)) => reply::coded(&e),
        Err(other) => reply::coded(&failed(other.to_string())),
    }
}
