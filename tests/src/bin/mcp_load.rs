//! `mcp_load`: a closed-loop load client for the MCP tools of an agentenv environment server.
//!
//! ```text
//! mcp_load --url http://127.0.0.1:18765 --clients 8 --seconds 10 [--warmup 1]
//!          [--env-name slack] [--tool slack_send_message] [--threads 1] [--timeout 30]
//!          [--server-pid PID] [--json]
//! ```
//!
//! It seeds the environment through the data plane (`data/reset`, then `data/add` of a data part
//! with the channel `bench`, as `shared/bench/agentenv_bench.py` does), then runs `--clients`
//! clients, each with its own keep-alive HTTP/1.1 connection and its own MCP session (role
//! `bench-<i>`), calling `<env>_send_message(channel "bench", text "bench <i> <n>", to "sink")` in
//! a closed loop. Calls that start within the first `--warmup` seconds are not counted; the
//! `--seconds` after them are. Every answer (SSE or JSON) is parsed and must be a result with
//! `isError` false; anything else is an error. At the end it prints calls, errors, calls/s, the
//! latency percentiles, its own CPU seconds over the measured window (near `elapsed × threads`
//! means the client was the bottleneck), and with `--server-pid` the server's CPU seconds over
//! the same window and its memory before and after; then it closes the sessions and resets the
//! environment.
//!
//! To stay cheap it speaks HTTP/1.1 with hyper's connection API, driving each connection from the
//! task that uses it, reuses prebuilt headers and a request-body template, and deserializes only
//! the fields it checks.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use bytes::{BufMut as _, Bytes, BytesMut};
use clap::Parser;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Request, Response, Uri};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// The channel the bench seeds and posts to (the Python bench's).
const CHANNEL: &str = "bench";
/// The MCP protocol version the clients ask for (the reference ToolSession's).
const PROTOCOL_VERSION: &str = "2025-11-25";
/// How long closing a session may take before it is left to expire.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// The caller-role header (§6).
const ROLE_HEADER: &str = "agentenv-role";
/// The MCP session header (§5.1).
const SESSION_HEADER: &str = "mcp-session-id";
/// The MCP protocol-version header (§5.1).
const PROTOCOL_HEADER: &str = "mcp-protocol-version";

/// Closed-loop MCP `tools/call` load against an agentenv environment server.
#[derive(Parser, Debug)]
#[command(name = "mcp_load")]
struct Args {
    /// The environment server's base URL (plain http).
    #[arg(long, default_value = "http://127.0.0.1:18765")]
    url: String,
    /// Concurrent clients, each with its own connection and MCP session.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Length of the measured window, in seconds.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Seconds of calls before the measured window, not counted.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// The environment's name (the tool-name prefix); default: the card's name.
    #[arg(long)]
    env_name: Option<String>,
    /// The tool to call; default: `<env-name>_send_message`.
    #[arg(long)]
    tool: Option<String>,
    /// Runtime threads: 1 runs every client on one current_thread runtime, more a multi-thread one.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seconds a call may take before it counts as an error (and its connection is reopened).
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// The server's process id: report its CPU seconds and memory (VmRSS, VmHWM) from /proc.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Also print the results as one JSON line.
    #[arg(long)]
    json: bool,
}

impl Args {
    /// Rejects values the run cannot use.
    fn validate(&self) -> anyhow::Result<()> {
        if self.clients == 0 || self.threads == 0 {
            bail!("--clients and --threads must be at least 1");
        }
        for (name, value) in [
            ("--seconds", self.seconds),
            ("--warmup", self.warmup),
            ("--timeout", self.timeout),
        ] {
            if !value.is_finite() || value < 0.0 || value > 1e6 {
                bail!("{name} must be a number of seconds between 0 and 1e6");
            }
        }
        if self.seconds == 0.0 || self.timeout == 0.0 {
            bail!("--seconds and --timeout must be more than 0");
        }
        Ok(())
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.validate()?;
    let runtime = runtime(args.threads)?;
    let report = runtime.block_on(run(&args))?;
    print!("{}", report.table());
    if args.json {
        println!("{}", report.json());
    }
    Ok(())
}

/// A current_thread runtime for one thread, else a multi-thread one with `threads` workers.
fn runtime(threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(threads);
        builder
    };
    Ok(builder.enable_all().build()?)
}

