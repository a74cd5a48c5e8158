//! `computer-exec/v1` (computer.md#exec): a command run as the server's own user, in the
//! session user's home, with no shell, in a process group of its own that a timeout kills
//! whole; each output stream kept up to a byte cap; a repeated `request_id` answered with the
//! first result, joining the run while it is in flight.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use envhost_protocol::computer::errors::Code;
use envhost_protocol::error::CodedError;
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;
use tokio::sync::OnceCell;

use super::state::lock;

/// Finished results kept for a repeated `request_id`.
const KEEP_RESULTS: usize = 256;
/// The longest timeout a call may ask.
const MAX_TIMEOUT_S: f64 = 3600.0;
/// How long the output readers get after the command exits.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

type Outcome = Result<Value, CodedError>;

/// The commands of one computer.
pub struct Exec {
    home: PathBuf,
    display: Option<String>,
    output_bytes: usize,
    default_timeout_s: f64,
    running: Mutex<HashMap<String, Arc<OnceCell<Outcome>>>>,
    finished: Mutex<VecDeque<(String, Value)>>,
}

/// A checked `run` request.
struct Run {
    argv: Vec<String>,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    timeout: Duration,
    /// The most bytes kept of each stream.
    cap: usize,
}

fn invalid(message: impl Into<String>) -> CodedError {
    Code::InvalidArgument.error(message)
}

impl Exec {
    /// Commands run in `home` (also their `HOME`), with `DISPLAY` set to `display` when a
    /// display is granted, each stream kept up to `output_bytes`, `default_timeout_s` when a
    /// call names no timeout.
    pub fn new(
        home: PathBuf,
        display: Option<String>,
        output_bytes: u64,
        default_timeout_s: f64,
    ) -> Self {
        Self {
            home,
            display,
            output_bytes: usize::try_from(output_bytes).unwrap_or(usize::MAX),
            default_timeout_s,
            running: Mutex::default(),
            finished: Mutex::default(),
        }
    }

    /// The answer to `run` with `body`: `{exit_code, stdout, stderr, truncated, timed_out}`.
    ///
    /// # Errors
    /// `invalid_argument` for a bad body or a program that cannot be started.
    pub async fn run(&self, body: &Map<String, Value>) -> Outcome {
        let request_id = match body.get("request_id") {
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            _ => return Err(invalid("request_id is a non-empty string")),
        };
        if let Some((_, answer)) = lock(&self.finished)
            .iter()
            .find(|(id, _)| *id == request_id)
        {
            return Ok(answer.clone());
        }
        let run = self.check(body)?;
        let cell = lock(&self.running)
            .entry(request_id.clone())
            .or_default()
            .clone();
        let outcome = cell
            .get_or_init(|| async move {
                let task = tokio::spawn(execute(run));
                task.await.unwrap_or_else(|e| {
                    Err(Code::Internal.error(format!("the command's task failed: {e}")))
                })
            })
            .await
            .clone();
        lock(&self.running).remove(&request_id);
        if let Ok(answer) = &outcome {
            let mut finished = lock(&self.finished);
            if !finished.iter().any(|(id, _)| *id == request_id) {
                finished.push_back((request_id, answer.clone()));
                while finished.len() > KEEP_RESULTS {
                    finished.pop_front();
                }
            }
        }
        outcome
    }

