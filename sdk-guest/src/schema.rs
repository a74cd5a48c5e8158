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
/// always with `properties`, titled `title` (the reference SDK titles a tool's arguments
/// `<function>Arguments`) or untitled (an extension's request, protocol.md#extension-routes).
pub fn input_schema<T: JsonSchema>(title: Option<&str>) -> Value {
    let mut map = root_schema::<T>();
    match title {
        Some(title) => map.insert("title".into(), Value::String(title.into())),
        None => map.remove("title"),
    };
    map.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    Value::Object(map)
}

/// How a tool's return value of type `T` becomes structured content, and the output schema that
/// goes with it (protocol.md#tool-listing): objects as they are, anything else wrapped as
/// `{"result": value}` under a schema titled `title`, and an untyped JSON value not at all.
pub fn output_shape<T: JsonSchema>(title: &str) -> (OutputShape, Option<Value>) {
    let mut map = root_schema::<T>();
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
            schema.unwrap(),
            json!({"type": "object", "properties": {"result": {"type": "string"}},
                   "required": ["result"], "title": "fOutput"})
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
}