// ------------------------------------------------------------------------------------------ the run

/// The whole bench: seed, open the sessions, load, measure, clean up.
async fn run(args: &Args) -> anyhow::Result<Report> {
    let target = Arc::new(Target::parse(&args.url)?);
    let mut control = Conn::open(&target).await?;
    let card = fetch_card(&mut control, &target).await?;
    let env_name = args.env_name.clone().unwrap_or_else(|| card.name.clone());
    let tool = args
        .tool
        .clone()
        .unwrap_or_else(|| format!("{env_name}_send_message"));
    let mcp_uri: Uri = target
        .path(card.mcp_path())
        .parse()
        .context("the card's MCP path")?;

    let memory_before = args.server_pid.and_then(proc_memory);
    seed(&mut control, &target).await?;
    drop(control);

    let sessions = futures::future::try_join_all(
        (0..args.clients)
            .map(|i| Session::open(target.clone(), mcp_uri.clone(), format!("bench-{i}"))),
    )
    .await?;
    let start = Instant::now();
    let window = Window {
        start: start + Duration::from_secs_f64(args.warmup),
        end: start + Duration::from_secs_f64(args.warmup + args.seconds),
        call_timeout: Duration::from_secs_f64(args.timeout),
    };
    let tasks: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(i, session)| tokio::spawn(load(session, CallTemplate::new(&tool, i), window)))
        .collect();

    tokio::time::sleep_until(window.start.into()).await;
    let cpu_start = (
        self_cpu_seconds(),
        args.server_pid.and_then(proc_cpu_seconds),
    );
    let mut finished = Vec::with_capacity(tasks.len());
    for task in tasks {
        finished.push(task.await.context("a client task panicked")?);
    }
    let elapsed = window.start.elapsed();
    let cpu_end = (
        self_cpu_seconds(),
        args.server_pid.and_then(proc_cpu_seconds),
    );
    let memory_after = args.server_pid.and_then(proc_memory);

    let mut stats = Vec::with_capacity(finished.len());
    for (mut session, client) in finished {
        session.close().await;
        stats.push(client);
    }
    reset(&mut Conn::open(&target).await?, &target).await?;

    Ok(Report {
        url: target.path(card.mcp_path()),
        tool,
        clients: args.clients,
        threads: args.threads,
        warmup: args.warmup,
        elapsed,
        summary: Summary::of(&mut stats, elapsed),
        client_cpu: cpu_end.0 - cpu_start.0,
        server: args.server_pid.map(|pid| ServerUsage {
            pid,
            cpu: cpu_start.1.zip(cpu_end.1).map(|(a, b)| b - a),
            before: memory_before,
            after: memory_after,
        }),
        failures: stats
            .iter()
            .enumerate()
            .filter_map(ClientStats::failure)
            .collect(),
    })
}

/// When a client's calls count, and how long one may take.
#[derive(Clone, Copy, Debug)]
struct Window {
    /// Calls started from here on are counted (the warmup is over).
    start: Instant,
    /// No call starts from here on.
    end: Instant,
    /// The longest a call may take.
    call_timeout: Duration,
}

/// One client's closed loop over its session; answers the session (to close it) and what it
/// measured.
async fn load(
    mut session: Session,
    mut template: CallTemplate,
    window: Window,
) -> (Session, ClientStats) {
    let mut stats = ClientStats::default();
    let mut now = Instant::now();
    let mut n = 0u64;
    while now < window.end {
        let id = session.next_id();
        let outcome = session
            .call_tool(template.body(id, n), id, window.call_timeout)
            .await;
        let done = Instant::now();
        if now >= window.start {
            stats.record(outcome, done - now);
        }
        n += 1;
        now = done;
        if session.conn.is_closed() {
            if let Err(e) = session.reconnect().await {
                stats.aborted = Some(format!("{e:#}"));
                break;
            }
            now = Instant::now();
        }
    }
    (session, stats)
}

// ------------------------------------------------------------------------------------------ HTTP

