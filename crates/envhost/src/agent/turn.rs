//! One turn of an agent bound to an environment episode (docs/agents.md#turns): the host's
//! [`Broker`] (the model, the episode's tools with `tool_started` / `tool_ended` around each
//! call, the session's history) and the turn's event stream, which ends with exactly one
//! terminal, or with none when its reader goes away (the instance is then dropped at once).

use std::sync::{Arc, Mutex, PoisonError};

use envhost_protocol::Caller;
use envhost_runtime::agent::bindings::agentenv::agent::env_tools::ToolOutput;
use envhost_runtime::agent::bindings::agentenv::agent::model as wit;
use envhost_runtime::agent::bindings::agentenv::agent::types::{Progress, Prompt, Scope};
use envhost_runtime::agent::broker::{BoxFuture, Completed};
use envhost_runtime::agent::{Agent, Broker, Gone, ModelStream, TurnEnd};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, mpsc};

use super::events::AgentEvent;
use super::model::{self, ChatRequest, ChatStream, ModelEndpoint};
use super::sessions::Sessions;
use super::stream::AgentEvents;
use crate::Episode;

/// Events a turn may have waiting for its reader before the guest waits in `emit`.
const EVENT_BUFFER: usize = 64;

/// What a turn runs with.
#[derive(Clone)]
pub struct TurnSetup {
    /// The agent.
    pub agent: Arc<Agent>,
    /// The episode whose tools it is given.
    pub episode: Arc<Episode>,
    /// The sessions' histories.
    pub sessions: Arc<Sessions>,
    /// The model endpoint; none gives the guest `invalid-request` for every completion.
    pub model: Option<ModelEndpoint>,
    /// The model's name at the endpoint.
    pub model_name: String,
}

/// Runs a turn of `scope`'s session with `prompt`, holding `permit` until it ends; answers its
/// events. A session with a turn running answers exactly `failed{code: "session_busy",
/// retryable: true}`.
pub fn invoke(
    setup: TurnSetup,
    scope: Scope,
    prompt: Prompt,
    permit: Option<OwnedSemaphorePermit>,
) -> AgentEvents {
    let Some(turn) = setup.sessions.begin(&scope.session) else {
        return AgentEvents::one(AgentEvent::failed(
            "session_busy",
            format!("the session {:?} has a turn running", scope.session),
            true,
        ));
    };
    let (events, reader) = mpsc::channel(EVENT_BUFFER);
    let reader = AgentEvents::new(reader);
    tokio::spawn(async move {
        let stop = Arc::new(Mutex::new(None));
        let broker = HostBroker {
            events: events.clone(),
            stop: stop.clone(),
            setup: setup.clone(),
            session: scope.session.clone(),
            caller: Caller {
                role: None,
                session: Some(scope.session.clone()),
            },
        };
        let run = setup
            .agent
            .invoke(&scope, &prompt, Box::new(broker), "agent");
        let end = tokio::select! {
            end = run => end,
            () = events.closed() => return,
        };
        let stopped = stop.lock().unwrap_or_else(PoisonError::into_inner).take();
        let terminal = match (end, stopped) {
            (_, Some(failed)) => failed,
            (TurnEnd::Completed(c), None) => AgentEvent::Completed {
                data: c.data.as_deref().and_then(|d| serde_json::from_str(d).ok()),
            },
            (TurnEnd::Failed(f), None) => AgentEvent::Failed {
                details: f.details,
                retryable: f.retryable,
                code: f.code,
            },
            (TurnEnd::CallerGone, None) => return,
        };
        let _ = events.send(terminal).await;
        drop((turn, permit));
    });
    reader
}

/// The host's broker of one turn.
struct HostBroker {
    events: mpsc::Sender<AgentEvent>,
    /// The `failed` terminal of a turn the host stopped (a protocol violation, a session that
    /// could not be read or written).
    stop: Arc<Mutex<Option<AgentEvent>>>,
    setup: TurnSetup,
    session: String,
    caller: Caller,
}

impl HostBroker {
    /// Sends `event` to the turn's reader, then yields, so that a reader woken on this thread
    /// (tokio runs a task woken by another after it, on the same worker) relays it before the
    /// guest goes on computing.
    async fn send(&self, event: AgentEvent) -> Result<(), Gone> {
        self.events.send(event).await.map_err(|_| Gone)?;
        tokio::task::yield_now().await;
        Ok(())
    }

