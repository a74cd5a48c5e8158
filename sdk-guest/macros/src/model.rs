//! What `#[environment]` reads from the `impl` block.

use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{
    Attribute, Error, Expr, FnArg, Ident, ImplItem, ImplItemFn, ItemImpl, LitBool, LitStr, Pat,
    PathArguments, Result, ReturnType, Type,
};

/// The attribute's own arguments.
#[derive(Default)]
pub struct EnvArgs {
    pub name: Option<LitStr>,
    pub tool_access: bool,
}

impl EnvArgs {
    pub fn parse(&mut self, meta: ParseNestedMeta) -> Result<()> {
        if meta.path.is_ident("name") {
            self.name = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("tool_access") {
            self.tool_access = true;
        } else {
            return Err(meta.error("expected `name = \"...\"` or `tool_access`"));
        }
        Ok(())
    }
}

/// A tool or extension parameter.
pub enum Param {
    /// A `ToolContext`, filled by the host.
    Context,
    /// A caller-supplied argument.
    Arg {
        ident: Ident,
        ty: Box<Type>,
        description: Option<LitStr>,
        /// `#[arg(default = ...)]`: the value of an argument left out, which also makes it
        /// optional and gives its schema a `default`.
        default: Option<Box<Expr>>,
    },
}

/// What a method returns.
pub struct Output {
    /// `T` of `T` or `Result<T, EnvError>`; `()` when nothing is declared.
    pub ty: Type,
    /// Whether the method returns `Result<T, EnvError>`.
    pub fallible: bool,
}

/// A `#[tool]` or `#[extension]` method.
pub struct Callable {
    pub method: Ident,
    pub params: Vec<Param>,
    pub output: Output,
}

/// MCP annotations given in `annotations(...)`.
#[derive(Default)]
pub struct Annotations {
    pub title: Option<LitStr>,
    pub read_only_hint: Option<LitBool>,
    pub destructive_hint: Option<LitBool>,
    pub idempotent_hint: Option<LitBool>,
    pub open_world_hint: Option<LitBool>,
}

/// One `#[tool]`.
pub struct Tool {
    pub callable: Callable,
    pub name: String,
    pub description: Option<String>,
    pub hidden_by_default: bool,
    pub structured_output: bool,
    pub meta: Option<LitStr>,
    pub annotations: Option<Annotations>,
    /// Returns `ToolResult`, answered as is.
    pub raw: bool,
}

/// One `#[extension]` method.
pub struct Extension {
    pub callable: Callable,
    pub uri: LitStr,
    pub op: Option<LitStr>,
    pub http_method: String,
    pub description: Option<LitStr>,
    pub path: Option<LitStr>,
}

/// A data-plane handler.
pub struct DataHandler {
    pub method: Ident,
    pub fallible: bool,
    /// Whether it takes an argument: `#[get_data]`'s `Option<Namespace>`, the caller's grant.
    pub takes_grant: bool,
}

/// The whole environment.
pub struct Env {
    pub item: ItemImpl,
    pub name: String,
    pub tool_access: bool,
    pub tools: Vec<Tool>,
    pub extensions: Vec<Extension>,
    pub reset: Option<DataHandler>,
    pub add_data: Option<DataHandler>,
    pub get_data: Option<DataHandler>,
    /// The `#[mcp]` handler of MCP requests beyond tools.
    pub mcp: Option<DataHandler>,
    /// The `#[on_tool_call]` hook, run before every tool.
    pub on_tool_call: Option<Ident>,
    /// The `#[served]` hook, which edits the description before the host gets it.
    pub served: Option<Ident>,
}

fn last_segment_is(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == name))
}

/// The first generic argument of a path type such as `Result<T, E>`.
fn first_generic(ty: &Type) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let PathArguments::AngleBracketed(args) = &p.path.segments.last()?.arguments else {
        return None;
    };
    args.args.iter().find_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    })
}

fn output(ret: &ReturnType) -> Result<Output> {
    Ok(match ret {
        ReturnType::Default => Output {
            ty: syn::parse_quote!(()),
            fallible: false,
        },
        ReturnType::Type(_, ty) if last_segment_is(ty, "Result") => Output {
            ty: first_generic(ty)
                .ok_or_else(|| Error::new(ty.span(), "expected Result<T, EnvError>"))?,
            fallible: true,
        },
        ReturnType::Type(_, ty) => Output {
            ty: (**ty).clone(),
            fallible: false,
        },
    })
}

