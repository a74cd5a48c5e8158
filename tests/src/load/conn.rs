//! HTTP/1.1 to the environment server: its address, one keep-alive connection driven by the task
//! that uses it, and the requests sent over it.

use anyhow::{Context as _, anyhow, bail};
use bytes::{Bytes, BytesMut};
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Response, StatusCode, Uri};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
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
    /// `Authorization: Basic ...` of the URL's user-info (`http://user:TOKEN@host/`), sent with
    /// every request, as envhost reads an operator token from it.
    authorization: Option<HeaderValue>,
}

impl Target {
    /// Reads a plain `http://[user:password@]host[:port][/base]` URL.
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
        let (userinfo, host_port) = match authority.as_str().rsplit_once('@') {
            Some((userinfo, host_port)) => (Some(userinfo), host_port),
            None => (None, authority.as_str()),
        };
        let authorization = userinfo
            .map(|userinfo| {
                use base64::Engine as _;
                let encoded = base64::engine::general_purpose::STANDARD.encode(userinfo);
                HeaderValue::from_str(&format!("Basic {encoded}"))
            })
            .transpose()?;
        Ok(Self {
            host: authority
                .host()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port: authority.port_u16().unwrap_or(80),
            authority: HeaderValue::from_str(host_port)?,
            base_path: uri.path().trim_end_matches('/').to_owned(),
            authorization,
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

/// The most header lines an answer may have.
const MAX_HEADERS: usize = 32;

/// One keep-alive HTTP/1.1 connection, driven by the task that sends on it: each request is
/// written whole, its answer read into a buffer the connection reuses from its start and parsed
/// with httparse.
///
/// A load client shares the machine with the server it measures, so it spends as little as it
/// can per call: hyper's client hands every request through a dispatch channel and builds
/// header maps both ways, which doubled the client's CPU per call across 1,000 connections
/// (BENCHMARKS.md, "Many episodes"). Answer bodies come with a `Content-Length` (envhost's) or
/// chunked (the Python reference's SSE answers).
pub struct Conn {
    /// The socket; `None` once the connection has ended or been abandoned.
    stream: Option<TcpStream>,
    /// The answer being read.
    buf: BytesMut,
}

/// What the head of an answer says.
struct Head {
    status: StatusCode,
    headers: HeaderMap,
    /// The head's length in bytes.
    len: usize,
    /// How the body is delimited.
    body: Delimited,
    /// Whether the server closes the connection after this answer.
    close: bool,
}

/// How an answer's body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Delimited {
    /// By its `Content-Length`, in bytes.
    Length(usize),
    /// In chunks (`Transfer-Encoding: chunked`).
    Chunked,
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
        Ok(Self {
            stream: Some(stream),
            buf: BytesMut::with_capacity(4096),
        })
    }

    /// Whether the connection can carry no more requests.
    pub fn is_closed(&self) -> bool {
        self.stream.is_none()
    }

    /// Drops the connection, e.g. after giving up on an answer that may still come.
    pub fn abandon(&mut self) {
        self.stream = None;
    }

    /// Sends `request` (made by [`request`]) and reads its whole answer.
    ///
    /// # Errors
    /// When the connection fails before the whole answer is in, or the answer is not HTTP/1.1
    /// with a `Content-Length` or chunked body.
    pub async fn send(&mut self, request: Bytes) -> anyhow::Result<Response<Bytes>> {
        let Some(stream) = self.stream.as_mut() else {
            bail!("the connection is closed");
        };
        let answer = exchange(stream, &mut self.buf, &request).await;
        if !matches!(answer, Ok((_, false))) {
            self.stream = None;
        }
        answer.map(|(response, _)| response)
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
        self.send(request(method, &uri, &base_headers(target), &body))
            .await
    }
}

/// Writes `request` on `stream` and reads its answer into `buf`: the answer, and whether the
/// server closes the connection after it.
async fn exchange(
    stream: &mut TcpStream,
    buf: &mut BytesMut,
    request: &[u8],
) -> anyhow::Result<(Response<Bytes>, bool)> {
    stream.write_all(request).await?;
    buf.clear();
    let head = loop {
        if let Some(head) = parse_head(buf)? {
            break head;
        }
        read_more(stream, buf).await?;
    };
    let body = match head.body {
        Delimited::Length(length) => {
            let end = head.len + length;
            while buf.len() < end {
                read_more(stream, buf).await?;
            }
            Bytes::copy_from_slice(&buf[head.len..end])
        }
        Delimited::Chunked => read_chunks(stream, buf, head.len).await?,
    };
    let mut response = Response::new(body);
    *response.status_mut() = head.status;
    *response.headers_mut() = head.headers;
    Ok((response, head.close))
}

/// The chunked body that starts at `start` in `buf`, reading the rest of it from `stream`
/// (trailers are skipped).
async fn read_chunks(
    stream: &mut TcpStream,
    buf: &mut BytesMut,
    start: usize,
) -> anyhow::Result<Bytes> {
    let mut body = Vec::new();
    let mut at = start;
    loop {
        let (size_line, size) = loop {
            match httparse::parse_chunk_size(&buf[at..]) {
                Ok(httparse::Status::Complete(parsed)) => break parsed,
                Ok(httparse::Status::Partial) => read_more(stream, buf).await?,
                Err(_) => bail!("a malformed chunk size in a chunked answer"),
            }
        };
        at += size_line;
        if size == 0 {
            // The trailers, if any, and the final empty line.
            loop {
                let rest = &buf[at..];
                if let Some(end) = rest.windows(2).position(|w| w == b"\r\n") {
                    at += end + 2;
                    if end == 0 {
                        return Ok(body.into());
                    }
                } else {
                    read_more(stream, buf).await?;
                }
            }
        }
        let size = usize::try_from(size)?;
        while buf.len() < at + size + 2 {
            read_more(stream, buf).await?;
        }
        body.extend_from_slice(&buf[at..at + size]);
        at += size + 2;
    }
}

/// Reads what the server sent next into `buf`.
async fn read_more(stream: &mut TcpStream, buf: &mut BytesMut) -> anyhow::Result<()> {
    if stream.read_buf(buf).await? == 0 {
        bail!("the server closed the connection before the whole answer was in");
    }
    Ok(())
}

/// The head of the answer at the start of `buf`; `None` while it is incomplete.
fn parse_head(buf: &[u8]) -> anyhow::Result<Option<Head>> {
    let mut lines = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Response::new(&mut lines);
    let httparse::Status::Complete(len) = parsed.parse(buf)? else {
        return Ok(None);
    };
    let status = StatusCode::from_u16(parsed.code.unwrap_or_default())?;
    let mut head = Head {
        status,
        headers: HeaderMap::with_capacity(parsed.headers.len()),
        len,
        body: Delimited::Length(0),
        close: parsed.version == Some(0),
    };
    let mut length = None;
    let mut chunked = false;
    for line in parsed.headers.iter() {
        let name = header::HeaderName::from_bytes(line.name.as_bytes())?;
        let value = HeaderValue::from_bytes(line.value)?;
        if name == header::CONTENT_LENGTH {
            length = Some(value.to_str()?.trim().parse::<usize>()?);
        } else if name == header::TRANSFER_ENCODING {
            chunked = value.as_bytes().eq_ignore_ascii_case(b"chunked");
            anyhow::ensure!(chunked, "an answer with Transfer-Encoding {value:?}");
        } else if name == header::CONNECTION {
            head.close = value.as_bytes().eq_ignore_ascii_case(b"close");
        }
        head.headers.append(name, value);
    }
    head.body = match (chunked, length, status.as_u16()) {
        (true, _, _) => Delimited::Chunked,
        (false, Some(length), _) => Delimited::Length(length),
        (false, None, 100..=199 | 204 | 304) => Delimited::Length(0),
        (false, None, _) => bail!("an answer ({status}) without Content-Length or chunks"),
    };
    Ok(Some(head))
}

/// A request with the given parts, ready to send on a [`Conn`]: HTTP/1.1 with a
/// `Content-Length`.
pub fn request(method: Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Bytes {
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut out = Vec::with_capacity(256 + body.len());
    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    out.into()
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
    if let Some(authorization) = &target.authorization {
        headers.insert(header::AUTHORIZATION, authorization.clone());
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_give_status_headers_and_body_length() {
        let answer = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s1\r\ncontent-length: 5\r\n\r\nhello";
        assert!(parse_head(&answer[..20]).unwrap().is_none(), "incomplete");
        let head = parse_head(answer).unwrap().unwrap();
        assert_eq!(head.status, StatusCode::OK);
        assert_eq!(head.headers["mcp-session-id"], "s1");
        assert_eq!(
            (head.len, head.body, head.close),
            (answer.len() - 5, Delimited::Length(5), false)
        );
        let closing = b"HTTP/1.1 202 Accepted\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        assert!(parse_head(closing).unwrap().unwrap().close);
        let old = b"HTTP/1.0 204 No Content\r\n\r\n";
        let head = parse_head(old).unwrap().unwrap();
        assert_eq!((head.body, head.close), (Delimited::Length(0), true));
    }

    #[test]
    fn bodies_are_chunked_or_have_a_length() {
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
        assert_eq!(
            parse_head(chunked).unwrap().unwrap().body,
            Delimited::Chunked
        );
        assert!(parse_head(b"HTTP/1.1 200 OK\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n").is_err());
    }

    #[tokio::test]
    async fn chunked_and_sized_answers_follow_each_other_on_one_connection() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target = Target::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 1024];
            let pieces: [&[u8]; 4] = [
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel",
                b"lo\r\n7;ext=1\r\n world!\r",
                b"\n0\r\nx-trailer: 1\r\n\r\n",
                b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok",
            ];
            for (i, piece) in pieces.iter().enumerate() {
                if i == 0 || i == 3 {
                    let _ = socket.read(&mut request).await.unwrap();
                }
                socket.write_all(piece).await.unwrap();
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        });
        let mut conn = Conn::open(&target).await.unwrap();
        let first = conn
            .exchange(&target, Method::GET, "/a", Bytes::new())
            .await
            .unwrap();
        assert_eq!(&first.body()[..], b"hello world!");
        let second = conn
            .exchange(&target, Method::GET, "/b", Bytes::new())
            .await
            .unwrap();
        assert_eq!(
            (second.status().as_u16(), &second.body()[..]),
            (201, &b"ok"[..])
        );
        assert!(!conn.is_closed());
        server.await.unwrap();
    }

    #[test]
    fn requests_are_written_with_their_length() {
        let uri: Uri = "/x/mcp?a=1".parse().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("h:1"));
        let written = request(Method::POST, &uri, &headers, b"{}");
        assert_eq!(
            &written[..],
            b"POST /x/mcp?a=1 HTTP/1.1\r\nhost: h:1\r\ncontent-length: 2\r\n\r\n{}"
        );
    }

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

    #[test]
    fn a_urls_user_info_is_sent_as_basic_authentication_not_as_the_host() {
        let target = Target::parse("http://envhost:s3cret@127.0.0.1:9/").unwrap();
        let headers = base_headers(&target.nested("/episodes/e/"));
        assert_eq!(headers[header::HOST], "127.0.0.1:9");
        assert_eq!(headers[header::AUTHORIZATION], "Basic ZW52aG9zdDpzM2NyZXQ=");
        let plain = base_headers(&Target::parse("http://127.0.0.1:9").unwrap());
        assert!(!plain.contains_key(header::AUTHORIZATION));
    }
}