/// Where the environment server listens, from `--url`.
#[derive(Debug)]
struct Target {
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
    fn parse(url: &str) -> anyhow::Result<Self> {
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

    /// The request path of `route` (absolute, e.g. `/agentenv`) on this server.
    fn path(&self, route: &str) -> String {
        format!("{}/{}", self.base_path, route.trim_start_matches('/'))
    }
}

/// The hyper connection future of a [`Conn`], which reads and writes its socket.
type Driver = Pin<Box<http1::Connection<TokioIo<TcpStream>, Full<Bytes>>>>;

/// One keep-alive HTTP/1.1 connection, driven by the task that sends on it (no connection task to
/// hand each request to and back).
struct Conn {
    /// Queues requests onto the connection.
    sender: http1::SendRequest<Full<Bytes>>,
    /// The connection itself; `None` once it has ended or been abandoned.
    driver: Option<Driver>,
}

impl Conn {
    /// Connects to `target` (with TCP_NODELAY: requests are small and latency counts).
    async fn open(target: &Target) -> anyhow::Result<Self> {
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
    fn is_closed(&self) -> bool {
        self.driver.is_none() || self.sender.is_closed()
    }

    /// Drops the connection, e.g. after giving up on an answer that may still come.
    fn abandon(&mut self) {
        self.driver = None;
    }

    /// Sends `request` and reads its whole answer.
    async fn send(&mut self, request: Request<Full<Bytes>>) -> anyhow::Result<Response<Bytes>> {
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
}

/// A request with the given parts, ready to send on a [`Conn`].
fn request(method: Method, uri: &Uri, headers: &HeaderMap, body: Bytes) -> Request<Full<Bytes>> {
    let mut request = Request::new(Full::new(body));
    *request.method_mut() = method;
    *request.uri_mut() = uri.clone();
    *request.headers_mut() = headers.clone();
    request
}

/// Fails unless the answer's status is 2xx, quoting the start of its body.
fn require_success(response: &Response<Bytes>) -> anyhow::Result<()> {
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let body = response.body();
    let shown = String::from_utf8_lossy(&body[..body.len().min(300)]);
    bail!("HTTP {status}: {shown}")
}

// ------------------------------------------------------------------------------------------ JSON-RPC

/// A JSON-RPC answer, with the `result` read as `R` and only what the bench checks of the rest.
#[derive(Deserialize)]
struct Reply<R> {
    /// The id of the request answered.
    #[serde(default)]
    id: Option<Value>,
    /// The result, on success.
    result: Option<R>,
    /// The error, on failure.
    error: Option<RpcError>,
}

/// A JSON-RPC error object.
#[derive(Deserialize)]
struct RpcError {
    /// The error code.
    code: i64,
    /// The error message.
    message: String,
}

impl<R> Reply<R> {
    /// Whether this answers request `id`.
    fn answers(&self, id: u64) -> bool {
        self.id.as_ref().and_then(Value::as_u64) == Some(id)
            && (self.result.is_some() || self.error.is_some())
    }

    /// The result, or the error as an error.
    fn into_result(self, method: &str) -> anyhow::Result<R> {
        match (self.result, self.error) {
            (_, Some(e)) => bail!("{method} failed: {} (code {})", e.message, e.code),
            (Some(result), None) => Ok(result),
            (None, None) => bail!("{method}: the answer has neither result nor error"),
        }
    }
}

/// The answer to JSON-RPC request `id` of `method` in an HTTP answer: the body itself when it is
/// `application/json`, or the first SSE `message` event answering `id` when it is
/// `text/event-stream` (§11.2).
fn rpc_answer<R: DeserializeOwned>(
    response: &Response<Bytes>,
    id: u64,
    method: &str,
) -> anyhow::Result<R> {
    require_success(response)?;
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(HeaderValue::as_bytes)
        .unwrap_or_default();
    let body = response.body();
    if content_type.starts_with(b"application/json") {
        let reply: Reply<R> =
            serde_json::from_slice(body).with_context(|| format!("{method}: the answer"))?;
        return reply.into_result(method);
    }
    if !content_type.starts_with(b"text/event-stream") {
        bail!(
            "{method}: unexpected content-type {:?}",
            String::from_utf8_lossy(content_type)
        );
    }
    for data in SseMessages::new(body) {
        let reply: Reply<R> =
            serde_json::from_slice(&data).with_context(|| format!("{method}: an SSE event"))?;
        if reply.answers(id) {
            return reply.into_result(method);
        }
    }
    bail!("{method}: the event stream ended without the answer")
}

/// The `data` of each SSE event named `message` (or unnamed) with non-blank data, multi-line data
/// joined with `\n` (the SSE rules the reference client follows).
struct SseMessages<'a> {
    /// What is left of the stream.
    rest: &'a [u8],
}

impl<'a> SseMessages<'a> {
    /// The message events of `stream`.
    fn new(stream: &'a [u8]) -> Self {
        Self { rest: stream }
    }