    /// Stops the turn with the `failed` terminal `code`: the guest is trapped at this import.
    fn fail(&self, code: &str, details: String) -> Gone {
        tracing::warn!(session = %self.session, code, "{details}");
        *self.stop.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(AgentEvent::failed(code, details, false));
        Gone
    }

    fn json(&self, text: &str, what: &str) -> Result<Value, Gone> {
        serde_json::from_str(text)
            .map_err(|e| self.fail("protocol_violation", format!("{what} is not JSON: {e}")))
    }

    fn event(&self, progress: Progress) -> Result<AgentEvent, Gone> {
        Ok(match progress {
            Progress::Text(delta) => AgentEvent::Text(delta),
            Progress::Thinking(delta) => AgentEvent::Thinking(delta),
            Progress::ToolStarted(t) => AgentEvent::ToolStarted {
                args: self.json(&t.args, "a tool_started event's args")?,
                id: t.id,
                name: t.name,
            },
            Progress::ToolEnded(t) => AgentEvent::ToolEnded {
                content: self.json(&t.content, "a tool_ended event's content")?,
                id: t.id,
                is_error: t.is_error,
            },
            Progress::ToolProgress(t) => AgentEvent::ToolProgress {
                id: t.id,
                text: t.text,
            },
            Progress::Retrying(r) => AgentEvent::Retrying {
                attempt: r.attempt,
                max_attempts: r.max_attempts,
                delay_ms: r.delay_ms,
                reason: r.reason,
            },
            Progress::Extension(e) => {
                if matches!(e.name.as_str(), "completed" | "failed") {
                    return Err(self.fail(
                        "protocol_violation",
                        format!(
                            "an extension event may not be named {:?}: that is a terminal",
                            e.name
                        ),
                    ));
                }
                let Value::Object(body) = self.json(&e.body, "an extension event's body")? else {
                    return Err(self.fail(
                        "protocol_violation",
                        "an extension event's body is not a JSON object".into(),
                    ));
                };
                AgentEvent::Extension { name: e.name, body }
            }
        })
    }
}

fn role(role: wit::Role) -> model::Role {
    match role {
        wit::Role::System => model::Role::System,
        wit::Role::User => model::Role::User,
        wit::Role::Assistant => model::Role::Assistant,
        wit::Role::Tool => model::Role::Tool,
    }
}

fn wit_role(role: model::Role) -> wit::Role {
    match role {
        model::Role::System => wit::Role::System,
        model::Role::User => wit::Role::User,
        model::Role::Assistant => wit::Role::Assistant,
        model::Role::Tool => wit::Role::Tool,
    }
}

fn call(call: wit::ToolCall) -> model::ToolCall {
    model::ToolCall {
        id: call.id,
        name: call.name,
        args: call.args,
    }
}

fn wit_call(call: model::ToolCall) -> wit::ToolCall {
    wit::ToolCall {
        id: call.id,
        name: call.name,
        args: call.args,
    }
}

fn message(m: wit::Message) -> model::Message {
    model::Message {
        role: role(m.role),
        content: m.content,
        tool_calls: m.tool_calls.into_iter().map(call).collect(),
        tool_call_id: m.tool_call_id,
    }
}

fn wit_message(m: model::Message) -> wit::Message {
    wit::Message {
        role: wit_role(m.role),
        content: m.content,
        tool_calls: m.tool_calls.into_iter().map(wit_call).collect(),
        tool_call_id: m.tool_call_id,
    }
}

fn model_error(e: model::ModelError) -> wit::ModelError {
    match e {
        model::ModelError::RateLimited { retry_after_ms } => {
            wit::ModelError::RateLimited(retry_after_ms)
        }
        model::ModelError::Unavailable(why) => wit::ModelError::Unavailable(why),
        model::ModelError::InvalidRequest(why) => wit::ModelError::InvalidRequest(why),
    }
}

/// A model answer handed to the guest.
struct Streamed(ChatStream);

