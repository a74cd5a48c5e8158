//! The `#[environment]` attribute of `envhost-sdk`.
//!
//! It reads one `impl` block: `#[tool]`, `#[extension]`, `#[reset]`, `#[add_data]` and
//! `#[get_data]` methods, and `#[arg(description = "...")]` on tool and extension parameters. It
//! leaves the block as written (minus those attributes) and adds an implementation of
//! `envhost_sdk::Environment` plus the component export. See `envhost-sdk` for the whole story.

#![warn(missing_docs)]

mod expand;
mod model;

use proc_macro::TokenStream;

/// Makes an `impl` block an agent environment and exports it as the component.
///
/// Arguments: `name = "..."` (the card's name; default: the type's name) and `tool_access` (the
/// host enforces per-role tool access and serves `/tools/disable` and `/tools/enable`).
///
/// Inside the block:
/// - `#[tool(name = "...", description = "...", hidden_by_default, structured_output = false,
///   meta = "<json object>", annotations(title = "...", read_only_hint = true,
///   destructive_hint = ..., idempotent_hint = ..., open_world_hint = ...))]`: an MCP tool. The
///   description defaults to the doc comment; the name to the method's; `{environment_name}` in a
///   name is the card's name. Parameters become the input schema (schemars), each described by
///   `#[arg(description = "...")]`; an `Option<T>` parameter is optional. A parameter of type
///   `ToolContext` is filled by the host and left out of the schema. The return type, `T` or
///   `Result<T, EnvError>`, gives the output schema (`ToolResult` is returned as is).
/// - `#[extension(uri = "...", op = "...", method = "GET", description = "...", path = "...")]`:
///   an extension method (parameters and return as for tools, the answer is the JSON of `T`).
/// - `#[reset]`, `#[add_data]` (takes `Vec<Part>`), `#[get_data]` (returns `Vec<Part>`): the data
///   plane; each may return `Result<_, EnvError>`.
#[proc_macro_attribute]
pub fn environment(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(item as syn::ItemImpl);
    let mut args = model::EnvArgs::default();
    let parser = syn::meta::parser(|meta| args.parse(meta));
    syn::parse_macro_input!(attr with parser);
    match model::Env::from_impl(args, item) {
        Ok(env) => expand::expand(env).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