    /// The next line, without its end (`\r\n`, `\n` or `\r`); `None` at the end of the stream.
    fn line(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let end = self
            .rest
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .unwrap_or(self.rest.len());
        let line = &self.rest[..end];
        let skip = match self.rest.get(end..end + 2) {
            Some(b"\r\n") => 2,
            _ => usize::from(end < self.rest.len()),
        };
        self.rest = &self.rest[end + skip..];
        Some(line)
    }
}

impl<'a> Iterator for SseMessages<'a> {
    /// The data, borrowed from the stream unless it spans several lines.
    type Item = Cow<'a, [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let mut data: Option<Cow<'a, [u8]>> = None;
            let mut is_message = true;
            // One event: lines up to a blank line or the end of the stream.
            let mut saw_line = false;
            while let Some(line) = self.line() {
                if line.is_empty() {
                    break;
                }
                saw_line = true;
                let (field, value) = sse_field(line);
                match field {
                    b"event" => is_message = value == b"message",
                    b"data" => match data.as_mut() {
                        Some(joined) => {
                            let joined = joined.to_mut();
                            joined.push(b'\n');
                            joined.extend_from_slice(value);
                        }
                        None => data = Some(Cow::Borrowed(value)),
                    },
                    _ => {}
                }
            }
            if !saw_line && self.rest.is_empty() {
                return None;
            }
            if let Some(data) = data.filter(|d| is_message && !d.trim_ascii().is_empty()) {
                return Some(data);
            }
        }
    }
}

/// An SSE line's field name and value (one leading space of the value dropped).
fn sse_field(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&b| b == b':') {
        Some(colon) => {
            let value = &line[colon + 1..];
            (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, b""),
    }
}

// ------------------------------------------------------------------------------------------ data plane

/// What the bench reads of the environment card.
#[derive(Deserialize)]
struct Card {
    /// The environment's name, the prefix of its tool names.
    name: String,
    /// Its interfaces, among them the MCP one.
    #[serde(default, rename = "additionalInterfaces")]
    interfaces: Option<Vec<Interface>>,
}

/// An entry of the card's `additionalInterfaces`.
#[derive(Deserialize)]
struct Interface {
    /// Its path.
    #[serde(default)]
    url: Option<String>,
    /// Its transport, `mcp` for MCP.
    #[serde(default)]
    transport: Option<String>,
}

impl Card {
    /// The MCP path: the first `mcp` interface's, else `/mcp` (as the reference client reads it).
    fn mcp_path(&self) -> &str {
        self.interfaces
            .iter()
            .flatten()
            .filter(|i| i.transport.as_deref() == Some("mcp"))
            .find_map(|i| i.url.as_deref().filter(|u| !u.is_empty()))
            .unwrap_or("/mcp")
    }
}

/// The plain headers of a request to `target`: its host and JSON content.
fn base_headers(target: &Target) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::HOST, target.authority.clone());
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers
}

/// Fetches the environment card.
async fn fetch_card(conn: &mut Conn, target: &Target) -> anyhow::Result<Card> {
    let uri: Uri = target.path("/.well-known/agent-env.json").parse()?;
    let response = conn
        .send(request(
            Method::GET,
            &uri,
            &base_headers(target),
            Bytes::new(),
        ))
        .await
        .context("fetching the card")?;
    require_success(&response).context("fetching the card")?;
    serde_json::from_slice(response.body()).context("reading the card")
}

