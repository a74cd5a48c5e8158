//! DNS-rebinding protection (serve.md#allowed-hosts): with `--allowed-hosts`, every request's
//! `Host` header, and its `Origin` header when it has one, must name an allowed host, as MCP's
//! streamable HTTP transport asks of a server on loopback. The reference leaves it off, and so
//! does envhost unless told.

use std::str::FromStr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode, header};

/// One allowed host: a name or address, with a port or any port.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    /// Lowercase; an IPv6 address keeps its brackets (`[::1]`).
    host: String,
    /// `None`: any port.
    port: Option<u16>,
}

/// Why a rule could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not a host, host:port or host:* (e.g. localhost, 127.0.0.1:8080, [::1]:*)")]
pub struct BadRule(String);

impl FromStr for Rule {
    type Err = BadRule;

    fn from_str(text: &str) -> Result<Self, BadRule> {
        let bad = || BadRule(text.to_owned());
        let (host, port) = split(text).ok_or_else(bad)?;
        let port = match port {
            None | Some("*") => None,
            Some(port) => Some(port.parse().map_err(|_| bad())?),
        };
        Ok(Self { host, port })
    }
}

/// `host[:port]` split, the host lowercased; `None` when there is no host.
fn split(text: &str) -> Option<(String, Option<&str>)> {
    let text = text.trim();
    let (host, port) = if text.starts_with('[') {
        let end = text.find(']')?;
        let rest = &text[end + 1..];
        (&text[..=end], rest.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    (!host.is_empty() && !host.contains(['/', '@', ' '])).then(|| (host.to_ascii_lowercase(), port))
}

/// The hosts a server answers to.
#[derive(Clone, Debug, Default)]
pub struct AllowedHosts(Arc<[Rule]>);

impl AllowedHosts {
    /// The hosts of `rules`, each `host`, `host:port` or `host:*`; a host without a port allows
    /// any.
    ///
    /// # Errors
    /// [`BadRule`] naming the first rule that is none of those.
    pub fn parse<'a>(rules: impl IntoIterator<Item = &'a str>) -> Result<Self, BadRule> {
        let rules = rules
            .into_iter()
            .flat_map(|r| r.split(','))
            .filter(|r| !r.trim().is_empty())
            .map(Rule::from_str)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self(rules.into()))
    }

    /// Whether `authority` (`host[:port]`) is allowed.
    fn allows(&self, authority: &str) -> bool {
        let Some((host, port)) = split(authority) else {
            return false;
        };
        let port = match port.map(u16::from_str) {
            None => None,
            Some(Ok(port)) => Some(port),
            Some(Err(_)) => return false,
        };
        self.0
            .iter()
            .any(|rule| rule.host == host && (rule.port.is_none() || rule.port == port))
    }

    /// The refusal of a request with `headers`, if any: `421` for a `Host` not allowed (or
    /// none), `403` for an `Origin` not allowed.
    fn refusal(&self, headers: &HeaderMap) -> Option<(StatusCode, &'static str)> {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
        if !host.is_some_and(|h| self.allows(h)) {
            return Some((StatusCode::MISDIRECTED_REQUEST, "Invalid Host header"));
        }
        let origin = headers.get(header::ORIGIN)?;
        let allowed = origin
            .to_str()
            .ok()
            .and_then(|o| o.split_once("://"))
            .is_some_and(|(_, authority)| self.allows(authority.trim_end_matches('/')));
        (!allowed).then_some((StatusCode::FORBIDDEN, "Invalid Origin header"))
    }
}

/// Refuses a request whose `Host` or `Origin` is not allowed (plain text, as MCP's Python SDK
/// words it); passes the others on.
pub async fn guard(State(allowed): State<AllowedHosts>, request: Request, next: Next) -> Response {
    match allowed.refusal(request.headers()) {
        Some(refusal) => refusal.into_response(),
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        headers
    }

    #[test]
    fn loopback_names_pass_and_other_hosts_and_origins_are_refused() {
        let allowed = AllowedHosts::parse(["localhost,127.0.0.1", "[::1]:*", "box:8080"]).unwrap();
        for ok in [
            "localhost:18765",
            "LOCALHOST",
            "127.0.0.1:1",
            "[::1]:9",
            "box:8080",
        ] {
            assert_eq!(allowed.refusal(&headers(ok, None)), None, "{ok}");
        }
        let pass = headers("127.0.0.1:5", Some("http://localhost:5"));
        assert_eq!(allowed.refusal(&pass), None);
        for bad in [
            "evil.example.com",
            "box:8081",
            "127.0.0.1:x",
            "localhost.evil:1",
        ] {
            let refused = allowed.refusal(&headers(bad, None)).map(|r| r.0);
            assert_eq!(refused, Some(StatusCode::MISDIRECTED_REQUEST), "{bad}");
        }
        let evil = headers("localhost:1", Some("http://evil.example.com"));
        assert_eq!(
            allowed.refusal(&evil).map(|r| r.0),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            allowed.refusal(&HeaderMap::new()).map(|r| r.0),
            Some(StatusCode::MISDIRECTED_REQUEST)
        );
    }

    #[test]
    fn bad_rules_are_named() {
        assert!(AllowedHosts::parse(["localhost:http"]).is_err());
        assert!(AllowedHosts::parse(["http://x"]).is_err());
        assert!(AllowedHosts::parse([":80"]).is_err());
    }
}
