//! What the load clients (`mcp_load`, `episodes_bench`) share: raw HTTP/1.1 connections to an
//! environment server, MCP sessions over them, the data plane, the episodes API, closed loops of
//! tool calls and their prebuilt bodies, their statistics, and readings of CPU time and memory.
//!
//! To stay cheap they speak plain HTTP/1.1 over their own keep-alive connections ([`conn`]),
//! each driven by the task that uses it, reuse prebuilt headers, and deserialize only the fields
//! they check.

pub mod closed_loop;
pub mod conn;
pub mod data_plane;
pub mod episodes;
pub mod mcp;
pub mod measured;
pub mod procfs;
pub mod rpc;
pub mod sse;
pub mod stats;
pub mod template;
