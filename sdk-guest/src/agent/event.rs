//! [`Event`]: the progress of a turn, and the checked extension event.

use serde_json::Value;

use super::Failure;
use super::bindings::agentenv::agent::types::{
    ExtensionEvent, Progress, Retrying, ToolEnded, ToolProgress, ToolStarted,
};

/// A non-terminal event of the turn (agents.md#turns), sent with
/// [`AgentContext::emit`](super::AgentContext::emit). Each goes out to the caller as one
/// event JSON, e.g. `{"type": "text", "delta": ...}`; the terminal is the agent's return value.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A piece of the answer's text.
    Text(String),
    /// A piece of the model's reasoning.
    Thinking(String),
    /// A call of a tool the agent runs itself is starting. The host emits `tool_started` and
    /// `tool_ended` around every call of the environment's tools
    /// ([`AgentContext::call`](super::AgentContext::call)): emit these only for the agent's own.
    ToolStarted {
        /// The call's id, unique in the turn.
        id: String,
        /// The tool's name.
        name: String,
        /// The call's arguments.
        args: Value,
    },
    /// The call started with `id` has ended.
    ToolEnded {
        /// The id its [`Event::ToolStarted`] had.
        id: String,
        /// Whether the call failed.
        is_error: bool,
        /// Its content, e.g. MCP content blocks.
        content: Value,
    },
    /// A line of a running call's progress (advisory: it replaces the previous line).
    ToolProgress {
        /// The call's id.
        id: String,
        /// The line.
        text: String,
    },
    /// The agent will try again after `delay_ms` (advisory).
    Retrying {
        /// This attempt, from 1.
        attempt: u32,
        /// The most attempts it will make.
        max_attempts: u32,
        /// How long it waits first.
        delay_ms: u64,
        /// Why.
        reason: String,
    },
}

impl From<Event> for Progress {
    fn from(event: Event) -> Self {
        match event {
            Event::Text(delta) => Self::Text(delta),
            Event::Thinking(delta) => Self::Thinking(delta),
            Event::ToolStarted { id, name, args } => Self::ToolStarted(ToolStarted {
                id,
                name,
                args: args.to_string(),
            }),
            Event::ToolEnded {
                id,
                is_error,
                content,
            } => Self::ToolEnded(ToolEnded {
                id,
                is_error,
                content: content.to_string(),
            }),
            Event::ToolProgress { id, text } => Self::ToolProgress(ToolProgress { id, text }),
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => Self::Retrying(Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            }),
        }
    }
}

/// The extension event `{"type": name, ...body}`, refused as the host would refuse it: a
/// `name` of `completed` or `failed`, or a `body` that is not a JSON object, is a
/// `protocol_violation`.
pub(super) fn extension(name: &str, body: &Value) -> Result<Progress, Failure> {
    if matches!(name, "completed" | "failed") {
        return Err(Failure::new(
            "protocol_violation",
            format!("an extension event may not be named {name:?}: that is a terminal"),
        ));
    }
    if !body.is_object() {
        return Err(Failure::new(
            "protocol_violation",
            "an extension event's body is not a JSON object",
        ));
    }
    Ok(Progress::Extension(ExtensionEvent {
        name: name.into(),
        body: body.to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_fields_cross_as_json_text() {
        let started = Event::ToolStarted {
            id: "t1".into(),
            name: "search".into(),
            args: json!({"q": "wasm"}),
        };
        match Progress::from(started) {
            Progress::ToolStarted(t) => assert_eq!(t.args, r#"{"q":"wasm"}"#),
            other => panic!("{other:?}"),
        }
        let ended = Event::ToolEnded {
            id: "t1".into(),
            is_error: false,
            content: json!([{"type": "text", "text": "found"}]),
        };
        match Progress::from(ended) {
            Progress::ToolEnded(t) => {
                assert_eq!(t.content, r#"[{"type":"text","text":"found"}]"#)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_extension_event_is_an_object_under_a_name_that_is_no_terminal() {
        match extension("citation", &json!({"url": "https://x"})) {
            Ok(Progress::Extension(e)) => {
                assert_eq!(
                    (e.name.as_str(), e.body.as_str()),
                    ("citation", r#"{"url":"https://x"}"#)
                )
            }
            other => panic!("{other:?}"),
        }
        for (name, body) in [
            ("completed", json!({})),
            ("failed", json!({})),
            ("plan", json!([1])),
        ] {
            let refused = extension(name, &body).expect_err(name);
            assert_eq!(refused.code.as_deref(), Some("protocol_violation"));
        }
    }
}
