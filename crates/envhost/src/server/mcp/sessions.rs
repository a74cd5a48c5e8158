//! MCP sessions (protocol.md#sessions): ids issued at `initialize`, forgotten on `DELETE`, after 30
//! minutes idle, or never issued past 10,000 open ones — the reference's (mcp 1.30) defaults.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::{Notify, oneshot};

use super::notify::{Cancel, Level};
use crate::ids::{IdMap, fresh, key};

/// How long a session may sit idle before it is forgotten.
pub const SESSION_IDLE: Duration = Duration::from_secs(30 * 60);
/// The most sessions open at once, per episode.
pub const MAX_SESSIONS: usize = 10_000;
/// How often, at most, idle sessions are swept (when a session opens).
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// One MCP session.
pub struct Session {
    /// 32 lowercase hex digits.
    pub id: String,
    /// Milliseconds after the store's start of the last request.
    last_used: AtomicU64,
    /// Whether the session's standalone `GET` stream is open (an open stream keeps the session
    /// from idling, as a request in flight does).
    stream_open: AtomicBool,
    /// Set when the session ends.
    closed: AtomicBool,
    /// Wakes the standalone stream when the session ends.
    ended: Notify,
    /// The least severe level of the guest's log records the client wants
    /// (`logging/setLevel`), as [`Level::number`]; 0, none, until it sets one.
    log_level: AtomicU8,
    /// The capabilities the client declared at `initialize`.
    client_capabilities: OnceLock<Map<String, Value>>,
    /// The id of the next request sent to the client.
    next_request: AtomicI64,
    /// The requests sent to the client and not yet answered, by id.
    pending: Mutex<HashMap<i64, oneshot::Sender<Reply>>>,
    /// The tool calls running, by their request's id as JSON text, that the client may cancel.
    running: Mutex<HashMap<String, Arc<Cancel>>>,
}

/// A tool call of a session, running until dropped; its client may cancel it meanwhile.
pub struct Running {
    session: Arc<Session>,
    id: String,
    /// The call's cancellation.
    pub cancel: Arc<Cancel>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut running = self.session.running_table();
        if running
            .get(&self.id)
            .is_some_and(|cancel| Arc::ptr_eq(cancel, &self.cancel))
        {
            running.remove(&self.id);
        }
    }
}

/// A client's reply to a request the server sent: its `result`, or its `error` object.
pub type Reply = Result<Box<RawValue>, Box<RawValue>>;

impl Session {
    /// Records the capabilities the client declared at `initialize`.
    pub fn set_client_capabilities(&self, capabilities: Map<String, Value>) {
        let _ = self.client_capabilities.set(capabilities);
    }

    /// Whether the client declared capability `name` (`sampling`, `elicitation`, `roots`).
    pub fn client_can(&self, name: &str) -> bool {
        self.client_capabilities
            .get()
            .is_some_and(|capabilities| capabilities.contains_key(name))
    }

    /// A fresh id for a request to the client, and where its reply will come.
    pub fn expect_reply(&self) -> (i64, oneshot::Receiver<Reply>) {
        let id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending_table().insert(id, tx);
        (id, rx)
    }

    /// Forgets request `id` (answered elsewhere, or given up on).
    pub fn forget_request(&self, id: i64) {
        self.pending_table().remove(&id);
    }

    /// Hands the client's `reply` to request `id` to whoever waits for it; false when none
    /// does (an unknown or late id).
    pub fn reply(&self, id: i64, reply: Reply) -> bool {
        match self.pending_table().remove(&id) {
            Some(waiting) => waiting.send(reply).is_ok(),
            None => false,
        }
    }

    /// Registers the tool call of request `id` (its JSON text) as running, until the answer
    /// is dropped.
    pub fn run_call(self: &Arc<Self>, id: &str) -> Running {
        let cancel = Arc::new(Cancel::default());
        self.running_table().insert(id.to_owned(), cancel.clone());
        Running {
            session: self.clone(),
            id: id.to_owned(),
            cancel,
        }
    }

    /// Cancels the running tool call of request `id` (its JSON text), if there is one.
    pub fn cancel(&self, id: &str) {
        if let Some(cancel) = self.running_table().get(id) {
            cancel.cancel();
        }
    }

