//! `tool-agent`: the standard agent loop as a component of the `agent` world. Each turn: the
//! session's history and the prompt go to the model with the bound environment's tools; text
//! and reasoning stream out as events; the tool calls it asks for run on the environment (the
//! host emits `tool_started` / `tool_ended` around each); their answers go back to the model;
//! and so on until it answers without calling a tool, or [`MAX_STEPS`] model calls have been
//! made. The session keeps every step that finished: the prompt, then each answer with its
//! tools' answers, appended as the turn goes, so a turn that fails or is abandoned part-way
//! leaves the calls it made in the history.

use envhost_sdk::agent::{
    AgentContext, Completion, Failure, Message, Prompt, Request, Scope, agent,
};

/// The most model calls in one turn.
const MAX_STEPS: usize = 8;

#[agent]
fn invoke(_scope: Scope, prompt: Prompt, cx: &mut AgentContext) -> Result<Completion, Failure> {
    let tools = cx.tools();
    let mut messages = cx.history();
    let question = Message::user(prompt.text);
    cx.append(std::slice::from_ref(&question));
    messages.push(question);
    for _ in 0..MAX_STEPS {
        let answer = cx.ask(&Request::new(messages.clone(), tools.clone()))?;
        let step = messages.len();
        let calls = answer.tool_calls.clone();
        messages.push(answer);
        for call in &calls {
            let content = match cx.call(call) {
                Ok(output) => output.content,
                Err(why) => why,
            };
            messages.push(Message::tool(call.id.clone(), content));
        }
        cx.append(&messages[step..]);
        if calls.is_empty() {
            return Ok(Completion::new());
        }
    }
    Err(Failure::new(
        "turn_limit",
        format!("the model was still calling tools after {MAX_STEPS} steps"),
    ))
}
