//! What an environment says about itself, with names resolved and routes laid out: the source
//! of its card (protocol.md#card), its `tools/list` (protocol.md#tool-listing) and its extension
//! routes (protocol.md#extension-routes).

use http::Method;
use serde_json::{Map, Value, json};

/// JSON object.
pub type Object = Map<String, Value>;

/// The placeholder a tool name may contain for the card's name (protocol.md#tool-listing).
pub const ENVIRONMENT_NAME_TOKEN: &str = "{environment_name}";

/// Paths the host serves itself, which no extension route may take.
const RESERVED_PATHS: [&str; 6] = [
    "/.well-known/agent-env.json",
    "/agentenv",
    "/mcp",
    "/ready",
    "/tools/disable",
    "/tools/enable",
];

/// Why a description cannot be served. Each names the offending item.
#[derive(Debug, thiserror::Error)]
pub enum DescriptionError {
    /// A tool name has `{`/`}` left after resolving `{environment_name}`.
    #[error("tool name {0:?} has an unresolved {{...}} token")]
    UnresolvedToken(String),
    /// Two tools resolve to one name.
    #[error("two tools are named {0:?}")]
    DuplicateTool(String),
    /// Two extension methods share a route and verb, or a route is one the host serves.
    #[error("extension route {method} {path} is taken")]
    RouteTaken {
        /// The HTTP verb.
        method: String,
        /// The route.
        path: String,
    },
    /// A verb is not an HTTP method, a path is not absolute, or a schema is not a JSON object.
    #[error("invalid {what} in {item}: {detail}")]
    Invalid {
        /// What is invalid (`schema`, `verb`, `path`, `meta`, ...).
        what: &'static str,
        /// The tool or extension it belongs to.
        item: String,
        /// What is wrong.
        detail: String,
    },
}

/// MCP tool annotations (protocol.md#tool-listing); unset hints are left out of `tools/list`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Annotations {
    /// `title`
    pub title: Option<String>,
    /// `readOnlyHint`
    pub read_only_hint: Option<bool>,
    /// `destructiveHint`
    pub destructive_hint: Option<bool>,
    /// `idempotentHint`
    pub idempotent_hint: Option<bool>,
    /// `openWorldHint`
    pub open_world_hint: Option<bool>,
}

impl Annotations {
    /// The MCP `annotations` object, unset hints omitted.
    pub fn to_json(&self) -> Object {
        let mut out = Object::new();
        if let Some(t) = &self.title {
            out.insert("title".into(), Value::String(t.clone()));
        }
        let hints = [
            ("readOnlyHint", self.read_only_hint),
            ("destructiveHint", self.destructive_hint),
            ("idempotentHint", self.idempotent_hint),
            ("openWorldHint", self.open_world_hint),
        ];
        for (key, hint) in hints {
            if let Some(h) = hint {
                out.insert(key.into(), Value::Bool(h));
            }
        }
        out
    }
}

/// One tool.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    /// The name as served (`{environment_name}` resolved).
    pub name: String,
    /// The name as the guest declared it; the guest is called with this one.
    pub declared_name: String,
    /// The description; `tools/list` says `""` for none.
    pub description: Option<String>,
    /// JSON Schema of the arguments.
    pub input_schema: Object,
    /// JSON Schema of a successful result's structured content.
    pub output_schema: Option<Object>,
    /// MCP annotations.
    pub annotations: Option<Annotations>,
    /// The tool's `_meta`, as the guest gave it.
    pub meta: Option<Object>,
    /// Hidden until a tool-access rule names it (protocol.md#visibility).
    pub hidden_by_default: bool,
}

/// The `_meta` key marking a hidden-by-default tool (protocol.md#tool-listing).
pub const HIDDEN_BY_DEFAULT_META_KEY: &str = "agentenv.io/hiddenByDefault";

impl Tool {
    /// The `_meta` object `tools/list` shows: the guest's, plus the hidden-by-default marker.
    pub fn listed_meta(&self) -> Option<Object> {
        let mut meta = self.meta.clone().unwrap_or_default();
        if self.hidden_by_default {
            meta.insert(HIDDEN_BY_DEFAULT_META_KEY.into(), Value::Bool(true));
        }
        (!meta.is_empty()).then_some(meta)
    }
}

/// How an extension's methods are routed (protocol.md#extension-routes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One method at `/agentenv/ext/<op>`, with an extension-level `endpoint`.
    Single,
    /// `/agentenv/ext/<slug>/<op>` per method, each with its own `endpoint`.
    PerMethod,
}

