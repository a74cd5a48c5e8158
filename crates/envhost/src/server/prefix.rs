//! The URL prefix a server may also be reached under (serve.md#behind-a-proxy): with
//! `/pods/envhost-0`, `/pods/envhost-0/episodes/{id}/mcp` is `/episodes/{id}/mcp`, and the URLs
//! the server hands out (an episode's `url`, `agent_url` and `mcp_url`, a snapshot's `url`, the
//! `Location` of a new episode) begin with the prefix, so a proxy can route each one to the
//! process that holds the episode by its first segments alone, with no rewriting.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use http::Uri;
use tower::ServiceExt as _;

/// A path prefix: empty, or `/` and segments of letters, digits and `-._~` joined by `/`, with
/// no trailing slash (`/pods/envhost-0`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UrlPrefix(Arc<str>);

/// Why a text is no [`UrlPrefix`].
#[derive(Debug, thiserror::Error)]
#[error(
    "the URL prefix {0:?} is not a path like /pods/envhost-0: it must start with /, have no \
     empty segment nor a trailing /, and use only letters, digits and -._~"
)]
pub struct InvalidUrlPrefix(String);

impl UrlPrefix {
    /// `text` as a prefix; `""` is no prefix at all.
    ///
    /// # Errors
    /// [`InvalidUrlPrefix`] for anything but `""` or `/segment(/segment)*` of unreserved
    /// characters (RFC 3986 section 2.3); `.` and `..` are no segment.
    pub fn parse(text: &str) -> Result<Self, InvalidUrlPrefix> {
        if text.is_empty() {
            return Ok(Self::default());
        }
        let unreserved = |c: char| c.is_ascii_alphanumeric() || "-._~".contains(c);
        let valid = text.strip_prefix('/').is_some_and(|rest| {
            rest.split('/').all(|segment| {
                !segment.is_empty()
                    && segment != "."
                    && segment != ".."
                    && segment.chars().all(unreserved)
            })
        });
        if valid {
            Ok(Self(text.into()))
        } else {
            Err(InvalidUrlPrefix(text.to_owned()))
        }
    }

    /// The prefix's text, `""` when none.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `path` (which begins with `/`) as the server hands it out: after the prefix.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.0)
    }

    /// `router` answering both at its own paths and under the prefix. No prefix leaves it as it
    /// is; otherwise every request first has the prefix taken off its path when its path is the
    /// prefix or begins with the prefix and `/`.
    pub fn serve(&self, router: Router) -> Router {
        if self.0.is_empty() {
            return router;
        }
        let prefix = self.0.clone();
        Router::new().fallback_service(router.map_request(move |request| strip(&prefix, request)))
    }
}

/// `request` with `prefix` taken off the front of its path, when it is there.
fn strip(prefix: &str, mut request: Request) -> Request {
    let uri = request.uri();
    let rest = match uri.path().strip_prefix(prefix) {
        Some("") => "/",
        Some(rest) if rest.starts_with('/') => rest,
        _ => return request,
    };
    let rewritten = match uri.query() {
        Some(query) => format!("{rest}?{query}"),
        None => rest.to_owned(),
    };
    if let Ok(path_and_query) = rewritten.parse() {
        let mut parts = uri.clone().into_parts();
        parts.path_and_query = Some(path_and_query);
        if let Ok(uri) = Uri::from_parts(parts) {
            *request.uri_mut() = uri;
        }
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_paths_of_unreserved_segments_only() {
        assert_eq!(UrlPrefix::parse("").unwrap().as_str(), "");
        assert_eq!(
            UrlPrefix::parse("/pods/envhost-0").unwrap().as_str(),
            "/pods/envhost-0"
        );
        for bad in [
            "pods", "/", "/pods/", "//pods", "/a//b", "/a/../b", "/a/.", "/a b", "/a?b", "/a%2f",
            "/é",
        ] {
            assert!(UrlPrefix::parse(bad).is_err(), "{bad:?} was taken");
        }
    }

    fn stripped(prefix: &str, uri: &str) -> String {
        let request = Request::builder()
            .uri(uri)
            .body(Default::default())
            .unwrap();
        strip(prefix, request).uri().to_string()
    }

    #[test]
    fn strips_the_prefix_only_at_a_segment_boundary() {
        let p = "/pods/envhost-0";
        assert_eq!(stripped(p, "/pods/envhost-0"), "/");
        assert_eq!(stripped(p, "/pods/envhost-0/"), "/");
        assert_eq!(
            stripped(p, "/pods/envhost-0/episodes/x/mcp?a=1"),
            "/episodes/x/mcp?a=1"
        );
        assert_eq!(stripped(p, "/pods/envhost-01/mcp"), "/pods/envhost-01/mcp");
        assert_eq!(stripped(p, "/mcp"), "/mcp");
    }
}
