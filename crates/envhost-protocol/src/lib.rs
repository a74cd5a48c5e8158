//! The agentenv wire protocol as envhost serves it ([`protocol.md`]): the card, the JSON-RPC
//! data plane's envelope, parts, tool results, callers and their roles, tool access, extension
//! requests, coded errors, and the reference's JSON encoding.
//!
//! JSON only: this crate does no I/O and knows nothing of wasmtime or HTTP servers. Sections of
//! the protocol page are cited as `protocol.md#anchor`.
//!
//! [`protocol.md`]: https://github.com/envhost/envhost/blob/main/docs/protocol.md

#![warn(missing_docs)]

pub mod arguments;
pub mod card;
pub mod computer;
pub mod description;
pub mod error;
pub mod extension;
pub mod json;
pub mod json_object;
pub mod jsonrpc;
pub mod part;
mod python_form;
pub mod role;
pub mod tool_access;
pub mod tool_result;

pub use error::{Applied, CodedError};
pub use json_object::JsonObject;
pub use part::Part;
pub use role::Caller;
pub use tool_result::{Content, ToolResult};
