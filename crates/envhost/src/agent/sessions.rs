//! Session histories (docs/agents.md#sessions): each session's conversation, held by the host,
//! the only state that outlives a turn. In memory by default; with a directory
//! (`--sessions-dir`), each session is a JSON Lines file there, one [`Message`] a line, appended
//! and synced, so another envhost process sharing the directory continues the conversation. A
//! session has at most one turn at a time in a process: [`Sessions::begin`] answers none while
//! one runs (`session_busy`).

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::model::Message;

/// The longest session id, in bytes.
pub const MAX_SESSION_BYTES: usize = 200;

/// Why a history could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The id is empty or longer than [`MAX_SESSION_BYTES`].
    #[error("a session id is 1 to {MAX_SESSION_BYTES} bytes, got {0}")]
    BadId(usize),
    /// The file could not be read or written.
    #[error("session file {}: {why}", shown(.path))]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        why: String,
    },
    /// A line of the file is not a message.
    #[error("session file {}, line {line}: {why}", shown(.path))]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// Why it is not a message.
        why: String,
    },
}

/// A session file as an error names it to the turn's caller: its name, not the host's path.
fn shown(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| "?".into(), |n| n.to_string_lossy().into_owned())
}

/// Where histories are kept.
enum Store {
    Memory(Mutex<HashMap<String, Vec<Message>>>),
    Dir(PathBuf),
}

/// The sessions of a host: their histories and which have a turn running.
pub struct Sessions {
    store: Store,
    busy: Mutex<HashSet<String>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn check(session: &str) -> Result<(), SessionError> {
    if session.is_empty() || session.len() > MAX_SESSION_BYTES {
        return Err(SessionError::BadId(session.len()));
    }
    Ok(())
}

/// The file of `session` in `dir`: its id percent-encoded after `s-`, so that no id names
/// another path (`..`, `/`).
fn file_of(dir: &Path, session: &str) -> PathBuf {
    let encoded: String = url::form_urlencoded::byte_serialize(session.as_bytes()).collect();
    dir.join(format!("s-{encoded}.jsonl"))
}

fn read_file(path: &Path) -> Result<Vec<Message>, SessionError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(SessionError::Io {
                path: path.to_owned(),
                why: e.to_string(),
            });
        }
    };
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| SessionError::Corrupt {
                path: path.to_owned(),
                line: i + 1,
                why: e.to_string(),
            })
        })
        .collect()
}

fn append_file(path: &Path, entries: &[Message]) -> Result<(), SessionError> {
    let io = |e: std::io::Error| SessionError::Io {
        path: path.to_owned(),
        why: e.to_string(),
    };
    let mut lines = Vec::new();
    for entry in entries {
        serde_json::to_writer(&mut lines, entry).map_err(|e| io(e.into()))?;
        lines.push(b'\n');
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    file.write_all(&lines).map_err(io)?;
    file.sync_data().map_err(io)
}

impl Sessions {
    /// Histories held in this process's memory.
    pub fn in_memory() -> Arc<Self> {
        Arc::new(Self {
            store: Store::Memory(Mutex::default()),
            busy: Mutex::default(),
        })
    }

    /// Histories kept as JSON Lines files in `dir`, made when missing.
    ///
    /// # Errors
    /// [`SessionError::Io`] when the directory cannot be made.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Result<Arc<Self>, SessionError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|e| SessionError::Io {
            path: dir.clone(),
            why: e.to_string(),
        })?;
        Ok(Arc::new(Self {
            store: Store::Dir(dir),
            busy: Mutex::default(),
        }))
    }

    /// Starts a turn of `session`: none while another turn of it runs in this process. The
    /// session is free again when the returned [`Turn`] is dropped.
    pub fn begin(self: &Arc<Self>, session: &str) -> Option<Turn> {
        lock(&self.busy).insert(session.to_owned()).then(|| Turn {
            sessions: self.clone(),
            session: session.to_owned(),
        })
    }

    /// `session`'s messages, oldest first (none for a session never seen).
    ///
    /// # Errors
    /// [`SessionError`]: a bad id, or a file that cannot be read or holds a line that is not a
    /// message.
    pub async fn history(&self, session: &str) -> Result<Vec<Message>, SessionError> {
        check(session)?;
        match &self.store {
            Store::Memory(histories) => {
                Ok(lock(histories).get(session).cloned().unwrap_or_default())
            }
            Store::Dir(dir) => {
                let path = file_of(dir, session);
                tokio::task::spawn_blocking(move || read_file(&path))
                    .await
                    .map_err(|e| SessionError::Io {
                        path: dir.clone(),
                        why: e.to_string(),
                    })?
            }
        }
    }

    /// Adds `entries` at the end of `session`'s history (in a file, once they are on disk).
    ///
    /// # Errors
    /// [`SessionError`]: a bad id, or a file that cannot be written.
    pub async fn append(&self, session: &str, entries: &[Message]) -> Result<(), SessionError> {
        check(session)?;
        match &self.store {
            Store::Memory(histories) => {
                lock(histories)
                    .entry(session.to_owned())
                    .or_default()
                    .extend_from_slice(entries);
                Ok(())
            }
            Store::Dir(dir) => {
                let path = file_of(dir, session);
                let entries = entries.to_vec();
                tokio::task::spawn_blocking(move || append_file(&path, &entries))
                    .await
                    .map_err(|e| SessionError::Io {
                        path: dir.clone(),
                        why: e.to_string(),
                    })?
            }
        }
    }
}

/// A running turn of a session; the session is free again once it is dropped.
pub struct Turn {
    sessions: Arc<Sessions>,
    session: String,
}

impl Turn {
    /// The session's id.
    pub fn session(&self) -> &str {
        &self.session
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        lock(&self.sessions.busy).remove(&self.session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::model::{Role, ToolCall};

    fn message(role: Role, content: &str) -> Message {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    #[tokio::test]
    async fn a_session_has_one_turn_at_a_time() {
        let sessions = Sessions::in_memory();
        let turn = sessions.begin("s1").unwrap();
        assert!(sessions.begin("s1").is_none());
        assert!(sessions.begin("s2").is_some());
        drop(turn);
        assert!(sessions.begin("s1").is_some());
    }

    #[tokio::test]
    async fn a_directory_carries_a_conversation_to_another_store() {
        let dir = std::env::temp_dir().join(format!("envhost-sessions-{}", uuid::Uuid::new_v4()));
        let first = Sessions::in_dir(&dir).unwrap();
        let mut answer = message(Role::Assistant, "");
        answer.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "look".into(),
            args: "{}".into(),
        });
        first
            .append(
                "-1001234567890",
                &[message(Role::User, "hi\nthere"), answer.clone()],
            )
            .await
            .unwrap();
        let second = Sessions::in_dir(&dir).unwrap();
        assert_eq!(
            second.history("-1001234567890").await.unwrap(),
            [message(Role::User, "hi\nthere"), answer]
        );
        assert!(second.history("never").await.unwrap().is_empty());
        second
            .append("../escape", &[message(Role::User, "x")])
            .await
            .unwrap();
        assert!(dir.join("s-..%2Fescape.jsonl").exists());
        assert!(matches!(
            second.history("").await,
            Err(SessionError::BadId(0))
        ));
        std::fs::write(dir.join("s-broken.jsonl"), "{\"role\": \"user\"}\n").unwrap();
        assert!(matches!(
            second.history("broken").await,
            Err(SessionError::Corrupt { line: 1, .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
