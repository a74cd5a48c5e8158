//! Write an agent environment in Rust, as a WebAssembly component that envhost serves over the
//! agentenv protocol (card, JSON-RPC data plane, MCP tools, extensions, tool access).
//!
//! An environment is a `Default` struct and one `impl` block under [`environment`]: its `#[tool]`
//! methods become MCP tools, its `#[extension]` methods extension routes, and its `#[reset]`,
//! `#[add_data]` and `#[get_data]` methods the data plane. That one attribute also exports the
//! component; build it with `cargo build --target wasm32-wasip2`.
//!
//! ```ignore
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
//! What the host does for every environment, so that the guest never has to: resolving
//! `{environment_name}` in tool names, validating tool arguments against their schemas, role and
//! session parsing, per-role tool access, fetching `file://` and `https://` parts, and turning
//! [`EnvError`]s into the protocol's error shapes.

mod context;
mod error;
mod export;
pub mod log;
mod output;
mod part;
mod schema;

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "environment-world",
        path: "../wit/environment",
        pub_export_macro: true,
        export_macro_name: "export",
        default_bindings_module: "::envhost_sdk::bindings",
        generate_all,
    });
}

pub use context::{Caller, ToolContext};
pub use envhost_sdk_macros::environment;
pub use error::{Applied, EnvError};
pub use export::Environment;
pub use part::{DataPart, FilePart, FileSource, Part, TextPart};

pub use bindings::exports::agentenv::environment::environment::{
    ContentBlock, EnvInfo, ExtensionInfo, ExtensionLayout, ExtensionMethod, ImageContent,
    Operation, ToolAnnotations, ToolInfo, ToolResult,
};

/// What the `#[environment]` expansion uses; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::export::{ExtensionSpec, ToolSpec, extensions, parse_request, tool_info};
    pub use crate::output::{OutputShape, extension_answer, tool_result};
    pub use crate::schema::{input_schema, output_shape};
    pub use schemars;
    pub use serde;
    pub use serde_json;
}
