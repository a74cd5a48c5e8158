//! Per-role tool access (protocol.md#tool-access): the rule store, its update rules, the visibility
//! decision, and the `/tools/disable` and `/tools/enable` bodies.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::error::CodedError;

/// The role and tool key that stands for every role or every tool.
pub const WILDCARD: &str = "*";
/// The card URI of `POST /tools/disable`.
pub const DISABLE_TOOL_EXTENSION_URI: &str = "urn:agentenv:disable-tool/v1";
/// The card URI of `POST /tools/enable`.
pub const ENABLE_TOOL_EXTENSION_URI: &str = "urn:agentenv:enable-tool/v1";

/// Which tools a rule change names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tools {
    /// `"*"`
    All,
    /// A list of names, applied in order.
    Named(Vec<String>),
}

/// A rule change: the body of `/tools/disable` or `/tools/enable`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The role the change is for (`*` for every role).
    pub role: String,
    /// The tools it names.
    pub tools: Tools,
}

impl Change {
    /// Reads a request body (protocol.md#rule-changes).
    ///
    /// # Errors
    /// `invalid_params` with the reference's messages: `request body must be JSON`,
    /// `missing or invalid 'role' field`, `'tools' must be a list of strings or the string '*'`.
    pub fn parse(body: &[u8]) -> Result<Self, CodedError> {
        let value: Value = if body.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            serde_json::from_slice(body)
                .map_err(|_| CodedError::invalid_params("request body must be JSON"))?
        };
        let role = match value.get("role") {
            Some(Value::String(role)) if !role.is_empty() => role.clone(),
            _ => {
                return Err(CodedError::invalid_params(
                    "missing or invalid 'role' field",
                ));
            }
        };
        let tools = match value.get("tools") {
            Some(Value::String(s)) if s == WILDCARD => Tools::All,
            Some(Value::Array(items)) => Tools::Named(
                items
                    .iter()
                    .map(|t| t.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(tools_error)?,
            ),
            _ => return Err(tools_error()),
        };
        Ok(Self { role, tools })
    }
}

fn tools_error() -> CodedError {
    CodedError::invalid_params("'tools' must be a list of strings or the string '*'")
}

/// The rule store: role key → tool key → disabled. Keys may be `*`. Serialised as that map
/// (snapshots carry it).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Rules {
    rules: BTreeMap<String, BTreeMap<String, bool>>,
}

impl Rules {
    /// Applies `change` (disabling or enabling) entry by entry (protocol.md#rule-store) and answers
    /// the rules now stored under its role: `{"role", "disabled": [...], "allowed": [...]}`, each
    /// sorted.
    pub fn apply(&mut self, change: &Change, disabled: bool) -> Value {
        let names: Vec<&str> = match &change.tools {
            Tools::All => vec![WILDCARD],
            Tools::Named(names) => names.iter().map(String::as_str).collect(),
        };
        for tool in names {
            self.apply_one(&change.role, tool, disabled);
        }
        let stored = self.rules.get(&change.role);
        let keys = |value: bool| -> Vec<&str> {
            stored
                .into_iter()
                .flatten()
                .filter(|(_, d)| **d == value)
                .map(|(k, _)| k.as_str())
                .collect()
        };
        json!({"role": change.role, "disabled": keys(true), "allowed": keys(false)})
    }

    fn apply_one(&mut self, role: &str, tool: &str, disabled: bool) {
        match (role == WILDCARD, tool == WILDCARD) {
            (true, true) => {
                self.rules.clear();
                self.rules.insert(
                    WILDCARD.into(),
                    BTreeMap::from([(WILDCARD.into(), disabled)]),
                );
            }
            (true, false) => {
                self.rules.entry(WILDCARD.into()).or_default();
                for map in self.rules.values_mut() {
                    map.insert(tool.into(), disabled);
                }
            }
            (false, true) => {
                self.rules
                    .insert(role.into(), BTreeMap::from([(WILDCARD.into(), disabled)]));
            }
            (false, false) => {
                self.rules
                    .entry(role.into())
                    .or_default()
                    .insert(tool.into(), disabled);
            }
        }
    }

    /// Whether `tool` is disabled for callers with role key `role` (protocol.md#visibility): the
    /// role's rules, then the `*` rules, a rule naming the tool first and a `*` rule only for tools
    /// not hidden by default; with no rule, hidden tools are disabled and the others not.
    pub fn is_disabled(&self, role: &str, tool: &str, hidden_by_default: bool) -> bool {
        for key in [role, WILDCARD] {
            let Some(map) = self.rules.get(key) else {
                continue;
            };
            if let Some(d) = map.get(tool) {
                return *d;
            }
            if !hidden_by_default && let Some(d) = map.get(WILDCARD) {
                return *d;
            }
        }
        hidden_by_default
    }
}

