//! Brings rmcp's HTTP-level answers on `/mcp` in line with the reference's (§5.1), where clients
//! or gateways read them: `DELETE` of a session answers 200 (the official Python client warns on
//! rmcp's 202), every answer of a session echoes `mcp-session-id`, and HTTP-level errors carry a
//! JSON-RPC error object (`"id": "server-error"`) instead of plain text, a body that is not
//! JSON-RPC getting 400 with -32700 rather than 415.

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::json;

/// The most of an error body that is read to rewrite it.
const ERROR_BODY_LIMIT: usize = 64 << 10;

/// The session header.
const SESSION_HEADER: &str = "mcp-session-id";

/// The middleware: wraps the rmcp service at `/mcp`.
pub async fn reference_framing(request: Request, next: Next) -> Response {
    let delete = request.method() == Method::DELETE;
    let session = request.headers().get(SESSION_HEADER).cloned();
    let mut response = next.run(request).await;
    let status = response.status();
    if status.is_client_error() && response.headers().get(header::CONTENT_TYPE).is_none() {
        return json_rpc_error(response).await;
    }
    if delete && status == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    if let Some(session) = session.filter(|_| status.is_success()) {
        response
            .headers_mut()
            .entry(SESSION_HEADER)
            .or_insert(session);
    }
    response
}

/// A plain-text error answer as the reference's JSON-RPC error object.
async fn json_rpc_error(response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let text = to_bytes(body, ERROR_BODY_LIMIT).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).into_owned();
    let (status, code, message) = match parts.status {
        StatusCode::NOT_FOUND => (parts.status, -32600, "Session not found".to_owned()),
        StatusCode::UNSUPPORTED_MEDIA_TYPE if text.starts_with("fail to deserialize") => (
            StatusCode::BAD_REQUEST,
            -32700,
            format!("Parse error: {text}"),
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (StatusCode::BAD_REQUEST, -32600, text),
        StatusCode::BAD_REQUEST if text.contains("Session ID is required") => (
            parts.status,
            -32600,
            "Bad Request: Missing session ID".to_owned(),
        ),
        status => (status, -32600, text),
    };
    let body = json!({"jsonrpc": "2.0", "id": "server-error", "error": {"code": code, "message": message}});
    let mut out = (status, Body::from(body.to_string())).into_response();
    let headers = out.headers_mut();
    for (name, value) in parts
        .headers
        .iter()
        .filter(|(n, _)| *n != header::CONTENT_LENGTH)
    {
        headers.insert(name, value.clone());
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    out
}
