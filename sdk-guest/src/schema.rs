//! JSON Schemas of tool arguments and results, derived with schemars.

use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::output::OutputShape;

fn root_schema<T: JsonSchema>() -> Map<String, Value> {
    let schema: Value = SchemaGenerator::default()
        .into_root_schema_for::<T>()
        .into();
    let mut map = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.remove("$schema");
    map
}

/// The schema of an arguments or request struct: its JSON Schema object without `$schema`,
/// always with `properties`; a tool's titled `title` (the reference SDK titles a tool's arguments
/// `<function>Arguments`) in [`pydantic_form`], an extension's request untitled
/// (protocol.md#extension-routes; the host gives the card the reference's simplified form).
pub fn input_schema<T: JsonSchema>(title: Option<&str>) -> Value {
    let mut map = root_schema::<T>();
    match title {
        Some(title) => map.insert("title".into(), Value::String(title.into())),
        None => map.remove("title"),
    };
    map.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    match title {
        Some(_) => pydantic_form(Value::Object(map)),
        None => Value::Object(map),
    }
}

/// pydantic's default title of a field: `max_count` → `Max Count`.
fn title_of(name: &str) -> String {
    name.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first
                    .to_uppercase()
                    .chain(chars.flat_map(char::to_lowercase))
                    .collect()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `schema` only refers to a definition (itself or under `Optional`): pydantic gives
/// such a field no title.
fn refers(schema: &Map<String, Value>) -> bool {
    schema.contains_key("$ref")
        || schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|any| {
                any.len() == 2
                    && any.iter().any(|s| s.get("$ref").is_some())
                    && any.iter().any(|s| s.get("type") == Some(&json!("null")))
            })
}

/// `schema` as pydantic writes the same type (protocol.md#tool-listing): `["T", "null"]` types as
/// `anyOf` with `null`, every property titled after its name (but a reference to a definition),
/// every definition titled after its name, no integer or number `format` (nor an unsigned
/// type's `minimum: 0`), and keys sorted as pydantic sorts them (all but a `properties` object's
/// and a `default`'s).
pub fn pydantic_form(schema: Value) -> Value {
    sort_keys(titled(schema))
}

fn titled(schema: Value) -> Value {
    match schema {
        Value::Object(mut map) => {
            if let Some(Value::Array(kinds)) = map.get("type") {
                let not_null: Vec<Value> = kinds
                    .iter()
                    .filter(|k| k.as_str() != Some("null"))
                    .cloned()
                    .collect();
                if let [kind] = not_null.as_slice()
                    && not_null.len() < kinds.len()
                {
                    let mut inner = Map::new();
                    inner.insert("type".into(), kind.clone());
                    let outer_keys = ["title", "description", "default"];
                    for key in map.keys().cloned().collect::<Vec<_>>() {
                        if key != "type" && !outer_keys.contains(&key.as_str()) {
                            inner.insert(key.clone(), map.remove(&key).unwrap_or(Value::Null));
                        }
                    }
                    map.remove("type");
                    map.insert(
                        "anyOf".into(),
                        json!([titled(Value::Object(inner)), {"type": "null"}]),
                    );
                }
            }
            if matches!(
                map.get("type").and_then(Value::as_str),
                Some("integer" | "number")
            ) {
                // schemars marks Rust's integer widths (`int64`, and `minimum: 0` for an unsigned
                // one); pydantic's `int` says neither.
                let unsigned = map
                    .remove("format")
                    .is_some_and(|f| f.as_str().is_some_and(|f| f.starts_with("uint")));
                if unsigned && map.get("minimum") == Some(&json!(0)) {
                    map.remove("minimum");
                }
            }
            for (key, value) in &mut map {
                match key.as_str() {
                    "properties" => {
                        if let Value::Object(props) = value {
                            for (name, prop) in props.iter_mut() {
                                let mut done = titled(prop.take());
                                if let Value::Object(p) = &mut done
                                    && !p.contains_key("title")
                                    && !refers(p)
                                {
                                    p.insert("title".into(), Value::String(title_of(name)));
                                }
                                *prop = done;
                            }
                        }
                    }
                    "$defs" => {
                        if let Value::Object(defs) = value {
                            for (name, def) in defs.iter_mut() {
                                let mut done = titled(def.take());
                                if let Value::Object(d) = &mut done {
                                    d.entry("title")
                                        .or_insert_with(|| Value::String(name.clone()));
                                }
                                *def = done;
                            }
                        }
                    }
                    "default" | "enum" | "const" | "examples" => {}
                    _ => *value = titled(value.take()),
                }
            }
            Value::Object(map)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(titled).collect()),
        other => other,
    }
}

