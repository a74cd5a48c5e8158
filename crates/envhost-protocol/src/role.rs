//! Caller identity (protocol.md#callers): roles and sessions from the `AgentEnv-Role` header and
//! MCP `_meta`.

use serde_json::{Map, Value};

/// The HTTP header a direct caller names its role in.
pub const ROLE_HEADER: &str = "agentenv-role";
/// The MCP request `_meta` key a gateway stamps the caller's role under.
pub const ROLE_META_KEY: &str = "agentenv.io/role";
/// The MCP request `_meta` key a gateway stamps the caller's session under.
pub const SESSION_META_KEY: &str = "agentenv.io/session";
/// The role of a caller that names none.
pub const DEFAULT_ROLE: &str = "default";

/// Who is calling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Caller {
    /// The normalised role (`None` for none, `""` or `"default"`).
    pub role: Option<String>,
    /// The session that tells callers of one role apart.
    pub session: Option<String>,
}

impl Caller {
    /// The key tool-access rules are looked up by: the role, or `"default"` (protocol.md#callers).
    pub fn role_key(&self) -> &str {
        self.role.as_deref().unwrap_or(DEFAULT_ROLE)
    }
}

/// Normalises a role value (protocol.md#callers): not a string → none; whitespace trimmed; `""` or
/// `"default"` → none.
pub fn normalize_role(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).and_then(normalize_role_str)
}

fn normalize_role_str(role: &str) -> Option<String> {
    let role = role.trim();
    (!role.is_empty() && role != DEFAULT_ROLE).then(|| role.to_owned())
}

fn meta_session(meta: Option<&Map<String, Value>>) -> Option<String> {
    meta.and_then(|m| m.get(SESSION_META_KEY))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The caller of an MCP request (protocol.md#callers): a request whose `_meta` has
/// `agentenv.io/role` (any value) was forwarded by a gateway, and headers are not consulted;
/// otherwise the role comes from the `AgentEnv-Role` header and the session falls back to the MCP
/// session id.
pub fn mcp_caller(
    meta: Option<&Map<String, Value>>,
    role_header: Option<&str>,
    mcp_session: Option<&str>,
) -> Caller {
    if let Some(role) = meta.and_then(|m| m.get(ROLE_META_KEY)) {
        return Caller {
            role: normalize_role(Some(role)),
            session: meta_session(meta),
        };
    }
    Caller {
        role: role_header.and_then(normalize_role_str),
        session: meta_session(meta).or_else(|| mcp_session.map(str::to_owned)),
    }
}

/// The caller of a REST (extension) request: headers only (protocol.md#callers).
pub fn rest_caller(role_header: Option<&str>, mcp_session: Option<&str>) -> Caller {
    Caller {
        role: role_header.and_then(normalize_role_str),
        session: mcp_session.map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn direct_callers_use_the_header_and_the_mcp_session() {
        let c = mcp_caller(None, Some(" tester "), Some("S"));
        assert_eq!(
            (c.role.as_deref(), c.session.as_deref()),
            (Some("tester"), Some("S"))
        );
        assert_eq!(mcp_caller(None, Some("default"), None).role, None);
    }

    #[test]
    fn a_meta_role_means_forwarded_and_wins_over_headers() {
        let m = meta(json!({"agentenv.io/role": "default", "agentenv.io/session": "S1"}));
        let c = mcp_caller(Some(&m), Some("tester"), Some("mcp"));
        assert_eq!((c.role, c.session.as_deref()), (None, Some("S1")));
        let m = meta(json!({"agentenv.io/role": "grader"}));
        let c = mcp_caller(Some(&m), None, Some("mcp"));
        assert_eq!((c.role.as_deref(), c.session), (Some("grader"), None));
        let m = meta(json!({"agentenv.io/role": 5}));
        assert_eq!(mcp_caller(Some(&m), Some("tester"), None).role, None);
    }

    #[test]
    fn role_keys_default() {
        assert_eq!(Caller::default().role_key(), "default");
        assert_eq!(rest_caller(Some("a"), None).role_key(), "a");
    }
}
