//! A guest's stderr, kept as its last [`TAIL_BYTES`] bytes and never shown to anyone but the
//! operator: what a guest wrote just before it trapped (a Rust panic's message, a Python
//! traceback's last line) names the cause that a trap alone (`unreachable`) does not. Writes
//! always succeed, so a chatty guest is never failed for writing.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// How much of a guest's stderr is kept: its last bytes.
pub const TAIL_BYTES: usize = 2048;

/// How the line Rust's panic handler ends with begins.
const RUST_BACKTRACE_NOTE: &str = "note: run with `RUST_BACKTRACE=1`";

/// The message of the panic with which componentize-py's runtime ends a call after printing an
/// exception no Python code caught: the exception's own line comes before it.
const PYTHON_UNCAUGHT: &str = "Python function threw an unexpected exception";

/// The shared end of a guest's stderr: every stream the guest opens writes into it.
#[derive(Clone, Default)]
pub struct Stderr {
    tail: Arc<Mutex<VecDeque<u8>>>,
}

impl Stderr {
    fn append(&self, bytes: &[u8]) {
        let mut tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = &bytes[bytes.len().saturating_sub(TAIL_BYTES)..];
        let overflow = (tail.len() + kept.len()).saturating_sub(TAIL_BYTES);
        tail.drain(..overflow);
        tail.extend(kept);
    }

    /// The last line the guest wrote that has text, trimmed, after the line it continues (one
    /// ending in `:`, as Rust's `panicked at FILE:LINE:COL:` does); Rust's note on
    /// `RUST_BACKTRACE`, and componentize-py's panic after an uncaught Python exception (whose
    /// traceback's last line, `Type: text`, comes before it), are passed over. None when it
    /// wrote nothing.
    pub fn last_line(&self) -> Option<String> {
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        let (front, back) = tail.as_slices();
        let text = String::from_utf8_lossy(&[front, back].concat()).into_owned();
        let mut lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with(RUST_BACKTRACE_NOTE))
            .collect();
        if lines.last() == Some(&PYTHON_UNCAUGHT) {
            lines.truncate(lines.len().saturating_sub(2));
        }
        let (last, before) = match lines.as_slice() {
            [.., before, last] => (last, Some(before)),
            [last] => (last, None),
            [] => return None,
        };
        Some(match before {
            Some(before) if before.ends_with(':') => format!("{before} {last}"),
            _ => (*last).to_owned(),
        })
    }
}

impl IsTerminal for Stderr {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Stderr {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(tokio::io::sink())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for Stderr {
    async fn ready(&mut self) {}
}

#[wasmtime_wasi::async_trait]
impl OutputStream for Stderr {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(TAIL_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_bytes_and_its_last_line() {
        let stderr = Stderr::default();
        assert_eq!(stderr.last_line(), None);
        let mut stream = stderr.clone();
        stream
            .write(Bytes::from_static(b"Traceback:\n  File x\n"))
            .unwrap();
        stream
            .write(Bytes::from_static(b"TypeError: not JSON\n\n"))
            .unwrap();
        assert_eq!(stderr.last_line().as_deref(), Some("TypeError: not JSON"));
        stream
            .write(Bytes::from(vec![b'x'; 3 * TAIL_BYTES]))
            .unwrap();
        assert_eq!(stderr.last_line().map(|l| l.len()), Some(TAIL_BYTES));
        stream
            .write(Bytes::from_static(b"\npanicked at lib.rs:3"))
            .unwrap();
        assert_eq!(stderr.last_line().as_deref(), Some("panicked at lib.rs:3"));
    }
}