/// Sorts object keys recursively, but a `properties` object's and a `default`'s (pydantic's
/// `GenerateJsonSchema.sort`).
fn sort_keys(value: Value) -> Value {
    sort_under(value, None)
}

fn sort_under(value: Value, parent: Option<&str>) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            if !matches!(parent, Some("properties" | "default")) {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            entries
                .into_iter()
                .map(|(k, v)| {
                    let v = if k == "default" {
                        v
                    } else {
                        sort_under(v, Some(&k))
                    };
                    (k, v)
                })
                .collect::<Map<String, Value>>()
                .into()
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| sort_under(v, parent)).collect())
        }
        other => other,
    }
}

/// How a tool's return value of type `T` becomes structured content, and the output schema that
/// goes with it (protocol.md#tool-listing): objects as they are, anything else wrapped as
/// `{"result": value}` under a schema titled `title`, and an untyped JSON value not at all.
pub fn output_shape<T: JsonSchema>(title: &str) -> (OutputShape, Option<Value>) {
    let (shape, schema) = output_shape_of(root_schema::<T>(), title);
    (shape, schema.map(pydantic_form))
}

fn output_shape_of(mut map: Map<String, Value>, title: &str) -> (OutputShape, Option<Value>) {
    match map.get("type") {
        Some(Value::String(t)) if t == "object" => (OutputShape::Object, Some(Value::Object(map))),
        None if !map.contains_key("anyOf") && !map.contains_key("$ref") => {
            (OutputShape::Unstructured, None)
        }
        _ => {
            let defs = map.remove("$defs");
            map.remove("title");
            let mut wrapped = json!({
                "type": "object",
                "properties": {"result": Value::Object(map)},
                "required": ["result"],
                "title": title,
            });
            if let Some(defs) = defs {
                wrapped["$defs"] = defs;
            }
            (OutputShape::Wrapped, Some(wrapped))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Channel {
        name: String,
        topic: String,
    }

    #[test]
    fn strings_are_wrapped_under_result() {
        let (shape, schema) = output_shape::<String>("fOutput");
        assert_eq!(shape, OutputShape::Wrapped);
        assert_eq!(
            schema.unwrap().to_string(),
            r#"{"properties":{"result":{"title":"Result","type":"string"}},"required":["result"],"title":"fOutput","type":"object"}"#
        );
    }

    #[test]
    fn lists_of_structs_keep_their_definitions_at_the_root() {
        let (shape, schema) = output_shape::<Vec<Channel>>("fOutput");
        assert_eq!(shape, OutputShape::Wrapped);
        let schema = schema.unwrap();
        assert_eq!(
            schema["properties"]["result"]["items"]["$ref"],
            "#/$defs/Channel"
        );
        assert!(schema["$defs"]["Channel"]["properties"]["topic"].is_object());
    }

    #[test]
    fn structs_are_not_wrapped() {
        let (shape, schema) = output_shape::<Channel>("fOutput");
        assert_eq!(shape, OutputShape::Object);
        assert_eq!(schema.unwrap()["required"], json!(["name", "topic"]));
    }

    #[test]
    fn untyped_json_has_no_output_schema() {
        assert_eq!(
            output_shape::<Value>("fOutput"),
            (OutputShape::Unstructured, None)
        );
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// The role, if any.
        to_role: Option<String>,
        count: i64,
        channel: Option<Channel>,
    }

    #[test]
    fn tool_schemas_are_pydantics() {
        assert_eq!(
            input_schema::<Args>(Some("sendArguments")).to_string(),
            concat!(
                r#"{"$defs":{"Channel":{"properties":{"name":{"title":"Name","type":"string"},"#,
                r#""topic":{"title":"Topic","type":"string"}},"required":["name","topic"],"#,
                r#""title":"Channel","type":"object"}},"properties":{"to_role":{"anyOf":[{"type":"string"},"#,
                r#"{"type":"null"}],"description":"The role, if any.","title":"To Role"},"#,
                r##""count":{"title":"Count","type":"integer"},"channel":{"anyOf":[{"$ref":"#/$defs/Channel"},"##,
                r#"{"type":"null"}]}},"required":["count"],"title":"sendArguments","type":"object"}"#
            )
        );
    }
}
