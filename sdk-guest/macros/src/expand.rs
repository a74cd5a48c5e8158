//! The code `#[environment]` generates.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::{Annotations, Callable, DataHandler, Env, Extension, Param, Tool};

fn option_lit<T: quote::ToTokens>(value: Option<&T>) -> TokenStream {
    match value {
        Some(v) => quote!(::std::option::Option::Some(#v.into())),
        None => quote!(::std::option::Option::None),
    }
}

fn option_str(value: Option<&String>) -> TokenStream {
    match value {
        Some(v) => quote!(::std::option::Option::Some(#v)),
        None => quote!(::std::option::Option::None),
    }
}

fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// The struct that deserializes a callable's arguments and gives their schema, and a function
/// for each `#[arg(default = ...)]` giving the value of the argument left out (serde and
/// schemars both call it: the argument is optional, and its schema has that `default`).
fn args_struct(name: &syn::Ident, callable: &Callable) -> TokenStream {
    let mut defaults = Vec::new();
    let fields: Vec<TokenStream> = callable
        .params
        .iter()
        .filter_map(|p| match p {
            Param::Context => None,
            Param::Arg {
                ident,
                ty,
                description,
                default,
            } => {
                let description = description
                    .as_ref()
                    .map(|d| quote!(#[schemars(description = #d)]));
                let default = match default {
                    Some(value) => {
                        let function = format_ident!("{}_{}_default", name, ident);
                        let path = function.to_string();
                        defaults.push(quote! {
                            #[allow(non_snake_case)]
                            fn #function() -> #ty { #value }
                        });
                        Some(quote!(#[serde(default = #path)]))
                    }
                    None => is_option(ty).then(|| quote!(#[serde(default)])),
                };
                Some(quote!(#description #default #ident: #ty))
            }
        })
        .collect();
    quote! {
        #(#defaults)*

        #[derive(__p::serde::Deserialize, __p::schemars::JsonSchema)]
        #[serde(crate = "::envhost_sdk::__private::serde")]
        #[schemars(crate = "::envhost_sdk::__private::schemars")]
        #[allow(non_camel_case_types)]
        struct #name { #(#fields,)* }
    }
}

/// Parses the arguments, calls the method and binds its value to `__value` (`?` on errors).
fn call(args: &syn::Ident, callable: &Callable, json: TokenStream) -> TokenStream {
    let method = &callable.method;
    let has_args = callable
        .params
        .iter()
        .any(|p| matches!(p, Param::Arg { .. }));
    let parse = if has_args {
        quote!(let __args: #args = __p::parse_request(#json)?;)
    } else {
        quote!(let _: #args = __p::parse_request(#json)?;)
    };
    let values = callable.params.iter().map(|p| match p {
        Param::Context => quote!(::envhost_sdk::ToolContext::current()),
        Param::Arg { ident, .. } => quote!(__args.#ident),
    });
    let question = callable.output.fallible.then(|| quote!(?));
    quote! {
        #parse
        let __value = self.#method(#(#values),*)#question;
    }
}

fn annotations(a: &Annotations) -> TokenStream {
    let title = option_lit(a.title.as_ref());
    let hint = |v: &Option<syn::LitBool>| match v {
        Some(b) => quote!(::std::option::Option::Some(#b)),
        None => quote!(::std::option::Option::None),
    };
    let (r, d, i, o) = (
        hint(&a.read_only_hint),
        hint(&a.destructive_hint),
        hint(&a.idempotent_hint),
        hint(&a.open_world_hint),
    );
    quote! {
        ::std::option::Option::Some(::envhost_sdk::ToolAnnotations {
            title: #title,
            read_only_hint: #r,
            destructive_hint: #d,
            idempotent_hint: #i,
            open_world_hint: #o,
        })
    }
}

struct Generated {
    items: Vec<TokenStream>,
    infos: Vec<TokenStream>,
    arms: Vec<TokenStream>,
}

fn tools(tools: &[Tool]) -> Generated {
    let mut out = Generated {
        items: Vec::new(),
        infos: Vec::new(),
        arms: Vec::new(),
    };
    for tool in tools {
        let method = &tool.callable.method;
        let args = format_ident!("__ToolArgs_{}", method);
        let ty = &tool.callable.output.ty;
        let args_title = format!("{method}Arguments");
        let output_title = format!("{method}Output");
        let name = &tool.name;
        let description = option_str(tool.description.as_ref());
        let meta = option_lit(tool.meta.as_ref());
        let hidden = tool.hidden_by_default;
        let annotations = tool
            .annotations
            .as_ref()
            .map_or_else(|| quote!(::std::option::Option::None), annotations);
        let output_schema = if tool.structured_output {
            quote!(__p::output_shape::<#ty>(#output_title).1)
        } else {
            quote!(::std::option::Option::None)
        };
        out.items.push(args_struct(&args, &tool.callable));
        out.infos.push(quote! {
            __p::tool_info(__p::ToolSpec {
                name: #name,
                description: #description,
                input_schema: __p::input_schema::<#args>(::std::option::Option::Some(#args_title)),
                output_schema: #output_schema,
                annotations: #annotations,
                meta: #meta,
                hidden_by_default: #hidden,
            })
        });
        let call = call(&args, &tool.callable, quote!(arguments));
        let answer = if tool.raw {
            quote!(::std::result::Result::Ok(__value))
        } else if tool.structured_output {
            quote! {
                static SHAPE: ::std::sync::OnceLock<__p::OutputShape> = ::std::sync::OnceLock::new();
                let shape = *SHAPE.get_or_init(|| __p::output_shape::<#ty>(#output_title).0);
                __p::tool_result(&__value, shape)
            }
        } else {
            quote!(__p::tool_result(&__value, __p::OutputShape::Unstructured))
        };
        out.arms.push(quote!(#name => { #call #answer }));
    }
    out
}

fn extensions(extensions: &[Extension]) -> Generated {
    let mut out = Generated {
        items: Vec::new(),
        infos: Vec::new(),
        arms: Vec::new(),
    };
    for ext in extensions {
        let method = &ext.callable.method;
        let handler = method.to_string();
        let args = format_ident!("__ExtensionArgs_{}", method);
        let uri = &ext.uri;
        let description = option_lit(ext.description.as_ref());
        let op_value = ext.op.as_ref().map_or(handler.clone(), syn::LitStr::value);
        let op = option_lit(ext.op.as_ref());
        let http_method = &ext.http_method;
        let path = option_lit(ext.path.as_ref());
        out.items.push(args_struct(&args, &ext.callable));
        out.infos.push(quote! {
            __p::ExtensionSpec {
                uri: #uri,
                description: #description,
                op: #op,
                handler: #handler,
                http_method: #http_method,
                request_schema: __p::input_schema::<#args>(::std::option::Option::None),
                path: #path,
            }
        });
        let call = call(&args, &ext.callable, quote!(request));
        out.arms.push(quote! {
            (#uri, #op_value) => { #call __p::extension_answer(&__value) }
        });
    }
    out
}

fn data_handler(
    handler: Option<&DataHandler>,
    signature: TokenStream,
    call_args: TokenStream,
) -> TokenStream {
    let Some(h) = handler else {
        return TokenStream::new();
    };
    let method = &h.method;
    let body = if h.fallible {
        quote!(self.#method(#call_args))
    } else {
        quote!(::std::result::Result::Ok(self.#method(#call_args)))
    };
    quote!(#signature { #body })
}

pub fn expand(env: Env) -> TokenStream {
    let item = &env.item;
    let self_ty = &env.item.self_ty;
    let name = &env.name;
    let tool_access = env.tool_access;
    let t = tools(&env.tools);
    let x = extensions(&env.extensions);
    let (tool_items, tool_infos, tool_arms) = (&t.items, &t.infos, &t.arms);
    let (ext_items, ext_infos, ext_arms) = (&x.items, &x.infos, &x.arms);
    let error = quote!(::envhost_sdk::EnvError);
    let operations = [
        (env.reset.is_some(), quote!(Reset)),
        (env.add_data.is_some(), quote!(Add)),
        (env.get_data.is_some(), quote!(Get)),
    ]
    .into_iter()
    .filter(|(served, _)| *served)
    .map(|(_, op)| quote!(::envhost_sdk::Operation::#op));
    let reset = data_handler(
        env.reset.as_ref(),
        quote!(fn reset(&mut self) -> ::std::result::Result<(), #error>),
        quote!(),
    );
    let add_data = data_handler(
        env.add_data.as_ref(),
        quote!(fn add_data(&mut self, parts: ::std::vec::Vec<::envhost_sdk::Part>) -> ::std::result::Result<(), #error>),
        quote!(parts),
    );
    let takes_grant = env.get_data.as_ref().is_some_and(|h| h.takes_grant);
    let get_data = data_handler(
        env.get_data.as_ref(),
        quote!(fn get_data(&mut self) -> ::std::result::Result<::std::vec::Vec<::envhost_sdk::Part>, #error>),
        if takes_grant {
            quote!(::envhost_sdk::upload::grant())
        } else {
            quote!()
        },
    );
    let declarations = if takes_grant {
        quote!(::envhost_sdk::upload::declaration())
    } else {
        quote!()
    };
    let call_mcp = env.mcp.as_ref().map_or_else(TokenStream::new, |h| {
        let method = &h.method;
        let call = if h.fallible {
            quote!(self.#method(method, params))
        } else {
            quote!(::std::result::Result::Ok(self.#method(method, params)))
        };
        quote! {
            fn call_mcp(&mut self, method: &str, params: &str)
                -> ::std::result::Result<::std::string::String, #error> {
                __p::mcp_request(params, |params| #call)
            }
        }
    });
    let served = env
        .served
        .as_ref()
        .map_or_else(TokenStream::new, |hook| quote!(Self::#hook(&mut info);));
    let on_tool_call = env
        .on_tool_call
        .as_ref()
        .map_or_else(TokenStream::new, |hook| {
            quote! {
                if let ::std::option::Option::Some(answer) =
                    self.#hook(&::envhost_sdk::ToolContext::current())
                {
                    return ::std::result::Result::Ok(answer);
                }
            }
        });
    let call_extension = if ext_arms.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            fn call_extension(&mut self, uri: &str, op: &str, request: &str)
                -> ::std::result::Result<::std::string::String, #error> {
                match (uri, op) {
                    #(#ext_arms)*
                    _ => ::std::result::Result::Err(#error::new(
                        "not_found", ::std::format!("no extension method {uri} {op}")).status(404)),
                }
            }
        }
    };
    quote! {
        #item

        const _: () = {
            use ::envhost_sdk::__private as __p;

            #(#tool_items)*
            #(#ext_items)*

            impl ::envhost_sdk::Environment for #self_ty {
                fn describe() -> ::envhost_sdk::EnvInfo {
                    #[allow(unused_mut)]
                    let mut info = ::envhost_sdk::EnvInfo {
                        name: #name.into(),
                        tools: ::std::vec![#(#tool_infos),*],
                        extensions: {
                            let mut extensions = __p::extensions(::std::vec![#(#ext_infos),*]);
                            extensions.extend([#declarations]);
                            extensions
                        },
                        operations: ::std::vec![#(#operations),*],
                        tool_access: #tool_access,
                    };
                    #served
                    info
                }

                #reset
                #add_data
                #get_data

                fn call_tool(&mut self, name: &str, arguments: &str)
                    -> ::std::result::Result<::envhost_sdk::ToolResult, #error> {
                    #on_tool_call
                    match name {
                        #(#tool_arms)*
                        _ => ::std::result::Result::Err(#error::new(
                            "unknown_tool", ::std::format!("Unknown tool: {name}"))),
                    }
                }

                #call_extension
                #call_mcp
            }

            ::envhost_sdk::__export!(#self_ty);
        };
    }
}
