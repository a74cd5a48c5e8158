//! A turn's events as the Agent Handler contract names them (docs/agents.md#events): the
//! non-terminal ones, then exactly one terminal, `completed` or `failed`.

use serde_json::{Map, Value, json};

/// One event of a turn.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// `{"type": "text", "delta"}`.
    Text(String),
    /// `{"type": "thinking", "delta"}`.
    Thinking(String),
    /// `{"type": "tool_started", "id", "name", "args"}`.
    ToolStarted {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        args: Value,
    },
    /// `{"type": "tool_ended", "id", "isError", "content"}`.
    ToolEnded {
        /// The call's id.
        id: String,
        /// Whether it failed.
        is_error: bool,
        /// Its content blocks.
        content: Value,
    },
    /// `{"type": "tool_progress", "id", "text"}`.
    ToolProgress {
        /// The call's id.
        id: String,
        /// The line.
        text: String,
    },
    /// `{"type": "retrying", "attempt", "maxAttempts", "delayMs", "reason"}`.
    Retrying {
        /// This attempt.
        attempt: u32,
        /// The most attempts.
        max_attempts: u32,
        /// The wait before it, in ms.
        delay_ms: u64,
        /// Why.
        reason: String,
    },
    /// `{"type": name, ...body}`: an event the contract does not name, relayed as it came.
    Extension {
        /// Its type.
        name: String,
        /// Its other fields.
        body: Map<String, Value>,
    },
    /// The `completed` terminal: `{"type": "completed", "data"?}`.
    Completed {
        /// Its data, when any.
        data: Option<Value>,
    },
    /// The `failed` terminal: `{"type": "failed", "details", "retryable", "code"?}`.
    Failed {
        /// What went wrong.
        details: String,
        /// Whether trying again may succeed.
        retryable: bool,
        /// Its code, when any.
        code: Option<String>,
    },
}

impl AgentEvent {
    /// A `failed` terminal.
    pub fn failed(code: &str, details: impl Into<String>, retryable: bool) -> Self {
        Self::Failed {
            details: details.into(),
            retryable,
            code: Some(code.to_owned()),
        }
    }

    /// Whether it ends the turn.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Completed { .. } | Self::Failed { .. })
    }

    /// The event as its JSON object.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Text(delta) => json!({"type": "text", "delta": delta}),
            Self::Thinking(delta) => json!({"type": "thinking", "delta": delta}),
            Self::ToolStarted { id, name, args } => {
                json!({"type": "tool_started", "id": id, "name": name, "args": args})
            }
            Self::ToolEnded {
                id,
                is_error,
                content,
            } => json!({"type": "tool_ended", "id": id, "isError": is_error, "content": content}),
            Self::ToolProgress { id, text } => {
                json!({"type": "tool_progress", "id": id, "text": text})
            }
            Self::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => json!({"type": "retrying", "attempt": attempt, "maxAttempts": max_attempts,
                "delayMs": delay_ms, "reason": reason}),
            Self::Extension { name, body } => {
                let mut event = Map::new();
                event.insert("type".into(), json!(name));
                event.extend(body.iter().map(|(k, v)| (k.clone(), v.clone())));
                Value::Object(event)
            }
            Self::Completed { data: Some(data) } => json!({"type": "completed", "data": data}),
            Self::Completed { data: None } => json!({"type": "completed"}),
            Self::Failed {
                details,
                retryable,
                code,
            } => {
                let mut event =
                    json!({"type": "failed", "details": details, "retryable": retryable});
                if let Some(code) = code {
                    event["code"] = json!(code);
                }
                event
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_the_contracts_json() {
        let mut body = Map::new();
        body.insert("url".into(), json!("https://x"));
        let extension = AgentEvent::Extension {
            name: "citation".into(),
            body,
        };
        assert_eq!(
            extension.to_json(),
            json!({"type": "citation", "url": "https://x"})
        );
        assert!(!extension.is_terminal());
        let busy = AgentEvent::failed("session_busy", "busy", true);
        assert_eq!(
            busy.to_json(),
            json!({"type": "failed", "details": "busy", "retryable": true, "code": "session_busy"})
        );
        assert!(busy.is_terminal());
        assert_eq!(
            AgentEvent::Completed { data: None }.to_json(),
            json!({"type": "completed"})
        );
    }
}