/// Calls data-plane `method` with `params`; fails on any error answer.
async fn data_call(
    conn: &mut Conn,
    target: &Target,
    method: &str,
    params: Value,
) -> anyhow::Result<()> {
    let uri: Uri = target.path("/agentenv").parse()?;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let response = conn
        .send(request(
            Method::POST,
            &uri,
            &base_headers(target),
            body.into(),
        ))
        .await
        .with_context(|| format!("{method}"))?;
    rpc_answer::<IgnoredAny>(&response, 1, method).map(drop)
}

/// Empties the environment.
async fn reset(conn: &mut Conn, target: &Target) -> anyhow::Result<()> {
    data_call(conn, target, "data/reset", json!({})).await
}

/// Empties the environment and adds the channel the clients post to.
async fn seed(conn: &mut Conn, target: &Target) -> anyhow::Result<()> {
    reset(conn, target).await?;
    let channels = json!({"channels": [{"name": CHANNEL, "topic": ""}]});
    data_call(
        conn,
        target,
        "data/add",
        json!({"parts": [{"kind": "data", "data": channels}]}),
    )
    .await
}

// ------------------------------------------------------------------------------------------ MCP

/// What the bench reads of an `initialize` result.
#[derive(Deserialize)]
struct Initialized {
    /// The protocol version the server chose.
    #[serde(default, rename = "protocolVersion")]
    protocol_version: Option<String>,
}

/// What the bench reads of a `tools/call` result.
#[derive(Deserialize)]
struct ToolOutcome {
    /// Whether the tool failed (absent = false, as in MCP).
    #[serde(default, rename = "isError")]
    is_error: bool,
}

/// One client's MCP session over its own connection.
struct Session {
    /// The server.
    target: Arc<Target>,
    /// The connection the session's requests go over.
    conn: Conn,
    /// The MCP endpoint's path.
    uri: Uri,
    /// Every request's headers: host, content type, accept, role, session, protocol version.
    headers: HeaderMap,
    /// The id of the next request.
    next_id: u64,
}

impl Session {
    /// Connects and opens a session with role `role`: `initialize`, then
    /// `notifications/initialized`.
    async fn open(target: Arc<Target>, uri: Uri, role: String) -> anyhow::Result<Self> {
        let conn = Conn::open(&target).await?;
        let mut headers = base_headers(&target);
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert(ROLE_HEADER, HeaderValue::try_from(role)?);
        let mut session = Self {
            target,
            conn,
            uri,
            headers,
            next_id: 1,
        };
        session
            .initialize()
            .await
            .context("opening an MCP session")?;
        Ok(session)
    }

    /// The MCP handshake: learns the session id and protocol version, then confirms.
    async fn initialize(&mut self) -> anyhow::Result<()> {
        let id = self.next_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "mcp_load", "version": env!("CARGO_PKG_VERSION")}}});
        let response = self.post(body.to_string().into()).await?;
        let initialized: Initialized = rpc_answer(&response, id, "initialize")?;
        if let Some(session_id) = response.headers().get(SESSION_HEADER) {
            self.headers.insert(SESSION_HEADER, session_id.clone());
        }
        let version = initialized
            .protocol_version
            .as_deref()
            .unwrap_or(PROTOCOL_VERSION);
        self.headers
            .insert(PROTOCOL_HEADER, HeaderValue::from_str(version)?);
        let confirm = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = self.post(confirm.to_string().into()).await?;
        if response.status().as_u16() >= 400 {
            require_success(&response).context("notifications/initialized")?;
        }
        Ok(())
    }

    /// Takes the next request id.
    fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// POSTs `body` to the MCP endpoint with the session's headers.
    async fn post(&mut self, body: Bytes) -> anyhow::Result<Response<Bytes>> {
        self.conn
            .send(request(Method::POST, &self.uri, &self.headers, body))
            .await
    }

    /// Sends the `tools/call` request `body` (of id `id`); fails unless it answers a result with
    /// `isError` false within `timeout`.
    async fn call_tool(&mut self, body: Bytes, id: u64, timeout: Duration) -> anyhow::Result<()> {
        let Ok(response) = tokio::time::timeout(timeout, self.post(body)).await else {
            self.conn.abandon();
            bail!("no answer within {timeout:?}");
        };
        let outcome: ToolOutcome = rpc_answer(&response?, id, "tools/call")?;
        if outcome.is_error {
            bail!("the tool answered isError: true");
        }
        Ok(())
    }

    /// Replaces a closed connection with a new one; the session goes on over it.
    async fn reconnect(&mut self) -> anyhow::Result<()> {
        self.conn = Conn::open(&self.target).await.context("reconnecting")?;
        Ok(())
    }

    /// Ends the session (`DELETE`), leaving it to expire if that fails.
    async fn close(&mut self) {
        if self.conn.is_closed() && self.reconnect().await.is_err() {
            return;
        }
        let delete = request(Method::DELETE, &self.uri, &self.headers, Bytes::new());
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, self.conn.send(delete)).await;
    }
}

