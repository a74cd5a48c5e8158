//! `tool-agent`: the standard agent loop as a component of the `agent` world. Each turn: the
//! session's history and the prompt go to the model with the bound environment's tools; text
//! and reasoning stream out as events; the tool calls it asks for run on the environment (the
//! host emits `tool_started` / `tool_ended` around each); their answers go back to the model;
//! and so on until it answers without calling a tool, or [`MAX_STEPS`] model calls have been
//! made. The turn's messages are appended to the session at its end.

wit_bindgen::generate!({
    path: "../../wit/agent",
    world: "agent",
});

use agentenv::agent::model::{self, Chunk, Message, ModelError, Request, Role};
use agentenv::agent::types::{Completion, Failure, Progress, Prompt, Scope};
use agentenv::agent::{env_tools, events, session};
use exports::agentenv::agent::handler::Guest;

/// The most model calls in one turn.
const MAX_STEPS: usize = 8;

fn message(role: Role, content: String) -> Message {
    Message {
        role,
        content,
        tool_calls: Vec::new(),
        tool_call_id: None,
    }
}

fn model_failure(error: ModelError) -> Failure {
    let (details, retryable, code) = match error {
        ModelError::RateLimited(ms) => (
            format!("the model is rate limited; try again in {ms} ms"),
            true,
            "rate_limited",
        ),
        ModelError::Unavailable(why) => (
            format!("the model is unavailable: {why}"),
            true,
            "model_unavailable",
        ),
        ModelError::InvalidRequest(why) => (
            format!("the model refused the request: {why}"),
            false,
            "model_refused",
        ),
    };
    Failure {
        details,
        retryable,
        code: Some(code.into()),
    }
}

/// One model call: its streamed text and reasoning emitted, its answer as an assistant message.
fn ask(messages: &[Message], tools: &[model::ToolSpec]) -> Result<Message, Failure> {
    let response = model::complete(&Request {
        messages: messages.to_vec(),
        tools: tools.to_vec(),
        max_tokens: None,
        temperature: None,
    })
    .map_err(model_failure)?;
    let mut answer = message(Role::Assistant, String::new());
    while let Some(chunk) = response.next().map_err(model_failure)? {
        match chunk {
            Chunk::Text(text) => {
                events::emit(&Progress::Text(text.clone()));
                answer.content.push_str(&text);
            }
            Chunk::Thinking(text) => events::emit(&Progress::Thinking(text)),
            Chunk::ToolCall(call) => answer.tool_calls.push(call),
        }
    }
    Ok(answer)
}

struct Component;

impl Guest for Component {
    fn invoke(_scope: Scope, prompt: Prompt) -> Result<Completion, Failure> {
        let tools = env_tools::list_tools();
        let mut messages = session::history();
        let first_new = messages.len();
        messages.push(message(Role::User, prompt.text));
        for _ in 0..MAX_STEPS {
            let answer = ask(&messages, &tools)?;
            let calls = answer.tool_calls.clone();
            messages.push(answer);
            if calls.is_empty() {
                session::append(&messages[first_new..]);
                return Ok(Completion { data: None });
            }
            for call in calls {
                let content = match env_tools::call_tool(&call.id, &call.name, &call.args) {
                    Ok(output) => output.content,
                    Err(why) => why,
                };
                let mut answer = message(Role::Tool, content);
                answer.tool_call_id = Some(call.id);
                messages.push(answer);
            }
        }
        session::append(&messages[first_new..]);
        Err(Failure {
            details: format!("the model was still calling tools after {MAX_STEPS} steps"),
            retryable: false,
            code: Some("turn_limit".into()),
        })
    }
}

export!(Component);