    fn check(&self, body: &Map<String, Value>) -> Result<Run, CodedError> {
        let argv: Vec<String> = match body.get("argv") {
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| invalid("argv is a non-empty list of strings"))?,
            _ => {
                return Err(invalid(
                    "argv is a non-empty list of strings, run directly: name a shell to use one: ['bash', '-lc', '...']",
                ));
            }
        };
        let cwd = match body.get("cwd") {
            None | Some(Value::Null) => self.home.clone(),
            Some(Value::String(dir)) => self.home.join(dir),
            Some(_) => return Err(invalid("cwd is a string")),
        };
        let mut env = Vec::new();
        if let Some(display) = &self.display {
            env.push(("DISPLAY".to_owned(), display.clone()));
        }
        env.push(("HOME".to_owned(), self.home.display().to_string()));
        match body.get("env") {
            None | Some(Value::Null) => {}
            Some(Value::Object(vars)) => {
                for (key, value) in vars {
                    let value = value
                        .as_str()
                        .ok_or_else(|| invalid("env maps names to strings"))?;
                    env.push((key.clone(), value.to_owned()));
                }
            }
            Some(_) => return Err(invalid("env maps names to strings")),
        }
        let timeout_s = match body.get("timeout_s") {
            None | Some(Value::Null) => self.default_timeout_s,
            Some(v) => v.as_f64().ok_or_else(|| invalid("timeout_s is a number"))?,
        };
        if !(timeout_s > 0.0 && timeout_s <= MAX_TIMEOUT_S) {
            return Err(invalid(format!(
                "timeout_s is above 0 and at most 3600, got {timeout_s}"
            )));
        }
        Ok(Run {
            argv,
            cwd,
            env,
            timeout: Duration::from_secs_f64(timeout_s),
            cap: self.output_bytes,
        })
    }
}

/// The text of an OS error without Rust's `(os error N)`, as Python's `strerror`.
fn strerror(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// A stream's output as it is read: the bytes kept, and whether more came than were kept.
type Kept = Arc<Mutex<(Vec<u8>, bool)>>;

/// Reads `stream` to its end into `kept`, keeping at most `cap` bytes; what comes after that is
/// read and dropped, so a writer still holding the stream never blocks.
async fn keep(stream: Option<impl tokio::io::AsyncRead + Unpin>, cap: usize, kept: Kept) {
    let Some(mut stream) = stream else {
        return;
    };
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut kept = lock(&kept);
                let room = cap.saturating_sub(kept.0.len());
                kept.0.extend_from_slice(&buffer[..n.min(room)]);
                kept.1 |= n > room;
            }
        }
    }
}

/// Runs `run` to its end or its timeout.
async fn execute(run: Run) -> Outcome {
    let cap = run.cap;
    let mut command = tokio::process::Command::new(&run.argv[0]);
    command
        .args(&run.argv[1..])
        .current_dir(&run.cwd)
        .envs(run.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    let mut child = command
        .spawn()
        .map_err(|e| invalid(format!("cannot run '{}': {}", run.argv[0], strerror(&e))))?;
    let pid = child.id();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (out, err) = (Kept::default(), Kept::default());
    let readers = [
        tokio::spawn(keep(stdout, cap, out.clone())),
        tokio::spawn(keep(stderr, cap, err.clone())),
    ];
    let (status, timed_out) = match tokio::time::timeout(run.timeout, child.wait()).await {
        Ok(status) => (status.ok(), false),
        Err(_) => {
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                // SAFETY: killpg only sends a signal to the process group the child leads.
                unsafe {
                    libc::killpg(pid, libc::SIGKILL);
                }
            }
            let _ = child.wait().await;
            (None, true)
        }
    };
    // A reader still running past the drain (a background child holds the stream) goes on
    // draining on its own; the answer takes what it has kept by then.
    let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, futures::future::join_all(readers)).await;
    let (stdout, out_cut) = lock(&out).clone();
    let (stderr, err_cut) = lock(&err).clone();
    let exit_code = if timed_out {
        Value::Null
    } else {
        match status {
            Some(status) => match status.code() {
                Some(code) => json!(code),
                None => {
                    use std::os::unix::process::ExitStatusExt as _;
                    json!(-status.signal().unwrap_or(0))
                }
            },
            None => Value::Null,
        }
    };
    Ok(json!({
        "exit_code": exit_code,
        "stdout": String::from_utf8_lossy(&stdout),
        "stderr": String::from_utf8_lossy(&stderr),
        "truncated": out_cut || err_cut,
        "timed_out": timed_out,
    }))
}
