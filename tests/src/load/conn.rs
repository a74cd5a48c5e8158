//! HTTP/1.1 to the environment server: its address, one keep-alive connection driven by the task
//! that uses it, and the requests sent over it.

use std::pin::Pin;

use anyhow::{Context as _, anyhow, bail};
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Request, Response, Uri};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Where the environment server listens, from `--url`, and the base path of the routes used.
#[derive(Clone, Debug)]
pub struct Target {
    /// The host to connect to (an IPv6 literal without its brackets).
    host: String,
    /// The port to connect to.
    port: u16,
    /// The `Host` header of every request.
    authority: HeaderValue,
    /// The URL's path without its trailing slash: every route is appended to it.
    base_path: String,
}

impl Target {
    /// Reads a plain `http://host[:port][/base]` URL.
    pub fn parse(url: &str) -> anyhow::Result<Self> {
        let uri: Uri = url
            .parse()
            .with_context(|| format!("--url {url:?} is not a URL"))?;
        if uri.scheme_str() != Some("http") {
            bail!("--url {url:?}: only plain http:// servers can be loaded");
        }
        let authority = uri
            .authority()
            .ok_or_else(|| anyhow!("--url {url:?} names no host"))?;
        Ok(Self {
            host: authority
                .host()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port: authority.port_u16().unwrap_or(80),
            authority: HeaderValue::from_str(authority.as_str())?,
            base_path: uri.path().trim_end_matches('/').to_owned(),
        })
    }

    /// The URL's authority, `host[:port]`.
    pub fn authority_str(&self) -> &str {
        self.authority.to_str().unwrap_or(&self.host)
    }

    /// The request path of `route` (absolute, e.g. `/agentenv`) on this server.
    pub fn path(&self, route: &str) -> String {
        format!("{}/{}", self.base_path, route.trim_start_matches('/'))
    }

    /// The request URI of `route` (see [`Target::path`]).
    ///
    /// # Errors
    /// When the path is not a valid URI (a route with spaces, say).
    pub fn uri(&self, route: &str) -> anyhow::Result<Uri> {
        let path = self.path(route);
        path.parse()
            .with_context(|| format!("{path:?} is not a request path"))
    }

    /// The full URL of `route`, for reports.
    pub fn url(&self, route: &str) -> String {
        format!("http://{}{}", self.authority_str(), self.path(route))
    }

    /// The same server with `path` appended to the base path: where an episode served under
    /// `path` (e.g. `/episodes/<id>/`, as `POST /episodes` answers it) has its routes.
    pub fn nested(&self, path: &str) -> Self {
        Self {
            base_path: self.path(path).trim_end_matches('/').to_owned(),
            ..self.clone()
        }
    }
}

/// The hyper connection future of a [`Conn`], which reads and writes its socket.
type Driver = Pin<Box<http1::Connection<TokioIo<TcpStream>, Full<Bytes>>>>;

/// One keep-alive HTTP/1.1 connection, driven by the task that sends on it (no connection task to
/// hand each request to and back).
pub struct Conn {
    /// Queues requests onto the connection.
    sender: http1::SendRequest<Full<Bytes>>,
    /// The connection itself; `None` once it has ended or been abandoned.
    driver: Option<Driver>,
}

impl Conn {
    /// Connects to `target` (with TCP_NODELAY: requests are small and latency counts).
    ///
    /// # Errors
    /// When the server cannot be reached.
    pub async fn open(target: &Target) -> anyhow::Result<Self> {
        let stream = TcpStream::connect((target.host.as_str(), target.port))
            .await
            .with_context(|| format!("connecting to {}:{}", target.host, target.port))?;
        stream.set_nodelay(true)?;
        let (sender, driver) = http1::handshake(TokioIo::new(stream)).await?;
        Ok(Self {
            sender,
            driver: Some(Box::pin(driver)),
        })
    }

    /// Whether the connection can carry no more requests.
    pub fn is_closed(&self) -> bool {
        self.driver.is_none() || self.sender.is_closed()
    }

    /// Drops the connection, e.g. after giving up on an answer that may still come.
    pub fn abandon(&mut self) {
        self.driver = None;
    }

    /// Sends `request` and reads its whole answer.
    ///
    /// # Errors
    /// When the connection fails before the whole answer is in.
    pub async fn send(&mut self, request: Request<Full<Bytes>>) -> anyhow::Result<Response<Bytes>> {
        let sender = &mut self.sender;
        let exchange = async move {
            let response = sender.send_request(request).await?;
            let (parts, body) = response.into_parts();
            let body = body.collect().await?.to_bytes();
            Ok::<_, hyper::Error>(Response::from_parts(parts, body))
        };
        tokio::pin!(exchange);
        let Some(driver) = self.driver.as_mut() else {
            bail!("the connection is closed");
        };
        let ended = tokio::select! {
            biased;
            answer = &mut exchange => return Ok(answer?),
            ended = driver => ended,
        };
        // The server closed the connection; the answer may still have come in before that.
        self.driver = None;
        exchange.await.map_err(|e| match ended {
            Err(cause) => anyhow!("{e} ({cause})"),
            Ok(()) => e.into(),
        })
    }

    /// Sends a `method` request for `route` of `target` with `body` and the plain headers
    /// ([`base_headers`]), and reads its whole answer.
    ///
    /// # Errors
    /// When the route is not a valid path or the connection fails.
    pub async fn exchange(
        &mut self,
        target: &Target,
        method: Method,
        route: &str,
        body: Bytes,
    ) -> anyhow::Result<Response<Bytes>> {
        let uri = target.uri(route)?;
        self.send(request(method, &uri, &base_headers(target), body))
            .await
    }
}

/// A request with the given parts, ready to send on a [`Conn`].
pub fn request(
    method: Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Request<Full<Bytes>> {
    let mut request = Request::new(Full::new(body));
    *request.method_mut() = method;
    *request.uri_mut() = uri.clone();
    *request.headers_mut() = headers.clone();
    request
}

/// Fails unless the answer's status is 2xx, quoting the start of its body.
///
/// # Errors
/// When the status is not 2xx.
pub fn require_success(response: &Response<Bytes>) -> anyhow::Result<()> {
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let body = response.body();
    let shown = String::from_utf8_lossy(&body[..body.len().min(300)]);
    bail!("HTTP {status}: {shown}")
}

/// The plain headers of a request to `target`: its host and JSON content.
pub fn base_headers(target: &Target) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::HOST, target.authority.clone());
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_keep_a_base_path() {
        let target = Target::parse("http://[::1]:8080/svc/x/").unwrap();
        assert_eq!((target.host.as_str(), target.port), ("::1", 8080));
        assert_eq!(target.path("/mcp"), "/svc/x/mcp");
        assert!(Target::parse("https://example.com").is_err());
        let episode = target.nested("/episodes/abc/");
        assert_eq!(episode.path("/mcp"), "/svc/x/episodes/abc/mcp");
        assert_eq!(
            episode.url("/agentenv"),
            "http://[::1]:8080/svc/x/episodes/abc/agentenv"
        );
    }
}
