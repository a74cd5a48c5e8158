//! One A2A task as one Agent Handler turn (docs/agent-env.md#tasks): the message's text and
//! images become the prompt, its `contextId` the session (`{deployment}:{contextId}`), the
//! turn's events `working` status updates (text deltas an appended `reply` artifact, thinking
//! deltas one update until the next event), and its
//! terminal the task's last status: `completed` or `failed`, whose message ends with the reply
//! as a text part after a data part of usage and error fields.

use std::sync::Arc;
use std::time::Duration;

use a2a_types::{
    Artifact, Message, MessageRole, Part, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

use super::deployment::{Deployment, lock};
use super::tasks::{Entry, Update, agent_message, timestamp};
use super::tools;
use crate::agent::sessions::MAX_SESSION_BYTES;
use crate::agent::{AgentEvent, AgentEvents, Image, Prompt, Scope};
use crate::server::state::AppState;

/// The failure codes the host gives (a task's data part says `error_type: "infra_error"` for
/// them, `agent_error` for the agent's own).
const HOST_CODES: [&str; 10] = [
    "host_busy",
    "session_busy",
    "session_unavailable",
    "mcp_unavailable",
    "timeout",
    "turn_ended",
    "protocol_violation",
    "max_turns",
    "agent_trap",
    "agent_start_failed",
];

/// The artifact text deltas are appended to.
pub const REPLY_ARTIFACT: &str = "reply";

/// Why a message starts no task (JSON-RPC `-32602`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// A started task: its id, and its updates when asked to watch it.
pub struct Started {
    /// The task's id.
    pub task_id: String,
    /// Its updates from its start on.
    pub updates: Option<mpsc::UnboundedReceiver<Update>>,
    /// The task as it was submitted.
    pub task: Task,
}

/// The prompt of `message`: its text parts joined by newlines, its inline image files.
fn prompt(message: &Message) -> Result<Prompt, Refused> {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for part in &message.parts {
        match part {
            Part::Text { text, .. } => texts.push(text.as_str()),
            Part::File {
                file: a2a_types::FileContent::WithBytes(file),
                ..
            } if file
                .mime_type
                .as_deref()
                .is_some_and(|m| m.starts_with("image/")) =>
            {
                images.push(Image {
                    mime_type: file.mime_type.clone().unwrap_or_default(),
                    data: file.bytes.clone(),
                });
            }
            Part::File { .. } => {
                return Err(Refused(
                    "a file part must be an image given inline as bytes".into(),
                ));
            }
            Part::Data { .. } => {}
        }
    }
    if texts.is_empty() && images.is_empty() {
        return Err(Refused("the message has no text or image part".into()));
    }
    Ok(Prompt {
        text: texts.join("\n"),
        images,
    })
}

/// Starts a task of `deployment` for `message`; `watch` asks for its updates.
///
/// # Errors
/// [`Refused`] for a message that cannot start one (nothing is started).
pub fn start(
    state: &AppState,
    deployment: &Arc<Deployment>,
    mut message: Message,
    watch: bool,
) -> Result<Started, Refused> {
    if message.role != MessageRole::User {
        return Err(Refused("the message's role must be user".into()));
    }
    if message.task_id.is_some() {
        return Err(Refused(
            "this agent's tasks take no follow-up message: send a new message without taskId"
                .into(),
        ));
    }
    let prompt = prompt(&message)?;
    let prompt_text = prompt.text.clone();
    let context_id = message
        .context_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let session = format!("{}:{context_id}", deployment.id());
    if session.len() > MAX_SESSION_BYTES {
        return Err(Refused(format!(
            "contextId is at most {} bytes",
            MAX_SESSION_BYTES - deployment.id().len() - 1
        )));
    }
    let task_id = uuid::Uuid::new_v4().to_string();
    message.context_id = Some(context_id.clone());
    message.task_id = Some(task_id.clone());
    let settings = lock(&deployment.settings).clone();
    let toolbox = {
        let servers = lock(&deployment.servers);
        tools::toolbox(state, &servers, settings.role.as_deref(), &session)
    };
    let events = match toolbox {
        Ok(toolbox) => {
            let scope = Scope {
                session,
                parent_session: None,
                branch_hints: Vec::new(),
                episode: None,
            };
            state
                .host
                .invoke_with(
                    deployment.agent(),
                    scope,
                    prompt,
                    settings.turn_options(),
                    toolbox,
                )
                .map_err(|e| Refused(e.to_string()))?
        }
        Err(server) => AgentEvents::one(AgentEvent::failed(
            "mcp_unavailable",
            format!("the episode of MCP server {server:?} has ended"),
            false,
        )),
    };
    let task = Task {
        kind: "task".into(),
        id: task_id.clone(),
        context_id: context_id.clone(),
        status: TaskStatus {
            state: TaskState::Submitted,
            timestamp: None,
            message: None,
        },
        history: vec![message],
        artifacts: Vec::new(),
        metadata: None,
    };
    let (stop, stopped) = oneshot::channel();
    let updates = {
        let mut tasks = lock(&deployment.tasks);
        tasks.insert(Entry::new(task.clone(), stop));
        tasks.record(&task_id, json!({"type": "prompt", "text": prompt_text}));
        if watch {
            tasks.watch(&task_id).and_then(|(_, updates)| updates)
        } else {
            None
        }
    };
    let run = Run {
        deployment: deployment.clone(),
        task_id: task_id.clone(),
        context_id,
        reply: String::new(),
        tool_calls: 0,
        working: false,
        thinking: String::new(),
    };
    tokio::spawn(run.drive(events, stopped, settings.timeout()));
    Ok(Started {
        task_id,
        updates,
        task,
    })
}

/// A running task's turn.
struct Run {
    deployment: Arc<Deployment>,
    task_id: String,
    context_id: String,
    /// The text deltas so far.
    reply: String,
    tool_calls: u64,
    /// Whether the task has been set `working`.
    working: bool,
    /// The thinking deltas not yet published: they go out as one update before the next event.
    thinking: String,
}

impl Run {
    /// Reads the turn's events into the task until its terminal, `stopped` (a cancel or the
    /// deployment deleted: the turn is dropped), or `timeout` (the task fails, code
    /// `timeout`).
    async fn drive(
        mut self,
        mut events: AgentEvents,
        mut stopped: oneshot::Receiver<()>,
        timeout: Duration,
    ) {
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                event = events.recv() => {
                    let event = event.unwrap_or_else(|| AgentEvent::failed(
                        "turn_ended",
                        "the turn ended without a terminal event",
                        true,
                    ));
                    if self.on(event) {
                        return;
                    }
                }
                _ = &mut stopped => return,
                () = &mut deadline => {
                    self.on(AgentEvent::failed(
                        "timeout",
                        format!("the task ran past its timeout_seconds ({} s)", timeout.as_secs()),
                        true,
                    ));
                    return;
                }
            }
        }
    }

    fn status(&self, state: TaskState, message: Option<Message>, is_final: bool) -> Update {
        Update::Status(TaskStatusUpdateEvent {
            kind: "status-update".into(),
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status: TaskStatus {
                state,
                timestamp: Some(timestamp()),
                message,
            },
            is_final,
            metadata: None,
        })
    }

    /// A `working` update whose message is `event` as a data part.
    fn progress(&self, event: &AgentEvent) -> Update {
        let parts = vec![Part::Data {
            data: event.to_json(),
            metadata: None,
        }];
        let message = agent_message(&self.task_id, &self.context_id, parts);
        self.status(TaskState::Working, Some(message), false)
    }

    /// The usage and error fields of the terminal's data part.
    fn usage(&self) -> Map<String, Value> {
        let mut data = Map::new();
        data.insert("usage".into(), json!({"tool_call_count": self.tool_calls}));
        data
    }

    /// Applies `event`; whether it ended the task.
    fn on(&mut self, event: AgentEvent) -> bool {
        let mut tasks = lock(&self.deployment.tasks);
        tasks.record(&self.task_id, event.to_json());
        let mut updates = Vec::new();
        if !self.working && !event.is_terminal() {
            self.working = true;
            updates.push(self.status(TaskState::Working, None, false));
        }
        let terminal = event.is_terminal();
        if let AgentEvent::Thinking(delta) = &event {
            self.thinking.push_str(delta);
        } else if !self.thinking.is_empty() {
            let thinking = AgentEvent::Thinking(std::mem::take(&mut self.thinking));
            updates.push(self.progress(&thinking));
        }
        match event {
            AgentEvent::Thinking(_) => {}
            AgentEvent::Text(delta) => {
                let append = !self.reply.is_empty();
                self.reply.push_str(&delta);
                updates.push(Update::Artifact(TaskArtifactUpdateEvent {
                    kind: "artifact-update".into(),
                    task_id: self.task_id.clone(),
                    context_id: self.context_id.clone(),
                    artifact: Artifact {
                        artifact_id: REPLY_ARTIFACT.into(),
                        parts: vec![Part::Text {
                            text: delta,
                            metadata: None,
                        }],
                        name: Some(REPLY_ARTIFACT.into()),
                        description: None,
                        extensions: Vec::new(),
                        metadata: None,
                    },
                    append: Some(append),
                    last_chunk: Some(false),
                    metadata: None,
                }));
            }
            AgentEvent::Completed { data } => {
                let mut fields = self.usage();
                if let Some(data) = data {
                    fields.insert("structured_output".into(), data);
                }
                let message = self.terminal_message(fields);
                updates.push(self.status(TaskState::Completed, Some(message), true));
            }
            AgentEvent::Failed {
                details,
                retryable,
                code,
            } => {
                let mut fields = self.usage();
                let kind = match code.as_deref() {
                    Some(code) if HOST_CODES.contains(&code) => "infra_error",
                    _ => "agent_error",
                };
                fields.insert("error_type".into(), kind.into());
                fields.insert("error_code".into(), code.into());
                fields.insert("error_message".into(), details.clone().into());
                fields.insert("retryable".into(), retryable.into());
                self.reply = details;
                let message = self.terminal_message(fields);
                updates.push(self.status(TaskState::Failed, Some(message), true));
            }
            other => {
                if matches!(other, AgentEvent::ToolStarted { .. }) {
                    self.tool_calls += 1;
                }
                updates.push(self.progress(&other));
            }
        }
        for update in updates {
            tasks.publish(&self.task_id, update);
        }
        terminal
    }

    /// The terminal's message: the reply as its text part (the last, and only, one), then a
    /// data part of `fields`.
    fn terminal_message(&self, fields: Map<String, Value>) -> Message {
        let parts = vec![
            Part::Text {
                text: self.reply.clone(),
                metadata: None,
            },
            Part::Data {
                data: Value::Object(fields),
                metadata: None,
            },
        ];
        agent_message(&self.task_id, &self.context_id, parts)
    }
}
