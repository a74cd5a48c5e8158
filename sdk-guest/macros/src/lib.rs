//! The `#[environment]`, `#[computer_driver]` and `#[agent]` attributes of `envhost-sdk`.
//!
//! `#[environment]` reads one `impl` block: `#[tool]`, `#[extension]`, `#[reset]`, `#[add_data]`,
//! `#[get_data]` and `#[mcp]` methods, and `#[arg(description = "...")]` on tool and extension
//! parameters. It leaves the block as written (minus those attributes) and adds an
//! implementation of `envhost_sdk::Environment` plus the component export.
//!
//! `#[computer_driver]` reads one `impl` block whose methods are marked with the operations
//! they perform, and adds implementations of `envhost_sdk::computer::Driver` and of the groups'
//! traits, the bindings of the world that exports exactly those groups, and the export.
//!
//! `#[agent]` reads one function, the agent's turn, and adds the export of the `agent` world's
//! `handler` calling it. See `envhost-sdk` for the whole story.

#![warn(missing_docs)]

mod agent;
mod computer;
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
///   `#[arg(description = "...")]`; an `Option<T>` parameter is optional, and so is one with
///   `#[arg(default = <expr>)]`, which is `<expr>` when left out (its schema's `default`, as a
///   Python parameter's `= 3` in the reference SDK). A parameter of type `ToolContext` is
///   filled by the host and left out of the schema. The return type, `T` or `Result<T,
///   EnvError>`, gives the output schema (`ToolResult` is returned as is).
/// - `#[extension(uri = "...", op = "...", method = "GET", description = "...", path = "...")]`:
///   an extension method (parameters and return as for tools, the answer is the JSON of `T`).
/// - `#[reset]`, `#[add_data]` (takes `Vec<Part>`), `#[get_data]` (returns `Vec<Part>`): the data
///   plane; each may return `Result<_, EnvError>`. A `#[get_data]` that takes an
///   `Option<envhost_sdk::upload::Namespace>` declares `urn:agentenv:data-objects/v1` and is
///   called with the caller's `write_namespace` grant (protocol.md#exports).
/// - `#[mcp]`: MCP requests beyond tools, `fn(&mut self, method: &str, params:
///   serde_json::Value) -> Result<serde_json::Value, EnvError>`: resources, prompts and
///   completions (protocol.md#resources-and-prompts).
/// - `#[on_tool_call]`: `fn(&mut self, ctx: &ToolContext) -> Option<ToolResult>`, run before every
///   tool: `None` lets the call proceed, a `ToolResult` (`is_error` for a refusal) answers it
///   instead (the reference's `on_tool_call`).
/// - `#[served]`: `fn(info: &mut EnvInfo)`, which edits what is served before the host reads it:
///   drop or reorder tools and change their descriptions, drop extensions or their methods, set
///   extension-level `params`, add declaration-only extensions (`urn:agentenv:intake/v1`), drop
///   operations (the reference's `served_tools`, `served_extensions`, `served_operations`,
///   `extension_params` and `declared_extensions`).
///
/// Tools, and extensions and their methods, are served in the order of their methods' names, as
/// the reference SDK finds them.
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

/// Makes an `impl` block a computer driver and exports it as the component.
///
/// Arguments: `name = "..."` (the card's name; default: the type's name) and `supports =
/// "<JSON list>"` (the card's `supports` entries, replacing those `#[features]` gives).
///
/// Inside the block, each method marked with the operation it performs (taking `&self` or
/// `&mut self`, then the parameters shown; an operation that can fail may return `T` or
/// `Result<T, DriverError>`):
/// - required: `#[display] () -> DisplayState`, `#[capture] () -> Capture`, `#[click] (at:
///   Point, button: Button, count: u32, modifiers: Vec<Key>)`, `#[drag] (path: Vec<Point>,
///   button: Button, duration_ms: u32, modifiers: Vec<Key>)`, `#[scroll] (at: Point, direction:
///   ScrollDirection, amount: u32, modifiers: Vec<Key>)`, `#[type_text] (text: String,
///   tap_hold_ms: u32, type_delay_ms: u32)`, `#[press] (keys: Vec<Key>, tap_hold_ms: u32)`;
/// - the pointer group, all or none: `#[pointer_move] (at: Point)`, `#[pointer_down] (button:
///   Button)`, `#[pointer_up] (button: Button)`, `#[pointer_position] () -> Point`;
/// - the keyboard group, both or neither: `#[key_down] (keys: Vec<Key>)`, `#[key_up] (keys:
///   Vec<Key>)`;
/// - a settable display, both or neither: `#[display_modes] () -> Vec<(u32, u32)>`,
///   `#[set_display] (width: u32, height: u32, scale: f64) -> DisplayState`;
/// - optional: `#[ready_checks] () -> Vec<ReadyCheck>`, `#[features] () -> FeatureSet`.
///
/// A missing required operation, half a group, or an operation marked twice is a compile error
/// naming it.
#[proc_macro_attribute]
pub fn computer_driver(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(item as syn::ItemImpl);
    let mut args = computer::DriverArgs::default();
    let parser = syn::meta::parser(|meta| args.parse(meta));
    syn::parse_macro_input!(attr with parser);
    let mut block = item.clone();
    match computer::DriverModel::from_impl(args, item) {
        Ok(driver) => computer::expand(driver).into(),
        Err(e) => {
            computer::strip_markers(&mut block);
            let error = e.to_compile_error();
            quote::quote!(#block #error).into()
        }
    }
}

/// Makes a function the agent's turn and exports it as the component's `handler.invoke`.
///
/// The function is `fn invoke(scope: Scope, prompt: Prompt, cx: &mut AgentContext) ->
/// Result<Completion, Failure>` (any names; the types are `envhost_sdk::agent`'s). The host
/// calls it once per turn, in a fresh instance. The attribute takes no arguments.
///
/// An async or generic function, a method, another number of parameters, a context not taken
/// by `&mut`, or no return type is a compile error quoting the signature expected; parameter or
/// return types of another kind are a type error at the function's name.
#[proc_macro_attribute]
pub fn agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    agent::attribute(attr.into(), item.into()).into()
}
