//! The glue `#[agent]` expands to: the world's `handler` export, calling the agent's function
//! with a fresh [`AgentContext`](super::AgentContext) each turn.

/// Exports `$invoke`, a `fn(Scope, Prompt, &mut AgentContext) -> Result<Completion, Failure>`
/// (which `#[agent]` has checked), as the component's `handler.invoke`.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_agent {
    ($invoke:ident) => {
        const _: () = {
            use $crate::agent as __a;

            struct Export;

            impl __a::bindings::exports::agentenv::agent::handler::Guest for Export {
                fn invoke(
                    scope: __a::Scope,
                    prompt: __a::Prompt,
                ) -> ::std::result::Result<__a::Completion, __a::Failure> {
                    $invoke(scope, prompt, &mut __a::AgentContext::__new())
                }
            }

    __a::bindings::export!(Export with_types_in __a::bindings);
        };
    };
}