    fn running_table(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Cancel>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn pending_table(&self) -> std::sync::MutexGuard<'_, HashMap<i64, oneshot::Sender<Reply>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The level the client set with `logging/setLevel`, if it set one.
    pub fn log_level(&self) -> Option<Level> {
        Level::from_number(self.log_level.load(Ordering::Relaxed))
    }

    /// Sets the least severe level of the records the client is sent.
    pub fn set_log_level(&self, level: Level) {
        self.log_level.store(level.number(), Ordering::Relaxed);
    }

    /// Claims the session's one standalone SSE stream; false when one is open already.
    pub fn open_stream(&self) -> bool {
        !self.stream_open.swap(true, Ordering::AcqRel)
    }

    /// Releases the standalone stream (when its body is dropped).
    pub fn close_stream(&self) {
        self.stream_open.store(false, Ordering::Release);
    }

    /// Completes when the session ends (`DELETE` or idle expiry).
    pub async fn ended(&self) {
        let notified = self.ended.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if !self.closed.load(Ordering::Acquire) {
            notified.await;
        }
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.ended.notify_waiters();
    }
}

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("Too many open sessions")]
pub struct TooManySessions;

struct Table {
    sessions: IdMap<Arc<Session>>,
    last_sweep: Instant,
}

/// The open sessions of one MCP endpoint.
pub struct Sessions {
    start: Instant,
    idle: Duration,
    max: usize,
    table: Mutex<Table>,
}

impl Default for Sessions {
    fn default() -> Self {
        Self::new(SESSION_IDLE, MAX_SESSIONS)
    }
}

impl Sessions {
    /// A store whose sessions expire after `idle` and of which at most `max` are open.
    pub fn new(idle: Duration, max: usize) -> Self {
        let start = Instant::now();
        Self {
            start,
            idle,
            max,
            table: Mutex::new(Table {
                sessions: IdMap::default(),
                last_sweep: start,
            }),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn is_idle(&self, session: &Session, now: u64) -> bool {
        let idle_ms = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        !session.stream_open.load(Ordering::Relaxed)
            && now.saturating_sub(session.last_used.load(Ordering::Relaxed)) > idle_ms
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a session with a fresh id.
    ///
    /// # Errors
    /// [`TooManySessions`] when `max` are open (after forgetting idle ones).
    pub fn open(&self) -> Result<Arc<Session>, TooManySessions> {
        let now = self.now_ms();
        let mut table = self.table();
        let full = table.sessions.len() >= self.max;
        if full || table.last_sweep.elapsed() >= SWEEP_EVERY {
            table.last_sweep = Instant::now();
            table.sessions.retain(|_, s| {
                let keep = !self.is_idle(s, now);
                if !keep {
                    s.close();
                }
                keep
            });
        }
        if table.sessions.len() >= self.max {
            return Err(TooManySessions);
        }
        let (key, id) = fresh();
        let session = Arc::new(Session {
            id,
            last_used: AtomicU64::new(now),
            stream_open: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            ended: Notify::new(),
            log_level: AtomicU8::new(0),
            client_capabilities: OnceLock::new(),
            next_request: AtomicI64::new(1),
            pending: Mutex::default(),
            running: Mutex::default(),
        });
        table.sessions.insert(key, session.clone());
        Ok(session)
    }

    /// The open session `id`, marked as used now; none when unknown, ended or expired.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        let now = self.now_ms();
        let session = self.table().sessions.get(&key(id)?).cloned()?;
        if self.is_idle(&session, now) {
            self.end(id);
            return None;
        }
        session.last_used.store(now, Ordering::Relaxed);
        Some(session)
    }

    /// Ends session `id`; false when it was not open.
    pub fn end(&self, id: &str) -> bool {
        let removed = key(id).and_then(|id| self.table().sessions.remove(&id));
        removed.inspect(|s| s.close()).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_open_end_and_are_capped() {
        let sessions = Sessions::new(SESSION_IDLE, 2);
        let a = sessions.open().unwrap();
        assert_eq!(a.id.len(), 32);
        assert!(
            a.id.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        let b = sessions.open().unwrap();
        assert!(sessions.open().is_err());
        assert!(sessions.get(&a.id).is_some());
        assert!(sessions.end(&b.id));
        assert!(!sessions.end(&b.id));
        assert!(sessions.get(&b.id).is_none());
        assert!(sessions.open().is_ok());
    }

    #[test]
    fn idle_sessions_expire_and_make_room() {
        let sessions = Sessions::new(Duration::ZERO, 1);
        let a = sessions.open().unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(sessions.get(&a.id).is_none());
        let _b = sessions.open().unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(sessions.open().is_ok(), "the idle session makes room");
    }

    #[tokio::test]
    async fn ending_a_session_ends_its_stream_even_if_not_yet_waiting() {
        let sessions = Sessions::default();
        let s = sessions.open().unwrap();
        sessions.end(&s.id);
        tokio::time::timeout(Duration::from_secs(1), s.ended())
            .await
            .unwrap();
    }

    #[test]
    fn one_standalone_stream_per_session() {
        let sessions = Sessions::default();
        let s = sessions.open().unwrap();
        assert!(s.open_stream());
        assert!(!s.open_stream());
        s.close_stream();
        assert!(s.open_stream());
    }
}
