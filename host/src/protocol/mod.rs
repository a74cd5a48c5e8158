//! The agentenv wire protocol (`spec/agentenv-env-protocol.md`): card, parts, JSON-RPC envelope,
//! coded errors, roles, tool access, extension requests. Pure JSON: no I/O, no wasmtime.

pub mod card;
pub mod description;
pub mod error;
pub mod extension;
pub mod json;
pub mod jsonrpc;
pub mod part;
pub mod role;
pub mod tool_access;
