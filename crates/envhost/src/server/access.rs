//! Who may call what (serve.md#access, http-api.md#access).
//!
//! With an operator token, every route answers only a request that presents it, as
//! `Authorization: Bearer TOKEN` or as the password of HTTP Basic authentication (what a client
//! sends for a URL `http://user:TOKEN@host/`), except three: `GET /ready`, the *agent URLs*
//! `/agent/{id}/{secret}/`, which serve one episode's card and MCP endpoint to whoever holds
//! the episode's secret, and the *deployment URLs* `/deployments/{id}/{secret}/`, which serve
//! one agent deployment to whoever holds its secret. The guard decides from the path alone, before any route is chosen, so
//! a route added later is guarded without naming it. Without a token every route is open.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use http::{HeaderMap, HeaderValue, header};

use super::a2a::deployment_route;
use super::reply;
use crate::ids::Secret;
use envhost_protocol::card::{MCP_PATH, WELL_KNOWN_PATH};
use envhost_protocol::error::{Applied, CodedError};

/// The first segment of every agent URL.
pub const AGENT_PREFIX: &str = "/agent";

/// The paths an agent URL serves after its base: the card, MCP, and MCP's trailing-slash
/// redirect.
const AGENT_PATHS: [&str; 3] = [WELL_KNOWN_PATH, MCP_PATH, "/mcp/"];

/// The paths open to every caller besides the agent URLs.
const OPEN_PATHS: [&str; 1] = ["/ready"];

/// The fewest characters an operator token may have.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Why a token is refused at start-up.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Fewer than [`MIN_TOKEN_CHARS`] characters.
    #[error(
        "the operator token has {0} characters; give at least {MIN_TOKEN_CHARS} (make one with \
         `openssl rand -hex 32`)"
    )]
    Short(usize),
    /// Whitespace or control characters inside the token, or characters a header cannot carry.
    #[error(
        "the operator token holds whitespace, control or non-ASCII characters, which an HTTP \
         header cannot carry as they are; use letters, digits and punctuation"
    )]
    Unprintable,
}

/// The operator's token, kept only as its BLAKE3 digest: a presented token is hashed and the
/// digests compared in constant time (`blake3::Hash`'s equality), so neither the comparison nor
/// the token's length shows in the time an answer takes.
pub struct ControlToken {
    digest: blake3::Hash,
}

impl ControlToken {
    /// The token `text`, without the whitespace around it (a file's final newline).
    ///
    /// # Errors
    /// [`TokenError`] for a token shorter than [`MIN_TOKEN_CHARS`] or one a header cannot carry.
    pub fn new(text: &str) -> Result<Self, TokenError> {
        let token = text.trim();
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::Unprintable);
        }
        if token.len() < MIN_TOKEN_CHARS {
            return Err(TokenError::Short(token.len()));
        }
        Ok(Self {
            digest: blake3::hash(token.as_bytes()),
        })
    }

    /// Whether `presented` is the token.
    pub fn matches(&self, presented: &[u8]) -> bool {
        blake3::hash(presented) == self.digest
    }
}

/// Who may call what on one server: open to all, or guarded by an operator token. Cheap to
/// clone.
#[derive(Clone, Default)]
pub struct Access {
    token: Option<Arc<ControlToken>>,
}

impl Access {
    /// Every route open to every caller.
    pub fn open() -> Self {
        Self::default()
    }

    /// Every route but the open ones guarded by `token`.
    pub fn guarded(token: ControlToken) -> Self {
        Self {
            token: Some(Arc::new(token)),
        }
    }

    /// Whether an operator token guards the server.
    pub fn is_guarded(&self) -> bool {
        self.token.is_some()
    }

    /// Whether a request to `path` with `headers` may proceed.
    fn admits(&self, path: &str, headers: &HeaderMap) -> Result<(), Refusal> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        if OPEN_PATHS.contains(&path)
            || agent_route(path).is_some()
            || deployment_route(path).is_some()
        {
            return Ok(());
        }
        match presented(headers) {
            None => Err(Refusal::Missing),
            Some(presented) if token.matches(&presented) => Ok(()),
            Some(_) => Err(Refusal::Wrong),
        }
    }
}

/// Where an agent reaches episode `id` whose secret is `secret`: `/agent/{id}/{secret}/`, the
/// base URL of its card (`.well-known/agent-env.json`) and MCP endpoint (`mcp`).
pub fn agent_url(id: &str, secret: &Secret) -> String {
    format!("{AGENT_PREFIX}/{id}/{}/", secret.to_hex())
}

/// The MCP endpoint of [`agent_url`]: `/agent/{id}/{secret}/mcp`.
pub fn agent_mcp_url(id: &str, secret: &Secret) -> String {
    format!("{AGENT_PREFIX}/{id}/{}{MCP_PATH}", secret.to_hex())
}

/// The id, the secret and the path after them of an agent URL's route (`/agent/{id}/{secret}`
/// followed by one of the card's or MCP's paths); none for any other path.
pub fn agent_route(path: &str) -> Option<(&str, &str, &str)> {
    let rest = path.strip_prefix(AGENT_PREFIX)?.strip_prefix('/')?;
    let (id, rest) = rest.split_once('/')?;
    let (secret, _) = rest.split_once('/')?;
    let after = &rest[secret.len()..];
    let well_formed = !id.is_empty() && !secret.is_empty() && AGENT_PATHS.contains(&after);
    well_formed.then_some((id, secret, after))
}

