//! MCP, in one home: an episode's tools over MCP's streamable HTTP transport, as the reference
//! (mcp 1.30) serves them (protocol.md#mcp).
//!
//! - [`transport`]: the `/mcp` routes (`POST`, `GET`, `DELETE`);
//! - [`wire`]: the HTTP framing: headers, the JSON-RPC envelope, SSE answers, refusals;
//! - [`sessions`]: an episode's sessions;
//! - [`endpoints`]: what the server keeps per environment (its listing) and per episode (its
//!   sessions);
//! - [`listing`]: each tool's `tools/list` entry and the `initialize` result, encoded once;
//! - [`methods`]: `initialize`, `ping`, `logging/setLevel`, `tools/list`, `tools/call`, and the
//!   environment's resources, prompts and completions;
//! - [`notify`]: a tool call's progress and log notifications, on its request's stream;
//! - [`result`]: envhost's tool results as MCP's.
//!
//! rmcp's model types give the wire shapes; the transport is envhost's own rather than rmcp's
//! `StreamableHttpService`, which hands every request through a session worker, a serve loop
//! and a spawned task: on a 2-core machine it took about 98 µs of server CPU a tool call against
//! 31 µs answered in the request's own task, and capped the machine at 14,000 calls/s
//! (BENCHMARKS.md).

pub mod endpoints;
pub mod listing;
pub mod methods;
pub mod notify;
pub mod result;
pub mod sessions;
pub mod transport;
pub mod wire;

pub use endpoints::Endpoints;
pub use transport::routes;
