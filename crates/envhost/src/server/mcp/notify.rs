//! What a tool call sends its MCP caller while it runs (protocol.md#progress,
//! protocol.md#logging, protocol.md#client-requests): the guest's progress reports, when the
//! request carried a `progressToken`; its log records at or above the level the session set
//! with `logging/setLevel`; and its requests to the client (sampling, elicitation, roots), whose
//! replies come back in POSTs of the same session. Each is an SSE event on the request's own
//! stream before its answer.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rmcp::model::{NumberOrString, ProgressNotificationParam, ProgressToken};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use envhost_runtime::{Asked, ClientError, Peer};

use super::sessions::Session;
use super::wire;

/// How long a request to the client waits for its reply (a person may be answering an
/// elicitation).
pub const CLIENT_REPLY_TIMEOUT: Duration = Duration::from_secs(300);

/// JSON-RPC's "method not found": no client, or none that declared the capability.
const NOT_OFFERED: i32 = -32601;
/// envhost's code for a request the client never answered.
const NO_REPLY: i32 = -32001;

/// The requests envhost sends a client, each with the client capability it needs.
const CLIENT_REQUESTS: [(&str, &str); 3] = [
    ("sampling/createMessage", "sampling"),
    ("elicitation/create", "elicitation"),
    ("roots/list", "roots"),
];

/// The client capabilities that let a tool call ask its client something.
pub const CLIENT_CAPABILITIES: [&str; 3] = [
    CLIENT_REQUESTS[0].1,
    CLIENT_REQUESTS[1].1,
    CLIENT_REQUESTS[2].1,
];

/// The client capability a request to the client needs; `None` for a method envhost does not
/// send.
pub fn capability_for(method: &str) -> Option<&'static str> {
    CLIENT_REQUESTS
        .iter()
        .find(|(name, _)| *name == method)
        .map(|(_, capability)| *capability)
}

/// Notifications a stream holds before they are written, at most; beyond, progress reports and
/// log records are dropped (the answer never is).
pub const BUFFERED: usize = 256;

/// MCP's log levels, least severe first (`logging/setLevel`'s `level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// `debug`
    Debug = 1,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl Level {
    /// The level of a guest's record: `trace` and `debug` are `debug`, `warn` is `warning`.
    pub fn of(level: tracing::Level) -> Self {
        match level {
            tracing::Level::TRACE | tracing::Level::DEBUG => Self::Debug,
            tracing::Level::INFO => Self::Info,
            tracing::Level::WARN => Self::Warning,
            tracing::Level::ERROR => Self::Error,
        }
    }

    /// The level numbered `n` by [`Level::number`]; none for 0.
    pub fn from_number(n: u8) -> Option<Self> {
        [
            Self::Debug,
            Self::Info,
            Self::Notice,
            Self::Warning,
            Self::Error,
            Self::Critical,
            Self::Alert,
            Self::Emergency,
        ]
        .into_iter()
        .find(|level| level.number() == n)
    }

    /// 1 (`debug`) to 8 (`emergency`).
    pub fn number(self) -> u8 {
        self as u8
    }
}

/// A tool call's cancellation by its client (`notifications/cancelled`): a flag the guest's
/// epoch tick reads, and a wake-up for a request to the client the guest waits on.
#[derive(Default)]
pub struct Cancel {
    cancelled: std::sync::atomic::AtomicBool,
    wake: tokio::sync::Notify,
}

