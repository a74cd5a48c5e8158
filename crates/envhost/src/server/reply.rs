//! Small HTTP helpers shared by the routes.

use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde::Serialize;

use envhost_protocol::error::CodedError;
use envhost_protocol::json::to_python_json_sized;

/// A JSON response encoded as the reference SDK's own routes encode it (protocol.md#json-encoding).
pub fn json(status: StatusCode, value: &impl Serialize) -> Response {
    json_sized(status, value, 128)
}

/// [`json`] of a value that encodes to about `size_hint` bytes, written into a body of that
/// size to start with.
pub fn json_sized(status: StatusCode, value: &impl Serialize, size_hint: usize) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        to_python_json_sized(value, size_hint),
    )
        .into_response()
}

/// A coded error's answer: its status and `{"ok": false, "error": {...}}`
/// (protocol.md#coded-errors).
pub fn coded(error: &CodedError) -> Response {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::BAD_REQUEST);
    json(status, &error.to_body())
}

/// Seconds a refused caller that may retry is asked to wait (`Retry-After`).
pub const RETRY_AFTER_SECONDS: &str = "1";

/// [`coded`], with `Retry-After` when the error is retryable: the answer to a refusal that may
/// succeed later (`busy`, `too_many_episodes`, `too_many_snapshots`, `unavailable`;
/// http-api.md#conventions).
pub fn coded_retry(error: &CodedError) -> Response {
    let response = coded(error);
    if error.retryable {
        retry_after(response)
    } else {
        response
    }
}

/// `response` with `Retry-After`.
pub fn retry_after(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(RETRY_AFTER_SECONDS),
    );
    response
}

/// A header's value as text, when present and visible ASCII.
pub fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}
