//! Extension routes (protocol.md#extensions): every path an extension method declares, dispatched
//! by path and verb.

use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};

use super::data_plane::busy;
use super::reply;
use super::state::Current;
use envhost_protocol::extension::{body_params, query_params};
use envhost_protocol::role::{ROLE_HEADER, rest_caller};

/// Serves the extension route at the request's path of the root episode (see [`dispatch`]).
pub async fn dispatch_root(
    current: Current,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    dispatch(current, method, uri.path(), uri.query(), &headers, body).await
}

/// Serves the extension route at the request's path under `/episodes/{id}` (see [`dispatch`]).
pub async fn dispatch_episode(
    current: Current,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = episode_path(uri.path());
    dispatch(current, method, path, uri.query(), &headers, body).await
}

/// The part of `path`, a path under `/episodes/{id}`, after its episode's prefix, as written
/// (`/agentenv/ext/x` of `/episodes/e1/agentenv/ext/x`).
fn episode_path(path: &str) -> &str {
    let under = path.strip_prefix("/episodes/").unwrap_or(path);
    under.find('/').map_or("/", |start| &under[start..])
}

/// Serves the extension method at `path` (within `episode`) and verb: 404 for a path no
/// extension declares, 405 (with `Allow`) for a verb it does not serve.
async fn dispatch(
    Current(episode): Current,
    method: Method,
    path: &str,
    query: Option<&str>,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let catalog = episode.catalog();
    let Some(route) = catalog.route(path, &method) else {
        let routes = catalog.routes(path);
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
        Ok(query_params(query.unwrap_or("")))
    } else {
        body_params(&body)
    };
    let params = match params {
        Ok(params) => params,
        Err(e) => return reply::coded(&e),
    };
    let caller = rest_caller(
        reply::header(headers, ROLE_HEADER),
        reply::header(headers, "mcp-session-id"),
    );
    match episode.call_extension(route, params, caller).await {
        Ok(answer) => reply::json(StatusCode::OK, &answer),
        Err(e) if e.status == 429 => busy(&e),
        Err(e) => reply::coded(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::episode_path;

    #[test]
    fn an_episodes_path_is_what_follows_its_id() {
        assert_eq!(
            episode_path("/episodes/e1/agentenv/ext/x"),
            "/agentenv/ext/x"
        );
        assert_eq!(episode_path("/episodes/e1/"), "/");
        assert_eq!(episode_path("/episodes/e%2F1/a%20b"), "/a%20b");
    }
}
