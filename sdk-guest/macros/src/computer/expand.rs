//! The code `#[computer_driver]` generates: the block as written, the bindings of the world it
//! picked, the SDK's traits forwarding to the marked methods, and the export.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use super::model::DriverModel;
use super::ops::Op;

/// The `computer` package, whose worlds the bindings are generated from.
const COMPUTER_WIT: &str = include_str!("../../../../wit/computer/computer.wit");

/// The module the bindings are generated in, next to the `impl` block.
const BINDINGS: &str = "__envhost_computer_driver";

/// The trait method an operation is forwarded from: its name, its parameters after `&mut self`
/// and its output.
fn signature(op: Op) -> (TokenStream, TokenStream, TokenStream) {
    let c = quote!(::envhost_sdk::computer);
    let keys = quote!(::std::vec::Vec<#c::Key>);
    let fallible = |t: TokenStream| quote!(::std::result::Result<#t, #c::DriverError>);
    let unit = fallible(quote!(()));
    match op {
        Op::Display => (
            quote!(display),
            quote!(),
            fallible(quote!(#c::DisplayState)),
        ),
        Op::Capture => (quote!(capture), quote!(), fallible(quote!(#c::Capture))),
        Op::Click => (
            quote!(click),
            quote!(at: #c::Point, button: #c::Button, count: u32, modifiers: #keys),
            unit,
        ),
        Op::Drag => (
            quote!(drag),
            quote!(path: ::std::vec::Vec<#c::Point>, button: #c::Button, duration_ms: u32, modifiers: #keys),
            unit,
        ),
        Op::Scroll => (
            quote!(scroll),
            quote!(at: #c::Point, direction: #c::ScrollDirection, amount: u32, modifiers: #keys),
            unit,
        ),
        Op::TypeText => (
            quote!(type_text),
            quote!(text: ::std::string::String, tap_hold_ms: u32, type_delay_ms: u32),
            unit,
        ),
        Op::Press => (quote!(press), quote!(keys: #keys, tap_hold_ms: u32), unit),
        Op::PointerMove => (quote!(pointer_move), quote!(at: #c::Point), unit),
        Op::PointerDown => (quote!(pointer_down), quote!(button: #c::Button), unit),
        Op::PointerUp => (quote!(pointer_up), quote!(button: #c::Button), unit),
        Op::PointerPosition => (
            quote!(pointer_position),
            quote!(),
            fallible(quote!(#c::Point)),
        ),
        Op::KeyDown => (quote!(key_down), quote!(keys: #keys), unit),
        Op::KeyUp => (quote!(key_up), quote!(keys: #keys), unit),
        Op::SetDisplay => (
            quote!(set_display),
            quote!(width: u32, height: u32, scale: f64),
            fallible(quote!(#c::DisplayState)),
        ),
        Op::DisplayModes => (
            quote!(display_modes),
            quote!(),
            quote!(::std::vec::Vec<(u32, u32)>),
        ),
        Op::ReadyChecks => (
            quote!(ready_checks),
            quote!(),
            quote!(::std::vec::Vec<#c::ReadyCheck>),
        ),
        Op::Features => (quote!(features), quote!(), quote!(#c::FeatureSet)),
        Op::ExportState => (
            quote!(export_state),
            quote!(),
            quote!(::std::option::Option<::std::string::String>),
        ),
        Op::Seed => (quote!(seed), quote!(json: ::std::string::String), unit),
    }
}

/// The trait method forwarding `op` to the method marked with it, if any. The call names the
/// type (`<T>::method(self, ...)`), which finds the inherent method first: `self.method(...)`
/// would find the trait's own method of the same name and call itself.
fn forward(model: &DriverModel, op: Op) -> Option<TokenStream> {
    let method = model.methods.get(&op)?;
    let (name, params, output) = signature(op);
    let args = op
        .params()
        .iter()
        .map(|p| format_ident!("{}", p.split(':').next().unwrap_or_default()));
    let ident = &method.ident;
    let ty = &model.self_ty;
    let call = quote_spanned!(method.span=> <#ty>::#ident(self, #(#args),*));
    let body = if method.returns_result || !op.fallible() {
        call
    } else {
        quote!(::std::result::Result::Ok(#call))
    };
    let comma = (!params.is_empty()).then(|| quote!(,));
    Some(quote! {
        fn #name(&mut self #comma #params) -> #output { #body }
    })
}

fn features(model: &DriverModel) -> TokenStream {
    let c = quote!(::envhost_sdk::computer);
    let declared = match model.methods.get(&Op::Features) {
        Some(method) => {
            let (ty, ident) = (&model.self_ty, &method.ident);
            quote_spanned!(method.span=> <#ty>::#ident(self))
        }
        None => quote!(<#c::FeatureSet as ::std::default::Default>::default()),
    };
    match &model.supports {
        Some(supports) => quote! {
            fn features(&mut self) -> #c::FeatureSet {
                #c::FeatureSet { supports: #supports.into(), ..#declared }
            }
        },
        None if model.methods.contains_key(&Op::Features) => quote! {
            fn features(&mut self) -> #c::FeatureSet { #declared }
        },
        None => TokenStream::new(),
    }
}

pub fn expand(model: DriverModel) -> TokenStream {
    let item = &model.item;
    let ty = &model.self_ty;
    let name = &model.name;
    let c = quote!(::envhost_sdk::computer);
    let bindings = format_ident!("{}", BINDINGS);
    let world = model.world();
    let required: Vec<TokenStream> = [
        Op::Display,
        Op::Capture,
        Op::ReadyChecks,
        Op::Click,
        Op::Drag,
        Op::Scroll,
        Op::TypeText,
        Op::Press,
        Op::ExportState,
        Op::Seed,
    ]
    .into_iter()
    .filter_map(|op| forward(&model, op))
    .collect();
    let features = features(&model);
    let groups = model.groups();
    let group_impls = groups.iter().map(|group| {
        let trait_name = match group.key {
            "pointer" => quote!(Pointer),
            "keyboard" => quote!(Keyboard),
            _ => quote!(DisplayModes),
        };
        let methods = group.ops.iter().filter_map(|&op| forward(&model, op));
        quote!(impl #c::#trait_name for #ty { #(#methods)* })
    });
    let group_keys = groups.iter().map(|g| format_ident!("{}", g.key));
    let source = "::envhost_sdk::computer::bindings::agentenv::computer";
    let with = ["types", "pixels", "timing", "x11"].map(|i| {
        let key = format!("agentenv:computer/{i}@0.1.0");
        let path: syn::Path = syn::parse_str(&format!("{source}::{i}")).expect("a path");
        quote!(#key: #path)
    });
    quote! {
        #item

        #[doc(hidden)]
        #[allow(clippy::all, missing_docs)]
        mod #bindings {
            ::envhost_sdk::__private::wit_bindgen::generate!({
                inline: #COMPUTER_WIT,
                path: [],
                world: #world,
                runtime_path: "::envhost_sdk::__private::wit_bindgen::rt",
                with: { #(#with),* },
            });
        }

        const _: () = {
            impl #c::Driver for #ty {
                const NAME: &'static str = #name;
                #features
                #(#required)*
            }

            #(#group_impls)*

            ::envhost_sdk::__export_computer_driver!(#ty, #bindings #(, #group_keys)*);
        };
    }
}