/// The `tools/call` bodies of one client, from a prebuilt template: only the request id and the
/// message number change from call to call.
struct CallTemplate {
    /// The body up to the request id.
    head: &'static [u8],
    /// From after the id to the message number: the tool, the fixed arguments, `"bench <i> `.
    middle: Vec<u8>,
    /// The end of the body.
    tail: &'static [u8],
    /// The buffer bodies are written into; a body's memory is reused once it has been sent.
    buffer: BytesMut,
}

impl CallTemplate {
    /// The template of client `client` calling `tool`.
    fn new(tool: &str, client: usize) -> Self {
        let name = Value::from(tool).to_string();
        let channel = Value::from(CHANNEL).to_string();
        let middle = format!(
            r#","method":"tools/call","params":{{"name":{name},"arguments":{{"channel":{channel},"to":"sink","text":"bench {client} "#
        );
        Self {
            head: br#"{"jsonrpc":"2.0","id":"#,
            middle: middle.into_bytes(),
            tail: br#""}}}"#,
            buffer: BytesMut::new(),
        }
    }

    /// The body of request `id` sending message number `n`.
    fn body(&mut self, id: u64, n: u64) -> Bytes {
        self.buffer
            .reserve(self.head.len() + self.middle.len() + self.tail.len() + 40);
        self.buffer.put_slice(self.head);
        // Writing into a BytesMut with room reserved cannot fail.
        let _ = write!(self.buffer, "{id}");
        self.buffer.put_slice(&self.middle);
        let _ = write!(self.buffer, "{n}");
        self.buffer.put_slice(self.tail);
        self.buffer.split().freeze()
    }
}

// ------------------------------------------------------------------------------------------ results

/// What one client measured in the window.
#[derive(Default)]
struct ClientStats {
    /// The latency of each successful call, in nanoseconds.
    latencies_ns: Vec<u64>,
    /// Calls that failed.
    errors: u64,
    /// The first failure, to show.
    first_error: Option<String>,
    /// Why the client stopped early, if it did.
    aborted: Option<String>,
}

impl ClientStats {
    /// Counts one call.
    fn record(&mut self, outcome: anyhow::Result<()>, latency: Duration) {
        match outcome {
            Ok(()) => self
                .latencies_ns
                .push(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX)),
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert_with(|| format!("{e:#}"));
            }
        }
    }

    /// A line about what went wrong with client `i`, if anything did.
    fn failure((i, stats): (usize, &Self)) -> Option<String> {
        let mut line = String::new();
        if let Some(e) = &stats.first_error {
            line = format!("client {i}: {} errors, the first: {e}", stats.errors);
        }
        if let Some(why) = &stats.aborted {
            line = format!(
                "{line}{}client {i} stopped early: {why}",
                if line.is_empty() { "" } else { "; " }
            );
        }
        (!line.is_empty()).then_some(line)
    }
}

/// Counts and latency distribution of a run (latencies in milliseconds).
#[derive(Debug)]
struct Summary {
    /// Successful calls.
    calls: usize,
    /// Failed calls.
    errors: u64,
    /// Successful calls per second.
    per_s: f64,
    /// Latency percentiles 50, 90, 99, and mean and max; `None` when no call succeeded.
    p50: Option<f64>,
    p90: Option<f64>,
    p99: Option<f64>,
    mean: Option<f64>,
    max: Option<f64>,
}

