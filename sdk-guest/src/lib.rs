//! Write an agent environment in Rust, as a WebAssembly component that envhost serves over the
//! agentenv protocol (card, JSON-RPC data plane, MCP tools, extensions, tool access).
//!
//! An environment is a `Default` struct and one `impl` block under [`environment`]: its `#[tool]`
//! methods become MCP tools, its `#[extension]` methods extension routes, and its `#[reset]`,
//! `#[add_data]` and `#[get_data]` methods the data plane. That one attribute also exports the
//! component; build it with `cargo build --target wasm32-wasip2`.
//!
//! ```
//! use envhost_sdk::{environment, EnvError, ToolContext};
//!
//! #[derive(Default)]
//! struct Counter { count: i64 }
//!
//! #[environment(name = "counter")]
//! impl Counter {
//!     /// Add `by` to the counter; answers the new value.
//!     #[tool(name = "{environment_name}_add")]
//!     fn add(&mut self, #[arg(description = "How much to add.")] by: i64) -> Result<i64, EnvError> {
//!         self.count = self.count.checked_add(by).ok_or_else(|| EnvError::new("overflow", "too big"))?;
//!         Ok(self.count)
//!     }
//! }
//! ```
//!
//! A parameter with `#[arg(default = ...)]` may be left out, as a Python parameter with a default
//! value in the reference SDK: its schema gives the `default`, and the method gets that value.
//!
//! ```
//! use envhost_sdk::{environment, ContentBlock, Environment as _};
//!
//! #[derive(Default)]
//! struct Dice;
//!
//! #[environment(name = "dice")]
//! impl Dice {
//!     /// Answers the number of sides.
//!     #[tool(name = "{environment_name}_sides")]
//!     fn sides(&self, #[arg(description = "How many sides.", default = 6)] sides: i64) -> i64 {
//!         sides
//!     }
//! }
//!
//! let schema = Dice::describe().tools[0].input_schema.clone();
//! assert_eq!(
//!     schema,
//!     r#"{"properties":{"sides":{"default":6,"description":"How many sides.","title":"Sides","type":"integer"}},"title":"sidesArguments","type":"object"}"#
//! );
//! let answer = Dice::default().call_tool("{environment_name}_sides", "{}").unwrap();
//! assert!(matches!(&answer.content[..], [ContentBlock::Text(t)] if t == "6"));
//! ```
//!
//! Tools, and extensions and their methods, come in the order of their methods' names, as the
//! reference SDK finds them (Python's `dir`), whatever the order in the block:
//!
//! ```
//! use envhost_sdk::{environment, Environment as _};
//!
//! #[derive(Default)]
//! struct Desk;
//!
//! #[environment(name = "desk")]
//! impl Desk {
//!     #[extension(uri = "urn:example:desk/v1", op = "count", method = "GET")]
//!     fn count(&self) -> u32 {
//!         0
//!     }
//!
//!     #[extension(uri = "urn:example:desk/v1", op = "close")]
//!     fn close(&mut self, ticket: u32) -> u32 {
//!         ticket
//!     }
//! }
//!
//! let methods = &Desk::describe().extensions[0].methods;
//! assert_eq!(methods.iter().map(|m| m.op.as_str()).collect::<Vec<_>>(), ["close", "count"]);
//! ```
//!
//! Two hooks choose what is served, as the reference SDK's do: `#[served]` edits the description
//! before the host reads it (its `served_tools`, `served_extensions`, `served_operations`,
//! `extension_params`, `declared_extensions`), and `#[on_tool_call]` may answer a call before its
//! tool runs.
//!
//! ```
//! use envhost_sdk::{environment, EnvInfo, ExtensionInfo, ExtensionLayout, ToolContext, ToolResult};
//!
//! #[derive(Default)]
//! struct Gated;
//!
//! #[environment(name = "gated")]
//! impl Gated {
//!     /// Answers "open".
//!     #[tool(name = "{environment_name}_open")]
//!     fn open(&self) -> String {
//!         "open".into()
//!     }
//!
//!     #[served]
//!     fn served(info: &mut EnvInfo) {
//!         info.tools[0].description = Some("Opens the gate.".into());
//!         info.extensions.push(ExtensionInfo {
//!             uri: "urn:agentenv:intake/v1".into(),
//!             description: None,
//!             params: Some(r#"{"add": [{"part": "data", "format": "json"}]}"#.into()),
//!             required: None,
//!             layout: ExtensionLayout::Single,
//!             methods: Vec::new(),
//!         });
//!     }
//!
//!     #[on_tool_call]
//!     fn gate(&mut self, ctx: &ToolContext) -> Option<ToolResult> {
//!         (ctx.caller.role.as_deref() == Some("guest")).then(|| ToolResult {
//!             content: vec![envhost_sdk::ContentBlock::Text("refused".into())],
//!             structured_content: None,
//!             is_error: true,
//!             meta: None,
//!         })
//!     }
//! }
//!
//! use envhost_sdk::Environment as _;
//! assert_eq!(Gated::describe().tools[0].description.as_deref(), Some("Opens the gate."));
//! assert_eq!(Gated::describe().extensions[0].uri, "urn:agentenv:intake/v1");
//! ```
//!
//! A computer driver is written the same way, under [`computer_driver`]: see [`computer`]. An
//! agent is one function under [`agent::agent`]: see [`agent`].
//!
//! What the host does for every environment, so that the guest never has to: resolving
//! `{environment_name}` in tool names, validating tool arguments against their schemas, role and
//! session parsing, per-role tool access, fetching `file://` and `https://` parts, and turning
//! [`EnvError`]s into the protocol's error shapes.

#![warn(missing_docs)]

pub mod agent;
pub mod client;
pub mod computer;
mod context;
mod error;
mod export;
mod json;
mod list;
pub mod log;
mod output;
mod part;
pub mod progress;
mod schema;
pub mod serving;
pub mod upload;

/// Guest-side bindings generated by wit-bindgen; the WIT documents every type.
#[doc(hidden)]
#[allow(missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "environment",
        path: "../wit/environment",
        pub_export_macro: true,
        export_macro_name: "export",
        default_bindings_module: "::envhost_sdk::bindings",
        generate_all,
    });
}

pub use context::{Arguments, Caller, ToolContext};
pub use envhost_sdk_macros::{computer_driver, environment};
pub use error::{Applied, EnvError};
pub use export::Environment;
pub use json::dumps::json_dumps;
pub use part::{DataPart, FilePart, FileSource, JsonObject, Part, TextPart};
pub use serving::update_tool;

pub use bindings::exports::agentenv::environment::env::{
    ContentBlock, EnvInfo, ExtensionInfo, ExtensionLayout, ExtensionMethod, ImageContent,
    Operation, ToolAnnotations, ToolInfo, ToolResult,
};

/// What the `#[environment]` and `#[computer_driver]` expansions use; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::export::{
        ExtensionSpec, ToolSpec, extensions, mcp_request, parse_request, tool_info,
    };
    pub use crate::output::{OutputShape, extension_answer, tool_result};
    pub use crate::schema::{input_schema, output_shape};
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use wit_bindgen;
}
