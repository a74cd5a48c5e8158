//! The tool or extension call an episode is serving, as its guest's `context.current()` reports
//! it (protocol.md#callers).

use envhost_protocol::Caller;

/// The tool or extension call being served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallContext {
    /// Who is calling.
    pub caller: Caller,
    /// The tool's name as served; for an extension, `<uri>#<op>`.
    pub tool: String,
    /// The arguments as received, as JSON text.
    pub arguments: String,
    /// 32 lowercase hex digits, fresh per call.
    pub call_id: String,
}

impl CallContext {
    /// A context with a fresh call id.
    pub fn new(caller: Caller, tool: String, arguments: String) -> Self {
        let mut call_id = [0; uuid::fmt::Simple::LENGTH];
        Self {
            caller,
            tool,
            arguments,
            call_id: uuid::Uuid::new_v4()
                .simple()
                .encode_lower(&mut call_id)
                .to_owned(),
        }
    }
}