/// The doc comment, as the reference SDK reads a docstring: lines joined, common indent gone.
fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines
        .iter()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Takes the parameters of `f` (removing their `#[arg]` attributes).
fn params(f: &mut ImplItemFn) -> Result<Vec<Param>> {
    let mut out = Vec::new();
    let mut receiver = false;
    for input in f.sig.inputs.iter_mut() {
        let pat = match input {
            FnArg::Receiver(_) => {
                receiver = true;
                continue;
            }
            FnArg::Typed(pat) => pat,
        };
        let mut description = None;
        let mut default = None;
        let mut error = None;
        pat.attrs.retain(|a| {
            if !a.path().is_ident("arg") {
                return true;
            }
            let parsed = a.parse_nested_meta(|meta| {
                if meta.path.is_ident("description") {
                    description = Some(meta.value()?.parse()?);
                    Ok(())
                } else if meta.path.is_ident("default") {
                    default = Some(Box::new(meta.value()?.parse()?));
                    Ok(())
                } else {
                    Err(meta.error("expected `description = \"...\"` or `default = <expr>`"))
                }
            });
            if let Err(e) = parsed {
                error = Some(e);
            }
            false
        });
        if let Some(e) = error {
            return Err(e);
        }
        if last_segment_is(&pat.ty, "ToolContext") {
            out.push(Param::Context);
            continue;
        }
        let Pat::Ident(ident) = &*pat.pat else {
            return Err(Error::new(
                pat.pat.span(),
                "a tool parameter must be a plain name",
            ));
        };
        out.push(Param::Arg {
            ident: ident.ident.clone(),
            ty: pat.ty.clone(),
            description,
            default,
        });
    }
    if !receiver {
        return Err(Error::new(
            f.sig.span(),
            "an environment method takes `&self` or `&mut self`",
        ));
    }
    Ok(out)
}

fn callable(f: &mut ImplItemFn) -> Result<Callable> {
    Ok(Callable {
        method: f.sig.ident.clone(),
        params: params(f)?,
        output: output(&f.sig.output)?,
    })
}

/// The name of an attribute argument (`name` of `name = ...`); empty for a path.
fn key(meta: &ParseNestedMeta) -> String {
    meta.path
        .get_ident()
        .map(Ident::to_string)
        .unwrap_or_default()
}

fn parse_annotations(meta: ParseNestedMeta) -> Result<Annotations> {
    let mut a = Annotations::default();
    meta.parse_nested_meta(|m| {
        match key(&m).as_str() {
            "title" => a.title = Some(m.value()?.parse()?),
            "read_only_hint" => a.read_only_hint = Some(m.value()?.parse()?),
            "destructive_hint" => a.destructive_hint = Some(m.value()?.parse()?),
            "idempotent_hint" => a.idempotent_hint = Some(m.value()?.parse()?),
            "open_world_hint" => a.open_world_hint = Some(m.value()?.parse()?),
            _ => return Err(m.error("unknown annotation")),
        }
        Ok(())
    })?;
    Ok(a)
}

fn tool(attr: &Attribute, f: &mut ImplItemFn) -> Result<Tool> {
    let mut name = None;
    let mut description = None;
    let mut hidden_by_default = false;
    let mut structured_output = true;
    let mut meta_json = None;
    let mut annotations = None;
    if !matches!(attr.meta, syn::Meta::Path(_)) {
        attr.parse_nested_meta(|meta| {
            match key(&meta).as_str() {
                "name" => name = Some(meta.value()?.parse::<LitStr>()?.value()),
                "description" => description = Some(meta.value()?.parse::<LitStr>()?.value()),
                "hidden_by_default" => hidden_by_default = true,
                "structured_output" => {
                    structured_output = meta.value()?.parse::<LitBool>()?.value;
                }
                "meta" => meta_json = Some(meta.value()?.parse()?),
                "annotations" => annotations = Some(parse_annotations(meta)?),
                _ => return Err(meta.error("unknown tool argument")),
            }
            Ok(())
        })?;
    }
    let callable = callable(f)?;
    let raw = last_segment_is(&callable.output.ty, "ToolResult");
    Ok(Tool {
        name: name.unwrap_or_else(|| callable.method.to_string()),
        description: description.or_else(|| doc_comment(&f.attrs)),
        hidden_by_default,
        structured_output: structured_output && !raw,
        meta: meta_json,
        annotations,
        raw,
        callable,
    })
}