/// One extension method, with its route.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtensionMethod {
    /// The method's name under `params.methods`.
    pub op: String,
    /// The HTTP verb.
    pub http_method: Method,
    /// JSON Schema of the request object.
    pub request_schema: Object,
    /// The route: the guest's path, else the default of its layout.
    pub path: String,
}

/// One extension.
#[derive(Clone, Debug, PartialEq)]
pub struct Extension {
    /// The URI.
    pub uri: String,
    /// The description.
    pub description: Option<String>,
    /// Extension-level params (or, without methods, the whole `params`).
    pub params: Option<Object>,
    /// The card's `required`.
    pub required: Option<bool>,
    /// How the methods are routed.
    pub layout: Layout,
    /// The methods; none for a declaration-only extension.
    pub methods: Vec<ExtensionMethod>,
}

impl Extension {
    /// The card entry `{uri, description, params, required}` (protocol.md#card-extensions,
    /// protocol.md#extension-routes), each method's request schema in the reference's simplified
    /// form ([`crate::card::card_schema`]).
    pub fn card_entry(&self) -> Value {
        let params = if self.methods.is_empty() {
            self.params.clone().map(Value::Object)
        } else {
            let mut params = self.params.clone().unwrap_or_default();
            let mut methods = Object::new();
            for m in &self.methods {
                let mut entry = Object::new();
                entry.insert("method".into(), Value::String(m.http_method.to_string()));
                if self.layout == Layout::PerMethod {
                    entry.insert("endpoint".into(), Value::String(m.path.clone()));
                }
                entry.insert(
                    "request".into(),
                    crate::card::card_schema(&m.request_schema),
                );
                methods.insert(m.op.clone(), Value::Object(entry));
            }
            if self.layout == Layout::Single {
                params.insert(
                    "endpoint".into(),
                    Value::String(self.methods[0].path.clone()),
                );
            }
            params.insert("methods".into(), Value::Object(methods));
            Some(Value::Object(params))
        };
        json!({
            "uri": self.uri,
            "description": self.description,
            "params": params,
            "required": self.required,
        })
    }
}

/// A data-plane operation (protocol.md#data-plane).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// `data/reset`
    Reset,
    /// `data/add`
    Add,
    /// `data/get`
    Get,
}

impl Operation {
    /// The JSON-RPC method name.
    pub fn method(self) -> &'static str {
        match self {
            Self::Reset => "data/reset",
            Self::Add => "data/add",
            Self::Get => "data/get",
        }
    }

    /// The operation a JSON-RPC method names.
    pub fn from_method(method: &str) -> Option<Self> {
        [Self::Reset, Self::Add, Self::Get]
            .into_iter()
            .find(|op| op.method() == method)
    }
}

/// An environment's description, ready to serve.
#[derive(Clone, Debug, PartialEq)]
pub struct Description {
    /// The card's name.
    pub name: String,
    /// The tools, in card order, names resolved.
    pub tools: Vec<Tool>,
    /// The extensions, in card order, routes laid out.
    pub extensions: Vec<Extension>,
    /// The data-plane operations served, in the order reset, add, get.
    pub operations: Vec<Operation>,
    /// Whether the host enforces tool access (protocol.md#tool-access).
    pub tool_access: bool,
}

/// The route slug of an extension URI (protocol.md#extension-routes): `urn:` and `agentenv:`
/// dropped, a trailing `/v<digits>` dropped, `:` made `/`. `urn:example:slack-stats/v1` →
/// `example/slack-stats`.
pub fn extension_slug(uri: &str) -> String {
    let rest = uri.strip_prefix("urn:").unwrap_or(uri);
    let rest = rest.strip_prefix("agentenv:").unwrap_or(rest);
    let rest = match rest.rsplit_once("/v") {
        Some((head, version))
            if !version.is_empty() && version.bytes().all(|b| b.is_ascii_digit()) =>
        {
            head
        }
        _ => rest,
    };
    rest.replace(':', "/")
}

impl Description {
    /// Whether `data/get` takes a `write_namespace` grant: the environment declares
    /// `urn:agentenv:data-objects/v1` (protocol.md#exports).
    pub fn exports_through_grants(&self) -> bool {
        self.extensions
            .iter()
            .any(|e| e.uri == crate::card::DATA_OBJECTS_URI)
    }

