//! Guest-side bindings of the `agent` world (`wit/agent/agent.wit`). `#[agent]` exports the
//! handler through the `export!` macro they define; a component that links the SDK without
//! exporting an agent keeps none of them.

#![allow(missing_docs)]

wit_bindgen::generate!({
    world: "agent",
    path: "../wit/agent",
    pub_export_macro: true,
    export_macro_name: "export",
    default_bindings_module: "::envhost_sdk::agent::bindings",
    generate_all,
});