impl Cancel {
    /// Cancels the call.
    pub fn cancel(&self) {
        self.cancelled
            .store(true, std::sync::atomic::Ordering::Release);
        self.wake.notify_waiters();
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Completes once the call is cancelled.
    pub async fn cancelled(&self) {
        let woken = self.wake.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        if !self.is_cancelled() {
            woken.await;
        }
    }
}

/// An event on a request's stream.
pub enum Event {
    /// A notification or a request to the client, framed.
    Message(Bytes),
    /// The answer, framed: the stream's last event.
    Answer(Bytes),
}

/// What the call's notifications and requests go to: the stream of the request that made it,
/// in its session.
pub struct StreamPeer {
    events: mpsc::Sender<Event>,
    progress_token: Option<ProgressToken>,
    level: Option<Level>,
    logger: String,
    session: Option<Arc<Session>>,
    cancel: Arc<Cancel>,
}

impl StreamPeer {
    /// The peer of a call whose request carried `progress_token`, in a session whose log level
    /// is `level`, sending to `events`; records name `logger` (the environment). Requests to
    /// the client go through `session`, which routes their replies (none: every request is
    /// refused); `cancel` says whether the client cancelled the call.
    pub fn new(
        events: mpsc::Sender<Event>,
        progress_token: Option<ProgressToken>,
        level: Option<Level>,
        logger: String,
        session: Option<Arc<Session>>,
        cancel: Arc<Cancel>,
    ) -> Arc<Self> {
        Arc::new(Self {
            events,
            progress_token,
            level,
            logger,
            session,
            cancel,
        })
    }

    fn send(&self, method: &str, params: &impl Serialize) {
        #[derive(Serialize)]
        struct Notification<'a, P> {
            jsonrpc: &'static str,
            method: &'a str,
            params: &'a P,
        }
        let message = Notification {
            jsonrpc: "2.0",
            method,
            params,
        };
        if let Ok(json) = serde_json::to_vec(&message) {
            let _ = self.events.try_send(Event::Message(wire::sse_event(&json)));
        }
    }
}

/// A [`ClientError`] of `code`.
fn refused(code: i32, message: impl Into<String>) -> ClientError {
    ClientError {
        code,
        message: message.into(),
    }
}

/// A client's JSON-RPC error object as a [`ClientError`].
fn client_error(error: &RawValue) -> ClientError {
    #[derive(Deserialize)]
    struct Error {
        code: i32,
        #[serde(default)]
        message: String,
    }
    serde_json::from_str::<Error>(error.get()).map_or_else(
        |_| {
            refused(
                NO_REPLY,
                format!(
                    "the client answered an error of no known shape: {}",
                    error.get()
                ),
            )
        },
        |e| refused(e.code, e.message),
    )
}

/// The refusal of a request the client cannot be sent: a method envhost does not send, or one
/// whose capability the client did not declare.
fn not_offered(method: &str) -> Asked {
    let why = match capability_for(method) {
        Some(capability) => format!("the client did not declare the {capability} capability"),
        None => format!(
            "envhost sends a client only sampling/createMessage, elicitation/create and \
             roots/list, not {method}"
        ),
    };
    Box::pin(std::future::ready(Err(refused(NOT_OFFERED, why))))
}

/// The peer of a tool call whose client wants nothing while it runs (no progress token, no log
/// level) and can be asked nothing (it declared neither sampling, elicitation nor roots): its
/// answer is one event, the guest's requests are refused with the reason, and the client may
/// still cancel it.
pub struct Unaskable(pub Arc<Cancel>);

impl Peer for Unaskable {
    fn request(&self, method: String, _params: String) -> Asked {
        not_offered(&method)
    }

    fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) {}

    fn log(&self, _: tracing::Level, _: &str, _: Option<&str>) {}

    fn cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}