impl ModelStream for Streamed {
    fn next(&mut self) -> BoxFuture<'_, Result<Option<wit::Chunk>, wit::ModelError>> {
        Box::pin(async move {
            let chunk = self.0.next().await.map_err(model_error)?;
            Ok(chunk.map(|c| match c {
                model::Chunk::Text(t) => wit::Chunk::Text(t),
                model::Chunk::Thinking(t) => wit::Chunk::Thinking(t),
                model::Chunk::ToolCall(c) => wit::Chunk::ToolCall(wit_call(c)),
            }))
        })
    }
}

impl Broker for HostBroker {
    fn emit(&mut self, event: Progress) -> BoxFuture<'_, Result<(), Gone>> {
        Box::pin(async move {
            let event = self.event(event)?;
            self.send(event).await
        })
    }

    fn complete(&mut self, request: wit::Request) -> BoxFuture<'_, Result<Completed, Gone>> {
        Box::pin(async move {
            if self.events.is_closed() {
                return Err(Gone);
            }
            let Some(endpoint) = &self.setup.model else {
                return Ok(Err(wit::ModelError::InvalidRequest(
                    "no model endpoint is configured for this agent".into(),
                )));
            };
            let request = ChatRequest {
                messages: request.messages.into_iter().map(message).collect(),
                tools: request
                    .tools
                    .into_iter()
                    .map(|t| model::ToolSpec {
                        name: t.name,
                        description: t.description,
                        input_schema: t.input_schema,
                    })
                    .collect(),
                max_tokens: request.max_tokens,
                temperature: request.temperature,
            };
            Ok(endpoint
                .complete(&self.setup.model_name, &request)
                .await
                .map(|stream| Box::new(Streamed(stream)) as Box<dyn ModelStream>)
                .map_err(model_error))
        })
    }

    fn list_tools(&mut self) -> BoxFuture<'_, Result<Vec<wit::ToolSpec>, Gone>> {
        Box::pin(async move {
            Ok(self
                .setup
                .episode
                .tools(&self.caller)
                .into_iter()
                .map(|t| wit::ToolSpec {
                    name: t.tool.name.clone(),
                    description: t.tool.description.clone().unwrap_or_default(),
                    input_schema: t.schema_json.clone(),
                })
                .collect())
        })
    }

    fn call_tool(
        &mut self,
        call_id: String,
        name: String,
        args: String,
    ) -> BoxFuture<'_, Result<Result<ToolOutput, String>, Gone>> {
        Box::pin(async move {
            let Ok(Value::Object(arguments)) = serde_json::from_str::<Value>(&args) else {
                return Ok(Err(format!(
                    "the arguments of {name} are not a JSON object: {args}"
                )));
            };
            self.send(AgentEvent::ToolStarted {
                id: call_id.clone(),
                name: name.clone(),
                args: Value::Object(arguments.clone()),
            })
            .await?;
            let result = self
                .setup
                .episode
                .call_tool(&name, arguments, self.caller.clone())
                .await;
            let content = Value::Array(
                result
                    .content
                    .iter()
                    .map(|c| match c {
                        envhost_protocol::Content::Text(text) => {
                            serde_json::json!({"type": "text", "text": text})
                        }
                        envhost_protocol::Content::Image { data, mime_type } => {
                            serde_json::json!({"type": "image", "data": data, "mimeType": mime_type})
                        }
                    })
                    .collect(),
            );
            self.send(AgentEvent::ToolEnded {
                id: call_id,
                is_error: result.is_error,
                content: content.clone(),
            })
            .await?;
            Ok(Ok(ToolOutput {
                is_error: result.is_error,
                content: content.to_string(),
            }))
        })
    }

    fn history(&mut self) -> BoxFuture<'_, Result<Vec<wit::Message>, Gone>> {
        Box::pin(async move {
            match self.setup.sessions.history(&self.session).await {
                Ok(history) => Ok(history.into_iter().map(wit_message).collect()),
                Err(e) => Err(self.fail("session_unavailable", e.to_string())),
            }
        })
    }

    fn append(&mut self, entries: Vec<wit::Message>) -> BoxFuture<'_, Result<(), Gone>> {
        Box::pin(async move {
            let entries: Vec<model::Message> = entries.into_iter().map(message).collect();
            self.setup
                .sessions
                .append(&self.session, &entries)
                .await
                .map_err(|e| self.fail("session_unavailable", e.to_string()))
        })
    }
}
