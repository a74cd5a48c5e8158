//! The checks `#[agent]` makes on the function's shape, each a compile error saying what is
//! expected. Its parameter and return types are left to the compiler, where the expansion takes
//! the function as a `fn` pointer of the expected type.

use syn::spanned::Spanned;
use syn::{Error, FnArg, ItemFn, Result, ReturnType, Type};

/// The signature `#[agent]` expects, quoted in its errors.
pub const EXPECTED: &str =
    "fn invoke(scope: Scope, prompt: Prompt, cx: &mut AgentContext) -> Result<Completion, Failure>";

fn error(span: proc_macro2::Span, what: &str) -> Error {
    Error::new(span, format!("#[agent] {what}: `{EXPECTED}`"))
}

/// Checks that `item` is a plain function of three parameters, the last a `&mut` reference,
/// returning a value.
pub fn check(item: &ItemFn) -> Result<()> {
    let sig = &item.sig;
    if let Some(asyncness) = sig.asyncness {
        return Err(error(
            asyncness.span(),
            "marks a function that is not async (the turn runs to its end in one call)",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(error(
            sig.generics.span(),
            "marks a function without generics",
        ));
    }
    if let Some(receiver) = sig.receiver() {
        return Err(error(
            receiver.span(),
            "marks a free function, not a method",
        ));
    }
    if sig.inputs.len() != 3 {
        return Err(error(
            sig.inputs.span(),
            &format!(
                "marks a function of three parameters; `{}` has {}",
                sig.ident,
                sig.inputs.len()
            ),
        ));
    }
    if let Some(FnArg::Typed(cx)) = sig.inputs.last()
        && !matches!(&*cx.ty, Type::Reference(r) if r.mutability.is_some())
    {
        return Err(error(
            cx.ty.span(),
            "takes the context as its third parameter, by `&mut`",
        ));
    }
    if matches!(sig.output, ReturnType::Default) {
        return Err(error(sig.span(), "marks a function returning the terminal"));
    }
    Ok(())
}
