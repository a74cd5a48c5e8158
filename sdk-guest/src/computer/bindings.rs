//! Guest-side bindings of what a driver imports from the `computer` package: the shared
//! `types`, `pixels`, `timing` and `x11`, generated once here and named by every driver's own
//! bindings (which `#[computer_driver]` generates for the world it picks). The world below
//! imports only, so a component that links the SDK without being a driver exports nothing of
//! it, and imports only what it calls.

#![allow(missing_docs)]

wit_bindgen::generate!({
    inline: r#"
        package envhost:computer-sdk;

        world imports {
            import agentenv:computer/types@0.1.0;
            import agentenv:computer/pixels@0.1.0;
            import agentenv:computer/timing@0.1.0;
            import agentenv:computer/x11@0.1.0;
        }
    "#,
    path: "../wit/computer",
    world: "imports",
    generate_all,
});
