//! One turn of an agent bound to an environment episode (docs/agents.md#turns): the host's
//! [`Broker`] (the model, the episode's tools with `tool_started` / `tool_ended` around each
//! call, the session's history) and the turn's event stream, which ends with exactly one
//! terminal, or with none when its reader goes away (the instance is then dropped at once).

use std::sync::{Arc, Mutex, PoisonError};

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
use super::toolbox::{Listing, Toolbox, Unavailable};

/// Events a turn may have waiting for its reader before the guest waits in `emit`.
const EVENT_BUFFER: usize = 64;

/// What a turn runs with.
#[derive(Clone)]
pub struct TurnSetup {
    /// The agent.
    pub agent: Arc<Agent>,
    /// The tools it is given.
    pub tools: Toolbox,
    /// The sessions' histories.
    pub sessions: Arc<Sessions>,
    /// The model endpoint; none gives the guest `invalid-request` for every completion.
    pub model: Option<ModelEndpoint>,
    /// The model's name at the endpoint.
    pub model_name: String,
    /// The system message of every model request, replacing the guest's (or put first when
    /// the request has none); the guest's own when absent.
    pub system_prompt: Option<String>,
    /// The most model completions the turn may ask for; asking for one more fails the turn
    /// with code `max_turns`. No limit when absent.
    pub max_completions: Option<u32>,
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
            listing: None,
            completions: 0,
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
    /// The tools as last listed for the guest; a call finds its server here.
    listing: Option<Listing>,
    /// The model completions asked for so far.
    completions: u32,
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

    /// Stops the turn with `failed{code: "mcp_unavailable"}`.
    fn unavailable(&self, e: &Unavailable) -> Gone {
        self.fail("mcp_unavailable", e.to_string())
    }

    /// Lists the turn's tools again and keeps the listing for the calls that follow.
    async fn listing(&mut self) -> Result<&Listing, Gone> {
        let listing = self
            .setup
            .tools
            .list()
            .await
            .map_err(|e| self.unavailable(&e))?;
        Ok(self.listing.insert(listing))
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

/// Makes `prompt` the system message of `messages`: the first message's content when it is a
/// system message, else a system message put first.
fn with_system_prompt(messages: &mut Vec<model::Message>, prompt: &str) {
    match messages.first_mut() {
        Some(first) if first.role == model::Role::System => first.content = prompt.to_owned(),
        _ => messages.insert(
            0,
            model::Message {
                role: model::Role::System,
                content: prompt.to_owned(),
                tool_calls: Vec::new(),
                tool_call_id: None,
            },
        ),
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
            if let Some(most) = self.setup.max_completions
                && self.completions >= most
            {
                return Err(self.fail(
                    "max_turns",
                    format!("the turn asked for more than its {most} model completions"),
                ));
            }
            self.completions += 1;
            let Some(endpoint) = &self.setup.model else {
                return Ok(Err(wit::ModelError::InvalidRequest(
                    "no model endpoint is configured for this agent".into(),
                )));
            };
            let mut messages: Vec<model::Message> =
                request.messages.into_iter().map(message).collect();
            if let Some(prompt) = &self.setup.system_prompt {
                with_system_prompt(&mut messages, prompt);
            }
            let request = ChatRequest {
                messages,
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
            let listing = self.listing().await?;
            Ok(listing
                .tools
                .iter()
                .map(|t| wit::ToolSpec {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    input_schema: t.input_schema.clone(),
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
            if self.listing.is_none() {
                self.listing().await?;
            }
            self.send(AgentEvent::ToolStarted {
                id: call_id.clone(),
                name: name.clone(),
                args: Value::Object(arguments.clone()),
            })
            .await?;
            let listing = self.listing.take().unwrap_or_default();
            let called = self.setup.tools.call(&listing, &name, arguments).await;
            self.listing = Some(listing);
            let called = called.map_err(|e| self.unavailable(&e))?;
            self.send(AgentEvent::ToolEnded {
                id: call_id,
                is_error: called.is_error,
                content: called.content.clone(),
            })
            .await?;
            Ok(Ok(ToolOutput {
                is_error: called.is_error,
                content: called.content.to_string(),
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
