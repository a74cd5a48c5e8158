//! [`ToolContext`]: who is calling, read from the host's `context` import.

use serde_json::Value;

use crate::bindings::agentenv::environment::context;

/// Who is calling (protocol.md#callers).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Caller {
    /// The caller's role: trimmed, and `None` for no role, `""` or `"default"`.
    pub role: Option<String>,
    /// Tells callers with one role apart: the gateway's session key, or the MCP session id of a
    /// direct caller.
    pub session: Option<String>,
}

/// The call being served, the reference SDK's `ToolContext`.
///
/// A `#[tool]` or `#[extension]` method gets it by declaring a parameter of this type (any name);
/// it never appears in the input schema. Other code reads it with [`ToolContext::current`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolContext {
    /// Who is calling.
    pub caller: Caller,
    /// The tool's name as served (`None` outside a call); for an extension, `<uri>#<op>`.
    pub tool: Option<String>,
    /// The arguments as received, before validation (empty outside a call).
    pub arguments: Arguments,
    /// A fresh id of this call, 32 lowercase hex digits (`None` outside a call).
    pub call_id: Option<String>,
}

impl ToolContext {
    /// The context of the call being served; an empty context outside any tool or extension call.
    pub fn current() -> Self {
        let Some(c) = context::current() else {
            return Self::default();
        };
        Self {
            caller: Caller {
                role: c.caller.role,
                session: c.caller.session,
            },
            tool: Some(c.tool),
            arguments: Arguments(c.arguments),
            call_id: Some(c.call_id),
        }
    }
}

/// The arguments of a call as the host received them: a JSON object as text, parsed only when
/// asked for (most tools never read them from their context).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Arguments(String);

impl Arguments {
    /// The JSON text, exactly as received (empty outside a call).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The arguments parsed: a JSON object (`Null` outside a call).
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }
}
