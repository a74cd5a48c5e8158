//! `#[agent]`: an agent from one function.

mod signature;

#[cfg(test)]
mod tests;

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Error, ItemFn};

use signature::{EXPECTED, check};

/// The attribute on `item`: the function as written and the export of the world's `handler`
/// calling it, or the function and the compile error. The function is taken as a `fn` pointer
/// of the expected type, so that other parameter or return types are one type error at its
/// name, quoting both signatures.
pub fn attribute(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item: ItemFn = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(_) => {
            let message = format!("#[agent] marks a function: `{EXPECTED}`");
            let error = Error::new_spanned(&item, message).to_compile_error();
            return quote!(#item #error);
        }
    };
    let checked = if attr.is_empty() {
        check(&item)
    } else {
        Err(Error::new_spanned(attr, "#[agent] takes no arguments"))
    };
    match checked {
        Ok(()) => {
            let ident = &item.sig.ident;
            let a = quote!(::envhost_sdk::agent);
            let invoke = quote_spanned! {item.sig.span()=>
                const INVOKE: fn(#a::Scope, #a::Prompt, &mut #a::AgentContext)
                    -> ::std::result::Result<#a::Completion, #a::Failure> = #ident;
            };
            quote! {
                #item

                const _: () = {
                    #invoke
                    ::envhost_sdk::__export_agent!(INVOKE);
                };
            }
        }
        Err(e) => {
            let error = e.to_compile_error();
            quote!(#item #error)
        }
    }
}
