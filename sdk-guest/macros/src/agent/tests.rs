//! The checks `#[agent]` makes: what compiles, and the message of each compile error.

use syn::{ItemFn, parse_quote};

use quote::quote;

use super::{attribute, check};

fn error(item: ItemFn) -> String {
    match check(&item) {
        Ok(()) => panic!("expected a compile error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_expected_signature_passes() {
    let item: ItemFn = parse_quote! {
        fn invoke(s: Scope, p: Prompt, cx: &mut AgentContext) -> Result<Completion, Failure> {
            todo!()
        }
    };
    assert!(check(&item).is_ok());
}

#[test]
fn each_wrong_shape_is_named() {
    let cases: [(ItemFn, &str); 7] = [
        (
            parse_quote!(
                async fn invoke(s: Scope, p: Prompt, cx: &mut AgentContext) -> R {
                    todo!()
                }
            ),
            "not async",
        ),
        (
            parse_quote!(
                fn invoke<T>(s: Scope, p: Prompt, cx: &mut AgentContext) -> R {
                    todo!()
                }
            ),
            "without generics",
        ),
        (
            parse_quote!(
                fn invoke(&self, p: Prompt, cx: &mut AgentContext) -> R {
                    todo!()
                }
            ),
            "not a method",
        ),
        (
            parse_quote!(
                fn invoke(s: Scope, p: Prompt) -> R {
                    todo!()
                }
            ),
            "three parameters; `invoke` has 2",
        ),
        (
            parse_quote!(
                fn invoke(s: Scope, p: Prompt, cx: AgentContext) -> R {
                    todo!()
                }
            ),
            "by `&mut`",
        ),
        (
            parse_quote!(
                fn invoke(s: Scope, p: Prompt, cx: &AgentContext) -> R {
                    todo!()
                }
            ),
            "by `&mut`",
        ),
        (
            parse_quote!(
                fn invoke(s: Scope, p: Prompt, cx: &mut AgentContext) {}
            ),
            "returning the terminal",
        ),
    ];
    for (item, expected) in cases {
        let message = error(item);
        assert!(message.contains(expected), "{message}");
        assert!(
            message.contains("-> Result<Completion, Failure>"),
            "{message}"
        );
    }
}

#[test]
fn arguments_and_items_that_are_not_functions_are_refused() {
    let function = quote!(
        fn invoke(s: Scope, p: Prompt, cx: &mut AgentContext) -> R {
            todo!()
        }
    );
    let with_arguments = attribute(quote!(name = "tool"), function.clone()).to_string();
    assert!(
        with_arguments.contains("takes no arguments"),
        "{with_arguments}"
    );
    let not_a_function = attribute(
        quote!(),
        quote!(
            struct Agent;
        ),
    )
    .to_string();
    assert!(
        not_a_function.contains("marks a function"),
        "{not_a_function}"
    );
    let exported = attribute(quote!(), function).to_string();
    assert!(exported.contains("__export_agent"), "{exported}");
}