fn extension(attr: &Attribute, f: &mut ImplItemFn) -> Result<Extension> {
    let mut uri = None;
    let mut op = None;
    let mut http_method = "POST".to_owned();
    let mut description = None;
    let mut path = None;
    attr.parse_nested_meta(|meta| {
        match key(&meta).as_str() {
            "uri" => uri = Some(meta.value()?.parse()?),
            "op" => op = Some(meta.value()?.parse()?),
            "method" => {
                http_method = meta
                    .value()?
                    .parse::<LitStr>()?
                    .value()
                    .to_ascii_uppercase();
            }
            "description" => description = Some(meta.value()?.parse()?),
            "path" => path = Some(meta.value()?.parse()?),
            _ => return Err(meta.error("unknown extension argument")),
        }
        Ok(())
    })?;
    let uri = uri.ok_or_else(|| Error::new(attr.span(), "#[extension] needs `uri = \"...\"`"))?;
    Ok(Extension {
        callable: callable(f)?,
        uri,
        op,
        http_method,
        description,
        path,
    })
}

fn data_handler(f: &ImplItemFn) -> Result<DataHandler> {
    Ok(DataHandler {
        method: f.sig.ident.clone(),
        fallible: output(&f.sig.output)?.fallible,
        takes_grant: f.sig.inputs.len() > 1,
    })
}

const MARKERS: [&str; 8] = [
    "tool",
    "extension",
    "reset",
    "add_data",
    "get_data",
    "mcp",
    "on_tool_call",
    "served",
];

fn set_hook(slot: &mut Option<Ident>, f: &ImplItemFn) -> Result<()> {
    if slot.is_some() {
        return Err(Error::new(f.sig.span(), "only one method per hook"));
    }
    *slot = Some(f.sig.ident.clone());
    Ok(())
}

fn set_once(slot: &mut Option<DataHandler>, f: &ImplItemFn) -> Result<()> {
    if slot.is_some() {
        return Err(Error::new(
            f.sig.span(),
            "only one handler per data-plane operation",
        ));
    }
    *slot = Some(data_handler(f)?);
    Ok(())
}

impl Env {
    pub fn from_impl(args: EnvArgs, mut item: ItemImpl) -> Result<Self> {
        let type_name = match &*item.self_ty {
            Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        }
        .ok_or_else(|| Error::new(item.self_ty.span(), "expected a named type"))?;
        let (mut tools, mut extensions) = (Vec::new(), Vec::new());
        let (mut reset, mut add_data, mut get_data, mut mcp) = (None, None, None, None);
        let (mut on_tool_call, mut served) = (None, None);
        for impl_item in item.items.iter_mut() {
            let ImplItem::Fn(f) = impl_item else { continue };
            let Some(index) = f
                .attrs
                .iter()
                .position(|a| MARKERS.iter().any(|m| a.path().is_ident(m)))
            else {
                continue;
            };
            let attr = f.attrs.remove(index);
            let kind = attr.path().get_ident().map(Ident::to_string);
            match kind.as_deref() {
                Some("tool") => tools.push(tool(&attr, f)?),
                Some("extension") => extensions.push(extension(&attr, f)?),
                Some("reset") => set_once(&mut reset, f)?,
                Some("add_data") => set_once(&mut add_data, f)?,
                Some("mcp") => set_once(&mut mcp, f)?,
                Some("on_tool_call") => set_hook(&mut on_tool_call, f)?,
                Some("served") => set_hook(&mut served, f)?,
                _ => set_once(&mut get_data, f)?,
            }
        }
        // In the order of their methods' names, as the reference SDK finds them (Python's `dir`).
        tools.sort_by_key(|t: &Tool| t.callable.method.to_string());
        extensions.sort_by_key(|e: &Extension| e.callable.method.to_string());
        Ok(Env {
            name: args.name.map_or(type_name, |n| n.value()),
            tool_access: args.tool_access,
            tools,
            extensions,
            reset,
            add_data,
            get_data,
            mcp,
            on_tool_call,
            served,
            item,
        })
    }
}