/// The credential a request presents: a bearer token, or the password of Basic authentication.
fn presented(headers: &HeaderMap) -> Option<Vec<u8>> {
    let value = headers.get(header::AUTHORIZATION)?.as_bytes();
    let (scheme, credential) = value.split_at(value.iter().position(|b| *b == b' ')?);
    let credential = credential.trim_ascii();
    if scheme.eq_ignore_ascii_case(b"bearer") {
        return Some(credential.to_vec());
    }
    if scheme.eq_ignore_ascii_case(b"basic") {
        let decoded = BASE64.decode(credential).ok()?;
        let colon = decoded.iter().position(|b| *b == b':')?;
        return Some(decoded[colon + 1..].to_vec());
    }
    None
}

/// Why the guard refused a request.
enum Refusal {
    Missing,
    Wrong,
}

/// 401 `unauthorized`, with `WWW-Authenticate` naming both schemes accepted.
fn unauthorized(refusal: &Refusal) -> Response {
    let message = match refusal {
        Refusal::Missing => "this route needs the operator token, and the request carries none",
        Refusal::Wrong => "the request's credential is not the operator token",
    };
    let mut error = CodedError::new("unauthorized", message);
    error.status = 401;
    error.applied = Applied::No;
    error.hint = Some(
        "send `Authorization: Bearer TOKEN` (or put the token in the URL as \
         http://envhost:TOKEN@host:port/); an agent uses its episode's mcp_url, which needs none"
            .into(),
    );
    let mut response = reply::coded(&error);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"envhost\", Basic realm=\"envhost\""),
    );
    response
}

/// 403 `agent_url_refused`: an agent URL whose id names no open episode or whose secret is not
/// that episode's, the same answer whichever part is wrong (http-api.md#agent-urls). Not 404,
/// which an MCP client takes for an ended session ("Session terminated") rather than a wrong URL.
pub fn agent_url_refused() -> Response {
    let mut error = CodedError::new(
        "agent_url_refused",
        "this agent URL opens no episode: its id or its secret is wrong, or the episode is closed",
    );
    error.status = 403;
    error.hint = Some(
        "use the whole mcp_url (or agent_url) that creating the episode answered, after the \
         server's address"
            .into(),
    );
    reply::coded(&error)
}

/// The middleware that applies `access` to every request (`axum::middleware::from_fn_with_state`).
pub async fn guard(State(access): State<Access>, request: Request, next: Next) -> Response {
    match access.admits(request.uri().path(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => unauthorized(&refusal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, authorization.parse().unwrap());
        headers
    }

    #[test]
    fn tokens_are_long_printable_and_trimmed() {
        assert!(matches!(
            ControlToken::new("short"),
            Err(TokenError::Short(5))
        ));
        assert!(matches!(
            ControlToken::new("0123456789 abcdef"),
            Err(TokenError::Unprintable)
        ));
        let token = ControlToken::new("  0123456789abcdef\n").unwrap();
        assert!(token.matches(b"0123456789abcdef"));
        assert!(!token.matches(b"0123456789abcdeF"));
    }

    #[test]
    fn a_guarded_server_admits_the_token_as_bearer_or_basic_password() {
        let access = Access::guarded(ControlToken::new("0123456789abcdef").unwrap());
        let basic = format!("Basic {}", BASE64.encode("envhost:0123456789abcdef"));
        assert!(
            access
                .admits("/episodes", &headers("Bearer 0123456789abcdef"))
                .is_ok()
        );
        assert!(
            access
                .admits("/episodes", &headers("bearer  0123456789abcdef"))
                .is_ok()
        );
        assert!(access.admits("/episodes", &headers(&basic)).is_ok());
        assert!(matches!(
            access.admits("/episodes", &HeaderMap::new()),
            Err(Refusal::Missing)
        ));
        assert!(matches!(
            access.admits("/episodes", &headers("Bearer nope")),
            Err(Refusal::Wrong)
        ));
        assert!(
            access
                .admits("/x", &headers("Token 0123456789abcdef"))
                .is_err()
        );
        assert!(access.admits("/ready", &HeaderMap::new()).is_ok());
        assert!(
            Access::open()
                .admits("/episodes", &HeaderMap::new())
                .is_ok()
        );
    }

    #[test]
    fn agent_routes_are_the_card_and_mcp_under_an_id_and_a_secret() {
        assert_eq!(agent_route("/agent/e1/s1/mcp"), Some(("e1", "s1", "/mcp")));
        assert_eq!(
            agent_route("/agent/e1/s1/mcp/"),
            Some(("e1", "s1", "/mcp/"))
        );
        assert_eq!(
            agent_route("/agent/e1/s1/.well-known/agent-env.json"),
            Some(("e1", "s1", WELL_KNOWN_PATH))
        );
        for other in [
            "/agent/e1/s1/agentenv",
            "/agent/e1/s1/",
            "/agent/e1/mcp",
            "/agent//s1/mcp",
            "/agent/e1//mcp",
            "/agent/e1/s1/mcp/x",
            "/agent/e1/s1/tools/enable",
            "/agents/e1/s1/mcp",
            "/episodes/e1/mcp",
        ] {
            assert_eq!(agent_route(other), None, "{other}");
        }
    }
}