impl Summary {
    /// Merges the clients' stats over a window of `elapsed`.
    fn of(stats: &mut [ClientStats], elapsed: Duration) -> Self {
        let mut all: Vec<u64> =
            Vec::with_capacity(stats.iter().map(|s| s.latencies_ns.len()).sum());
        for s in stats.iter_mut() {
            all.append(&mut s.latencies_ns);
        }
        all.sort_unstable();
        let ms = |ns: f64| ns / 1e6;
        Self {
            calls: all.len(),
            errors: stats.iter().map(|s| s.errors).sum(),
            per_s: all.len() as f64 / elapsed.as_secs_f64(),
            p50: percentile(&all, 0.50).map(ms),
            p90: percentile(&all, 0.90).map(ms),
            p99: percentile(&all, 0.99).map(ms),
            mean: (!all.is_empty())
                .then(|| ms(all.iter().map(|&v| v as f64).sum::<f64>() / all.len() as f64)),
            max: all.last().map(|&v| ms(v as f64)),
        }
    }
}

/// The `q` quantile of `sorted`, interpolated linearly between neighbours (as the Python bench).
fn percentile(sorted: &[u64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let k = last as f64 * q;
    let (lo, hi) = (k.floor() as usize, (k.floor() as usize + 1).min(last));
    let (a, b) = (sorted[lo] as f64, sorted[hi] as f64);
    Some(a + (b - a) * (k - k.floor()))
}

/// A process' memory, in KiB, from /proc.
#[derive(Clone, Copy, Debug)]
struct Memory {
    /// Resident set size.
    rss: u64,
    /// Peak resident set size.
    hwm: u64,
}

/// What the server used over the run.
#[derive(Debug)]
struct ServerUsage {
    /// Its process id.
    pid: u32,
    /// CPU seconds over the measured window.
    cpu: Option<f64>,
    /// Memory before seeding.
    before: Option<Memory>,
    /// Memory after the run.
    after: Option<Memory>,
}

/// Everything a run measured.
struct Report {
    /// The MCP endpoint loaded.
    url: String,
    /// The tool called.
    tool: String,
    /// Concurrent clients.
    clients: usize,
    /// Runtime threads of the client.
    threads: usize,
    /// Warmup seconds.
    warmup: f64,
    /// The measured window, as it turned out.
    elapsed: Duration,
    /// Counts and latencies.
    summary: Summary,
    /// This process' CPU seconds over the window.
    client_cpu: f64,
    /// The server's usage, with `--server-pid`.
    server: Option<ServerUsage>,
    /// What went wrong, per client.
    failures: Vec<String>,
}

/// A number of milliseconds for the table, `-` when missing.
fn cell(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

/// A number rounded to `places` decimals for the JSON line.
fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

impl Report {
    /// The human-readable report.
    fn table(&self) -> String {
        let s = &self.summary;
        let secs = self.elapsed.as_secs_f64();
        let runtime = if self.threads == 1 {
            "current_thread".into()
        } else {
            format!("{} threads", self.threads)
        };
        let mut out = format!(
            "mcp_load {}  tool {}  runtime {runtime}  warmup {}s\n",
            self.url, self.tool, self.warmup
        );
        let server_cpu = self.server.as_ref().and_then(|u| u.cpu);
        let _ = writeln!(
            out,
            "{:>7} {:>9} {:>7} {:>10} {:>8} {:>8} {:>8} {:>9} {:>9} {:>13} {:>13}",
            "clients",
            "calls",
            "errors",
            "calls/s",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "max ms",
            "elapsed s",
            "client cpu s",
            "server cpu s"
        );
        let _ = writeln!(
            out,
            "{:>7} {:>9} {:>7} {:>10.1} {:>8} {:>8} {:>8} {:>9} {:>9.2} {:>13} {:>13}",
            self.clients,
            s.calls,
            s.errors,
            s.per_s,
            cell(s.p50),
            cell(s.p90),
            cell(s.p99),
            cell(s.max),
            secs,
            format!(
                "{:.2} ({:.0}%)",
                self.client_cpu,
                100.0 * self.client_cpu / secs
            ),
            server_cpu.map_or_else(
                || "-".into(),
                |c| format!("{c:.2} ({:.0}%)", 100.0 * c / secs)
            ),
        );
        if let Some(server) = &self.server {
            let memory = |m: Option<Memory>| {
                m.map_or_else(
                    || "?".into(),
                    |m| format!("VmRSS {} KiB, VmHWM {} KiB", m.rss, m.hwm),
                )
            };
            let _ = writeln!(
                out,
                "server pid {}: before {}; after {}",
                server.pid,
                memory(server.before),
                memory(server.after)
            );
        }
        for failure in &self.failures {
            let _ = writeln!(out, "{failure}");
        }
        out
    }

    /// The report as one JSON object.
    fn json(&self) -> Value {
        let s = &self.summary;
        let ms = |v: Option<f64>| v.map(|v| round(v, 3));
        let memory = |m: Option<Memory>| m.map(|m| json!({"VmRSS": m.rss, "VmHWM": m.hwm}));
        json!({
            "url": self.url, "tool": self.tool, "clients": self.clients, "threads": self.threads,
            "warmup_s": self.warmup, "elapsed_s": round(self.elapsed.as_secs_f64(), 3),
            "calls": s.calls, "errors": s.errors, "per_s": round(s.per_s, 1),
            "p50_ms": ms(s.p50), "p90_ms": ms(s.p90), "p99_ms": ms(s.p99), "mean_ms": ms(s.mean), "max_ms": ms(s.max),
            "client_cpu_s": round(self.client_cpu, 3),
            "server": self.server.as_ref().map(|u| json!({
                "pid": u.pid, "cpu_s": u.cpu.map(|c| round(c, 3)),
                "rss_kib": {"before": memory(u.before), "after": memory(u.after)},
            })),
            "failures": self.failures,
        })
    }
}

// ------------------------------------------------------------------------------------------ /proc

/// This process' user+system CPU seconds so far.
fn self_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the rusage it is given, which is zeroed plain data.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Process `pid`'s user+system CPU seconds so far, from `/proc/<pid>/stat`.
fn proc_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (ticks > 0).then(|| (utime + stime) as f64 / ticks as f64)
}

/// Process `pid`'s VmRSS and VmHWM, from `/proc/<pid>/status`.
fn proc_memory(pid: u32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| {
        status.lines().find_map(|line| {
            let value = line.strip_prefix(key)?.strip_prefix(':')?;
            value.trim().trim_end_matches("kB").trim().parse().ok()
        })
    };
    Some(Memory {
        rss: kib("VmRSS")?,
        hwm: kib("VmHWM")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages of an SSE stream, as text.
    fn messages(stream: &str) -> Vec<String> {
        SseMessages::new(stream.as_bytes())
            .map(|d| String::from_utf8(d.into_owned()).unwrap())
            .collect()
    }

    #[test]
    fn sse_reads_message_events_only() {
        let stream = "event: message\r\ndata: {\"a\":1}\r\n\r\nevent: other\ndata: x\n\n: comment\ndata:  two\ndata:lines\n\nid: 3\n\n";
        assert_eq!(messages(stream), ["{\"a\":1}", " two\nlines"]);
        assert_eq!(messages("data: last"), ["last"]);
        assert!(messages("").is_empty());
    }

    #[test]
    fn call_bodies_are_json() {
        let mut template = CallTemplate::new("slack_send_message", 3);
        let first = template.body(2, 0);
        let second = template.body(3, 1);
        let value: Value = serde_json::from_slice(&second).unwrap();
        assert_eq!(value["id"], 3);
        assert_eq!(value["params"]["name"], "slack_send_message");
        assert_eq!(
            value["params"]["arguments"],
            json!({"channel": "bench", "to": "sink", "text": "bench 3 1"})
        );
        assert_eq!(serde_json::from_slice::<Value>(&first).unwrap()["id"], 2);
    }

    #[test]
    fn percentiles_interpolate() {
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[10], 0.99), Some(10.0));
        assert_eq!(percentile(&[0, 10, 20, 30], 0.5), Some(15.0));
    }

    #[test]
    fn targets_keep_a_base_path() {
        let target = Target::parse("http://[::1]:8080/svc/x/").unwrap();
        assert_eq!((target.host.as_str(), target.port), ("::1", 8080));
        assert_eq!(target.path("/mcp"), "/svc/x/mcp");
        assert!(Target::parse("https://example.com").is_err());
    }
}