impl Peer for StreamPeer {
    fn request(&self, method: String, params: String) -> Asked {
        let Some(capability) = capability_for(&method) else {
            return not_offered(&method);
        };
        let Some(session) = self.session.clone().filter(|s| s.client_can(capability)) else {
            return not_offered(&method);
        };
        let Ok(params) = RawValue::from_string(params) else {
            let why = "the request's params are not JSON";
            return Box::pin(std::future::ready(Err(refused(-32602, why))));
        };
        #[derive(Serialize)]
        struct Request<'a> {
            jsonrpc: &'static str,
            id: i64,
            method: &'a str,
            params: &'a RawValue,
        }
        let (id, reply) = session.expect_reply();
        let message = Request {
            jsonrpc: "2.0",
            id,
            method: &method,
            params: &params,
        };
        let event = serde_json::to_vec(&message).map(|json| wire::sse_event(&json));
        let events = self.events.clone();
        let cancel = self.cancel.clone();
        Box::pin(async move {
            let sent = match event {
                Ok(event) => events.send(Event::Message(event)).await.is_ok(),
                Err(_) => false,
            };
            if !sent {
                session.forget_request(id);
                return Err(refused(NO_REPLY, "the client's stream is gone"));
            }
            let reply = tokio::select! {
                reply = tokio::time::timeout(CLIENT_REPLY_TIMEOUT, reply) => reply,
                () = cancel.cancelled() => {
                    session.forget_request(id);
                    return Err(refused(NO_REPLY, "the call was cancelled"));
                }
            };
            match reply {
                Ok(Ok(Ok(result))) => Ok(result.get().to_owned()),
                Ok(Ok(Err(error))) => Err(client_error(&error)),
                Ok(Err(_)) => Err(refused(
                    NO_REPLY,
                    "the session ended before the client answered",
                )),
                Err(_) => {
                    session.forget_request(id);
                    let secs = CLIENT_REPLY_TIMEOUT.as_secs();
                    Err(refused(
                        NO_REPLY,
                        format!("the client did not answer in {secs} s"),
                    ))
                }
            }
        })
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let mut params = ProgressNotificationParam::new(token.clone(), progress);
        params.total = total;
        params.message = message;
        self.send("notifications/progress", &params);
    }

    fn log(&self, level: tracing::Level, message: &str, fields: Option<&str>) {
        let level = Level::of(level);
        if self.level.is_none_or(|least| level < least) {
            return;
        }
        let data = match fields.and_then(|f| serde_json::from_str::<Map<String, Value>>(f).ok()) {
            Some(mut fields) => {
                fields.insert("message".into(), Value::String(message.into()));
                Value::Object(fields)
            }
            None => Value::String(message.into()),
        };
        #[derive(Serialize)]
        struct Record<'a> {
            level: Level,
            logger: &'a str,
            data: Value,
        }
        let record = Record {
            level,
            logger: &self.logger,
            data,
        };
        self.send("notifications/message", &record);
    }
}

/// The `progressToken` of a request's `_meta`, when it is a string or an integer.
pub fn progress_token(meta: Option<&Map<String, Value>>) -> Option<ProgressToken> {
    match meta?.get("progressToken")? {
        Value::String(s) => Some(ProgressToken(NumberOrString::String(s.as_str().into()))),
        Value::Number(n) => n.as_i64().map(|n| ProgressToken(NumberOrString::Number(n))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn received(rx: &mut mpsc::Receiver<Event>) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(Event::Message(bytes)) = rx.try_recv() {
            let text = std::str::from_utf8(&bytes).unwrap();
            let json = text
                .trim_start_matches("event: message\r\ndata: ")
                .trim_end();
            out.push(serde_json::from_str(json).unwrap());
        }
        out
    }

    #[test]
    fn progress_goes_out_only_with_a_token_and_records_at_the_sessions_level() {
        let (tx, mut rx) = mpsc::channel(BUFFERED);
        let quiet = StreamPeer::new(tx.clone(), None, None, "slack".into(), None, Arc::default());
        quiet.progress(1.0, None, None);
        quiet.log(tracing::Level::ERROR, "boom", None);
        assert!(received(&mut rx).is_empty());

        let meta = serde_json::json!({"progressToken": "p-1"});
        let token = progress_token(meta.as_object());
        let peer = StreamPeer::new(
            tx,
            token,
            Some(Level::Info),
            "slack".into(),
            None,
            Arc::default(),
        );
        peer.progress(50.0, Some(100.0), None);
        peer.log(tracing::Level::DEBUG, "dropped", None);
        peer.log(
            tracing::Level::WARN,
            "kept",
            Some(r#"{"channel": "general"}"#),
        );
        assert_eq!(
            received(&mut rx),
            [
                serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": "p-1", "progress": 50.0, "total": 100.0}}),
                serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "warning", "logger": "slack",
                               "data": {"channel": "general", "message": "kept"}}}),
            ]
        );
    }

    #[test]
    fn levels_are_ordered_and_numbered() {
        assert!(Level::Debug < Level::Emergency);
        assert_eq!(
            Level::from_number(Level::Warning.number()),
            Some(Level::Warning)
        );
        assert_eq!(Level::from_number(0), None);
    }
}
