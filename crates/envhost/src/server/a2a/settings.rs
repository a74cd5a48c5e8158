//! agent-config/v1 (docs/agent-env.md#agent-config): the settings a deployment's tasks run
//! with, set by `POST /ext/agent-config` with a subset of [`SUPPORTED`] and read back by `GET`,
//! checked as the framework's pydantic model checks them.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::wire::field_error;
use crate::TurnOptions;

/// The fields agent-config/v1 takes, as the card lists them (sorted).
pub const SUPPORTED: [&str; 7] = [
    "description",
    "max_turns",
    "model",
    "name",
    "role",
    "system_prompt",
    "timeout_seconds",
];

/// The seconds a task may run when agent-config sets none (the framework's default).
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 3600;

/// A deployment's agent-config values; an unset field keeps the agent's default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// The name the card shows.
    pub name: Option<String>,
    /// The description the card shows.
    pub description: Option<String>,
    /// The role the deployment's MCP servers are called as, unless a server was added with
    /// its own `AgentEnv-Role` header.
    pub role: Option<String>,
    /// How long a task may run, in seconds, before it fails with code `timeout`.
    pub timeout_seconds: Option<u64>,
    /// The model's name at the host's model endpoint.
    pub model: Option<String>,
    /// The system message of every model request.
    pub system_prompt: Option<String>,
    /// The most model completions one task may ask for.
    pub max_turns: Option<u32>,
}

/// The JSON Schema of the fields, as the card's `set.request.schema` gives it.
pub fn schema() -> Value {
    let nullable = |kind: &str, title: &str| json!({"anyOf": [{"type": kind}, {"type": "null"}], "title": title});
    json!({
        "additionalProperties": false,
        "properties": {
            "name": nullable("string", "Name"),
            "description": nullable("string", "Description"),
            "role": nullable("string", "Role"),
            "timeout_seconds": {"title": "Timeout Seconds", "type": "integer"},
            "model": nullable("string", "Model"),
            "system_prompt": nullable("string", "System Prompt"),
            "max_turns": nullable("integer", "Max Turns"),
        },
        "title": "AgentConfig",
        "type": "object",
    })
}

/// A string or null.
fn text(key: &str, value: &Value) -> Result<Option<String>, Value> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        _ => Err(field_error(
            "string_type",
            key,
            "Input should be a valid string",
        )),
    }
}

/// An integer, or a string of one (pydantic's lax mode).
fn integer(key: &str, value: &Value) -> Result<u64, Value> {
    let parsed = match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => Some(s.trim().parse::<u64>().map_err(|_| {
            field_error(
                "int_parsing",
                key,
                "Input should be a valid integer, unable to parse string as an integer",
            )
        })?),
        _ => None,
    };
    parsed.ok_or_else(|| field_error("int_type", key, "Input should be a valid integer"))
}

impl Settings {
    /// Sets the fields of `body`, all or none.
    ///
    /// # Errors
    /// pydantic's list of what is wrong (the answer's text), when `body` names a field not in
    /// [`SUPPORTED`] or gives one a value of the wrong type; nothing is changed.
    pub fn apply(&mut self, body: &Map<String, Value>) -> Result<(), Vec<Value>> {
        let mut next = self.clone();
        let mut errors = Vec::new();
        for (key, value) in body {
            let set = match key.as_str() {
                "name" => text(key, value).map(|v| next.name = v),
                "description" => text(key, value).map(|v| next.description = v),
                "role" => text(key, value).map(|v| next.role = v),
                "model" => text(key, value).map(|v| next.model = v),
                "system_prompt" => text(key, value).map(|v| next.system_prompt = v),
                "timeout_seconds" => integer(key, value).map(|v| next.timeout_seconds = Some(v)),
                "max_turns" if value.is_null() => {
                    next.max_turns = None;
                    Ok(())
                }
                "max_turns" => integer(key, value).and_then(|v| {
                    u32::try_from(v)
                        .map(|v| next.max_turns = Some(v))
                        .map_err(|_| {
                            field_error("int_type", key, "Input should be a valid integer")
                        })
                }),
                _ => Err(field_error(
                    "extra_forbidden",
                    key,
                    "Extra inputs are not permitted",
                )),
            };
            if let Err(e) = set {
                errors.push(e);
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        *self = next;
        Ok(())
    }

    /// Whether a name that is set is blank (the framework refuses it: `name must be a
    /// non-empty string`).
    pub fn has_blank_name(body: &Map<String, Value>) -> bool {
        body.get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| n.trim().is_empty())
    }

    /// `{"field": value, ...}`: the fields set, in [`SUPPORTED`] order.
    pub fn to_json(&self) -> Value {
        let mut set = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                set.insert(key.into(), value);
            }
        };
        put("description", self.description.clone().map(Value::from));
        put("max_turns", self.max_turns.map(Value::from));
        put("model", self.model.clone().map(Value::from));
        put("name", self.name.clone().map(Value::from));
        put("role", self.role.clone().map(Value::from));
        put("system_prompt", self.system_prompt.clone().map(Value::from));
        put("timeout_seconds", self.timeout_seconds.map(Value::from));
        Value::Object(set)
    }

    /// What a task's turn changes from the agent's defaults.
    pub fn turn_options(&self) -> TurnOptions {
        TurnOptions {
            model: self.model.clone(),
            system_prompt: self.system_prompt.clone(),
            max_completions: self.max_turns,
        }
    }

    /// How long a task may run: `timeout_seconds`, else [`DEFAULT_TIMEOUT_SECONDS`].
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn a_bad_field_changes_nothing() {
        let mut settings = Settings::default();
        settings
            .apply(&object(
                json!({"system_prompt": "Be brief.", "max_turns": "3"}),
            ))
            .unwrap();
        assert_eq!(settings.max_turns, Some(3));
        let before = settings.clone();
        for bad in [
            json!({"name": "x", "effort": "high"}),
            json!({"name": "x", "timeout_seconds": "abc"}),
            json!({"timeout_seconds": null}),
            json!({"role": 7}),
        ] {
            assert!(settings.apply(&object(bad.clone())).is_err(), "{bad}");
            assert_eq!(settings, before, "{bad}");
        }
        let errors = settings
            .apply(&object(json!({"effort": "high"})))
            .unwrap_err();
        assert_eq!(
            Value::Array(errors).to_string(),
            r#"[{"type":"extra_forbidden","loc":["effort"],"msg":"Extra inputs are not permitted"}]"#
        );
        settings.apply(&object(json!({"max_turns": null}))).unwrap();
        assert_eq!(settings.max_turns, None);
        assert_eq!(settings.to_json(), json!({"system_prompt": "Be brief."}));
    }
}