/// The card entries of the two tool-access extensions (protocol.md#tool-access, exact).
pub fn card_entries() -> [Value; 2] {
    let request = json!({
        "type": "object",
        "properties": {
            "role": {"type": "string"},
            "tools": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"const": "*"}]},
        },
        "required": ["role", "tools"],
    });
    [
        json!({"uri": DISABLE_TOOL_EXTENSION_URI, "description": "Disable tools for a role.",
               "params": {"endpoint": "/tools/disable", "methods": {"disable": {"method": "POST", "request": request}}},
               "required": false}),
        json!({"uri": ENABLE_TOOL_EXTENSION_URI, "description": "Enable tools for a role.",
               "params": {"endpoint": "/tools/enable", "methods": {"enable": {"method": "POST", "request": request}}},
               "required": false}),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(body: Value) -> Change {
        Change::parse(body.to_string().as_bytes()).unwrap()
    }

    fn visible(rules: &Rules, role: &str) -> String {
        [("a", false), ("b", false), ("h", true)]
            .into_iter()
            .filter(|(t, hidden)| !rules.is_disabled(role, t, *hidden))
            .map(|(t, _)| t)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The worked sequence of protocol.md#worked-example, step by step.
    #[test]
    fn the_worked_sequence_of_the_spec() {
        let steps: [(bool, Value, Value, [&str; 3]); 9] = [
            (
                true,
                json!({"role":"agent","tools":["b"]}),
                json!({"role":"agent","disabled":["b"],"allowed":[]}),
                ["a,b", "a", "a,b"],
            ),
            (
                false,
                json!({"role":"grader","tools":["h"]}),
                json!({"role":"grader","disabled":[],"allowed":["h"]}),
                ["a,b", "a", "a,b,h"],
            ),
            (
                true,
                json!({"role":"*","tools":"*"}),
                json!({"role":"*","disabled":["*"],"allowed":[]}),
                ["", "", ""],
            ),
            (
                false,
                json!({"role":"agent","tools":"*"}),
                json!({"role":"agent","disabled":[],"allowed":["*"]}),
                ["", "a,b", ""],
            ),
            (
                false,
                json!({"role":"*","tools":["h"]}),
                json!({"role":"*","disabled":["*"],"allowed":["h"]}),
                ["h", "a,b,h", "h"],
            ),
            (
                true,
                json!({"role":"agent","tools":["h","a"]}),
                json!({"role":"agent","disabled":["a","h"],"allowed":["*"]}),
                ["h", "b", "h"],
            ),
            (
                false,
                json!({"role":"*","tools":"*"}),
                json!({"role":"*","disabled":[],"allowed":["*"]}),
                ["a,b", "a,b", "a,b"],
            ),
            (
                true,
                json!({"role":"default","tools":["a"]}),
                json!({"role":"default","disabled":["a"],"allowed":[]}),
                ["b", "a,b", "a,b"],
            ),
            (
                true,
                json!({"role":"*","tools":["b"]}),
                json!({"role":"*","disabled":["b"],"allowed":["*"]}),
                ["", "a", "a"],
            ),
        ];
        let mut rules = Rules::default();
        assert_eq!(visible(&rules, "default"), "a,b");
        for (i, (disable, body, answer, seen)) in steps.into_iter().enumerate() {
            assert_eq!(
                rules.apply(&change(body), disable),
                answer,
                "step {}",
                i + 1
            );
            for (role, expected) in ["default", "agent", "grader"].into_iter().zip(seen) {
                assert_eq!(
                    visible(&rules, role),
                    expected,
                    "step {} role {role}",
                    i + 1
                );
            }
        }
    }

    #[test]
    fn bad_bodies_get_the_reference_messages() {
        let msg = |body: &str| Change::parse(body.as_bytes()).unwrap_err().message;
        assert_eq!(msg("{"), "request body must be JSON");
        assert_eq!(msg(""), "missing or invalid 'role' field");
        assert_eq!(msg("[1]"), "missing or invalid 'role' field");
        assert_eq!(msg(r#"{"role": ""}"#), "missing or invalid 'role' field");
        assert_eq!(
            msg(r#"{"role": "a", "tools": "x"}"#),
            "'tools' must be a list of strings or the string '*'"
        );
        assert_eq!(
            msg(r#"{"role": "a", "tools": [1]}"#),
            "'tools' must be a list of strings or the string '*'"
        );
    }
}
