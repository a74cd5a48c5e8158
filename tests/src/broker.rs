//! A broker of the test's for turns run by the runtime (`envhost::runtime::agent::Agent::invoke`):
//! a scripted model, scripted tools, a session history, and what the turn asked of each.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use envhost::runtime::agent::bindings::agentenv::agent::env_tools::ToolOutput;
use envhost::runtime::agent::bindings::agentenv::agent::model::{
    Chunk, Message, ModelError, Request, ToolSpec,
};
use envhost::runtime::agent::bindings::agentenv::agent::types::Progress;
use envhost::runtime::agent::broker::BoxFuture;
use envhost::runtime::agent::{Broker, Gone, ModelStream};

/// What a turn did, as the broker saw it.
#[derive(Debug, Default)]
pub struct Seen {
    /// The events: `text X`, `thinking X`, or the event's debug form.
    pub events: Vec<String>,
    /// The model requests.
    pub requests: Vec<Request>,
    /// The tool calls: id, name, arguments.
    pub calls: Vec<(String, String, String)>,
    /// The messages appended to the session.
    pub appended: Vec<Message>,
}

/// A scripted model answer.
struct Script(VecDeque<Chunk>);

impl ModelStream for Script {
    fn next(&mut self) -> BoxFuture<'_, Result<Option<Chunk>, ModelError>> {
        Box::pin(async move { Ok(self.0.pop_front()) })
    }
}

/// The broker: the model gives `answers` in order, then `otherwise` every time; `list-tools`
/// answers `tools`, every call `tool`; the session holds `history`.
pub struct ScriptedBroker {
    /// What the turn did.
    pub seen: Arc<Mutex<Seen>>,
    /// The model's answers, in order.
    pub answers: VecDeque<Result<Vec<Chunk>, ModelError>>,
    /// The model's answer once `answers` is spent.
    pub otherwise: Vec<Chunk>,
    /// The environment's tools.
    pub tools: Vec<ToolSpec>,
    /// Every tool call's answer.
    pub tool: Result<ToolOutput, String>,
    /// The session's history.
    pub history: Vec<Message>,
    /// The caller leaves at the first event.
    pub leaves: bool,
}

impl ScriptedBroker {
    /// A broker with no answers, tools or history whose model answers `otherwise` every time and
    /// whose tool calls answer `tool`; and what it will see.
    pub fn new(
        otherwise: Vec<Chunk>,
        tool: Result<ToolOutput, String>,
    ) -> (Self, Arc<Mutex<Seen>>) {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let broker = Self {
            seen: seen.clone(),
            answers: VecDeque::new(),
            otherwise,
            tools: Vec::new(),
            tool,
            history: Vec::new(),
            leaves: false,
        };
        (broker, seen)
    }
}

impl Broker for ScriptedBroker {
    fn emit(&mut self, event: Progress) -> BoxFuture<'_, Result<(), Gone>> {
        Box::pin(async move {
            if self.leaves {
                return Err(Gone);
            }
            let shown = match event {
                Progress::Text(t) => format!("text {t}"),
                Progress::Thinking(t) => format!("thinking {t}"),
                other => format!("{other:?}"),
            };
            self.seen.lock().unwrap().events.push(shown);
            Ok(())
        })
    }

    fn complete(
        &mut self,
        request: Request,
    ) -> BoxFuture<'_, Result<Result<Box<dyn ModelStream>, ModelError>, Gone>> {
        Box::pin(async move {
            self.seen.lock().unwrap().requests.push(request);
            let answer = self
                .answers
                .pop_front()
                .unwrap_or_else(|| Ok(self.otherwise.clone()));
            Ok(answer.map(|chunks| Box::new(Script(chunks.into())) as Box<dyn ModelStream>))
        })
    }

    fn list_tools(&mut self) -> BoxFuture<'_, Result<Vec<ToolSpec>, Gone>> {
        Box::pin(async move { Ok(self.tools.clone()) })
    }

    fn call_tool(
        &mut self,
        call_id: String,
        name: String,
        args: String,
    ) -> BoxFuture<'_, Result<Result<ToolOutput, String>, Gone>> {
        Box::pin(async move {
            self.seen.lock().unwrap().calls.push((call_id, name, args));
            Ok(self.tool.clone())
        })
    }

    fn history(&mut self) -> BoxFuture<'_, Result<Vec<Message>, Gone>> {
        Box::pin(async move { Ok(self.history.clone()) })
    }

    fn append(&mut self, entries: Vec<Message>) -> BoxFuture<'_, Result<(), Gone>> {
        Box::pin(async move {
            self.seen.lock().unwrap().appended.extend(entries);
            Ok(())
        })
    }
}
