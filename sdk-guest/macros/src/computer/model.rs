//! What `#[computer_driver]` reads from the `impl` block, and the checks it makes there: every
//! required operation, whole groups, one method per operation.

use std::collections::BTreeMap;

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Error, FnArg, Ident, ImplItem, ImplItemFn, ItemImpl, LitStr, Result, ReturnType, Type};

use super::ops::{GROUPS, Group, Op, REQUIRED};

/// The attribute's own arguments.
#[derive(Default)]
pub struct DriverArgs {
    pub name: Option<LitStr>,
    pub supports: Option<LitStr>,
}

impl DriverArgs {
    pub fn parse(&mut self, meta: ParseNestedMeta) -> Result<()> {
        if meta.path.is_ident("name") {
            self.name = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("supports") {
            self.supports = Some(meta.value()?.parse()?);
        } else {
            return Err(meta
                .error("expected `name = \"...\"` or `supports = \"<JSON list of platforms>\"`"));
        }
        Ok(())
    }
}

/// A marked method.
pub struct Method {
    pub ident: Ident,
    /// Whether it returns `Result<_, _>` (else its value is wrapped in `Ok`).
    pub returns_result: bool,
    /// Where its signature is, for errors in the code that calls it.
    pub span: Span,
}

/// The whole driver.
pub struct DriverModel {
    pub item: ItemImpl,
    pub self_ty: Type,
    pub name: String,
    pub supports: Option<LitStr>,
    pub methods: BTreeMap<Op, Method>,
}

fn returns_result(ret: &ReturnType) -> bool {
    matches!(ret, ReturnType::Type(_, ty)
        if matches!(&**ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Result")))
}

/// Checks `f`'s receiver and parameter count against `op`.
fn method(op: Op, f: &ImplItemFn) -> Result<Method> {
    let marker = op.marker();
    let expected = op.params();
    let shape = if expected.is_empty() {
        "(&mut self)".to_owned()
    } else {
        format!("(&mut self, {})", expected.join(", "))
    };
    if !matches!(f.sig.inputs.first(), Some(FnArg::Receiver(_))) {
        return Err(Error::new(
            f.sig.span(),
            format!("#[{marker}] marks a method taking `&self` or `&mut self`: {shape}"),
        ));
    }
    let given = f.sig.inputs.len() - 1;
    if given != expected.len() {
        return Err(Error::new(
            f.sig.inputs.span(),
            format!(
                "#[{marker}] takes {shape}; `{}` has {given} parameter(s) after `self`",
                f.sig.ident
            ),
        ));
    }
    if f.sig.asyncness.is_some() || !f.sig.generics.params.is_empty() {
        return Err(Error::new(
            f.sig.span(),
            format!("#[{marker}] marks a plain method: not `async`, no generics"),
        ));
    }
    Ok(Method {
        ident: f.sig.ident.clone(),
        returns_result: op.fallible() && returns_result(&f.sig.output),
        span: f.sig.span(),
    })
}

/// Takes the operation marker off `f`, if it has one.
fn take_marker(f: &mut ImplItemFn) -> Result<Option<Op>> {
    let mut found: Option<(Op, Span)> = None;
    let mut error = None;
    f.attrs.retain(|a| {
        let Some(op) = a
            .path()
            .get_ident()
            .and_then(|i| Op::from_marker(&i.to_string()))
        else {
            return true;
        };
        if !matches!(a.meta, syn::Meta::Path(_)) {
            error.get_or_insert_with(|| {
                Error::new(a.span(), format!("#[{}] takes no arguments", op.marker()))
            });
        } else if let Some((first, _)) = found {
            error.get_or_insert_with(|| {
                Error::new(
                    a.span(),
                    format!(
                        "`{}` is marked both #[{}] and #[{}]; one method performs one operation",
                        f.sig.ident,
                        first.marker(),
                        op.marker()
                    ),
                )
            });
        } else {
            found = Some((op, a.span()));
        }
        false
    });
    match error {
        Some(e) => Err(e),
        None => Ok(found.map(|(op, _)| op)),
    }
}

/// Takes every operation marker off the block's methods: on an error the block is still
/// emitted, so that the error is the only one.
pub fn strip_markers(item: &mut ItemImpl) {
    for impl_item in item.items.iter_mut() {
        if let ImplItem::Fn(f) = impl_item {
            f.attrs.retain(|a| {
                a.path()
                    .get_ident()
                    .and_then(|i| Op::from_marker(&i.to_string()))
                    .is_none()
            });
        }
    }
}

fn markers(ops: &[Op]) -> String {
    ops.iter()
        .map(|op| format!("#[{}]", op.marker()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reference's class checks: every required operation, whole groups. Answers every
/// problem, one clause each.
pub fn problems(methods: &BTreeMap<Op, Method>) -> Vec<String> {
    let mut problems = Vec::new();
    let missing: Vec<Op> = REQUIRED
        .into_iter()
        .filter(|op| !methods.contains_key(op))
        .collect();
    if !missing.is_empty() {
        problems.push(format!(
            "missing required operation(s): {}",
            markers(&missing)
        ));
    }
    for group in GROUPS {
        let lacking: Vec<Op> = group
            .ops
            .iter()
            .copied()
            .filter(|op| !methods.contains_key(op))
            .collect();
        if !lacking.is_empty() && lacking.len() != group.ops.len() {
            problems.push(format!(
                "the {} group needs all of {}; missing {}",
                group.name,
                markers(group.ops),
                markers(&lacking)
            ));
        }
    }
    problems
}

impl DriverModel {
    pub fn from_impl(args: DriverArgs, mut item: ItemImpl) -> Result<Self> {
        let type_name = match &*item.self_ty {
            Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        }
        .ok_or_else(|| Error::new(item.self_ty.span(), "expected a named type"))?;
        if !item.generics.params.is_empty() || item.trait_.is_some() {
            return Err(Error::new(
                item.impl_token.span,
                "#[computer_driver] goes on an inherent `impl` block of a type without generics",
            ));
        }
        let mut methods: BTreeMap<Op, Method> = BTreeMap::new();
        for impl_item in item.items.iter_mut() {
            let ImplItem::Fn(f) = impl_item else { continue };
            let Some(op) = take_marker(f)? else { continue };
            if let Some(first) = methods.get(&op) {
                return Err(Error::new(
                    f.sig.span(),
                    format!(
                        "#[{}] is marked on both `{}` and `{}`",
                        op.marker(),
                        first.ident,
                        f.sig.ident
                    ),
                ));
            }
            methods.insert(op, method(op, f)?);
        }
        let problems = problems(&methods);
        if !problems.is_empty() {
            return Err(Error::new(
                item.self_ty.span(),
                format!("`{type_name}`: {}", problems.join("; ")),
            ));
        }
        Ok(DriverModel {
            self_ty: (*item.self_ty).clone(),
            name: args.name.map_or(type_name, |n| n.value()),
            supports: args.supports,
            methods,
            item,
        })
    }

    /// The groups the driver has.
    pub fn groups(&self) -> Vec<Group> {
        GROUPS
            .into_iter()
            .filter(|g| g.ops.iter().all(|op| self.methods.contains_key(op)))
            .collect()
    }

    /// The world of `wit/computer/computer.wit` that exports exactly the driver's groups.
    pub fn world(&self) -> String {
        let groups = self.groups();
        if groups.len() == GROUPS.len() {
            return "full-driver".to_owned();
        }
        std::iter::once("driver")
            .chain(groups.iter().map(|g| g.name))
            .collect::<Vec<_>>()
            .join("-")
    }
}