    /// Resolves `{environment_name}` in tool names to `name`, lays out extension routes, and
    /// checks the result: names unique and fully resolved, routes unique and not the host's own.
    ///
    /// # Errors
    /// [`DescriptionError`] naming the first offending tool or route.
    pub fn resolve(mut self, name: String) -> Result<Self, DescriptionError> {
        let mut seen = std::collections::HashSet::new();
        for tool in &mut self.tools {
            tool.name = tool.declared_name.replace(ENVIRONMENT_NAME_TOKEN, &name);
            if tool.name.contains(['{', '}']) {
                return Err(DescriptionError::UnresolvedToken(
                    tool.declared_name.clone(),
                ));
            }
            if !seen.insert(tool.name.clone()) {
                return Err(DescriptionError::DuplicateTool(tool.name.clone()));
            }
        }
        let mut routes: std::collections::HashSet<(String, Method)> =
            std::collections::HashSet::new();
        for ext in &mut self.extensions {
            let slug = extension_slug(&ext.uri);
            for m in &mut ext.methods {
                if m.path.is_empty() {
                    m.path = match ext.layout {
                        Layout::Single => format!("/agentenv/ext/{}", m.op),
                        Layout::PerMethod => format!("/agentenv/ext/{slug}/{}", m.op),
                    };
                }
                if !m.path.starts_with('/') {
                    return Err(DescriptionError::Invalid {
                        what: "path",
                        item: ext.uri.clone(),
                        detail: format!("{:?} is not an absolute path", m.path),
                    });
                }
                let taken = RESERVED_PATHS.contains(&m.path.as_str())
                    || !routes.insert((m.path.clone(), m.http_method.clone()));
                if taken {
                    return Err(DescriptionError::RouteTaken {
                        method: m.http_method.to_string(),
                        path: m.path.clone(),
                    });
                }
            }
        }
        self.name = name;
        Ok(self)
    }

    /// The tool served as `name`.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_the_reference() {
        assert_eq!(
            extension_slug("urn:agentenv:computer-display/v1"),
            "computer-display"
        );
        assert_eq!(extension_slug("urn:acme:x/v2"), "acme/x");
        assert_eq!(
            extension_slug("urn:example:slack-stats/v1"),
            "example/slack-stats"
        );
        assert_eq!(extension_slug("urn:acme:x/vnext"), "acme/x/vnext");
    }

    fn tool(declared: &str) -> Tool {
        Tool {
            name: String::new(),
            declared_name: declared.into(),
            description: None,
            input_schema: Object::new(),
            output_schema: None,
            annotations: None,
            meta: None,
            hidden_by_default: false,
        }
    }

    fn description(tools: Vec<Tool>) -> Description {
        Description {
            name: "guest".into(),
            tools,
            extensions: Vec::new(),
            operations: Vec::new(),
            tool_access: false,
        }
    }

    #[test]
    fn names_resolve_and_must_be_unique_and_complete() {
        let d = description(vec![tool("{environment_name}_a")])
            .resolve("chat".into())
            .unwrap();
        assert_eq!(d.tools[0].name, "chat_a");
        assert_eq!(d.name, "chat");
        let dup = description(vec![tool("{environment_name}_a"), tool("x_a")]).resolve("x".into());
        assert!(matches!(dup, Err(DescriptionError::DuplicateTool(n)) if n == "x_a"));
        let open = description(vec![tool("{env}_a")]).resolve("x".into());
        assert!(matches!(open, Err(DescriptionError::UnresolvedToken(_))));
    }

    #[test]
    fn routes_are_laid_out_and_may_not_collide() {
        let method = |op: &str, path: &str| ExtensionMethod {
            op: op.into(),
            http_method: Method::POST,
            request_schema: Object::new(),
            path: path.into(),
        };
        let ext = |layout, methods| Extension {
            uri: "urn:example:slack-stats/v1".into(),
            description: None,
            params: None,
            required: None,
            layout,
            methods,
        };
        let mut d = description(Vec::new());
        d.extensions = vec![ext(
            Layout::PerMethod,
            vec![method("get", ""), method("set", "")],
        )];
        let d = d.resolve("x".into()).unwrap();
        assert_eq!(
            d.extensions[0].methods[1].path,
            "/agentenv/ext/example/slack-stats/set"
        );
        let entry = d.extensions[0].card_entry();
        assert_eq!(
            entry["params"]["methods"]["get"]["endpoint"],
            "/agentenv/ext/example/slack-stats/get"
        );

        let mut single = description(Vec::new());
        single.extensions = vec![ext(Layout::Single, vec![method("ping", "")])];
        let single = single.resolve("x".into()).unwrap();
        assert_eq!(
            single.extensions[0].card_entry()["params"]["endpoint"],
            "/agentenv/ext/ping"
        );

        let mut clash = description(Vec::new());
        clash.extensions = vec![ext(Layout::Single, vec![method("a", "/mcp")])];
        assert!(matches!(
            clash.resolve("x".into()),
            Err(DescriptionError::RouteTaken { .. })
        ));
    }
}
