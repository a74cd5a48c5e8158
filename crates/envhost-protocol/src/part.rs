//! Parts (protocol.md#parts): the A2A-shaped content of `data/add` and `data/get`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::description::Object;

/// A part, tagged by `kind`. Unknown extra keys are ignored; `metadata` may be null.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Part {
    /// `{"kind": "text", "text": str, "metadata"?: object}`
    Text {
        /// The text.
        text: String,
        /// The part's metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Object>,
    },
    /// `{"kind": "data", "data": object, "metadata"?: object}`
    Data {
        /// The data; must be an object.
        data: Object,
        /// The part's metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Object>,
    },
    /// `{"kind": "file", "file": FileWithBytes | FileWithUri, "metadata"?: object}`
    File {
        /// The file.
        file: File,
        /// The part's metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Object>,
    },
}

impl Part {
    /// A part from its JSON (protocol.md#parts), as the reference's models read it: only objects,
    /// where serde's derive would also read a part, or its file, from an array.
    ///
    /// # Errors
    /// What is wrong with `value`, as text.
    pub fn from_json(value: Value) -> Result<Self, String> {
        let objects = match &value {
            Value::Object(part) => {
                part.get("kind").and_then(Value::as_str) != Some("file")
                    || part.get("file").is_none_or(Value::is_object)
            }
            _ => false,
        };
        if !objects {
            return Err("a part, and its file, must be JSON objects".into());
        }
        serde_json::from_value(value).map_err(|e| e.to_string())
    }
}

/// Where a file's content is: inline base64 `bytes` (tried first) or a `uri`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FileContent {
    /// `{"bytes": <base64>}`
    Bytes {
        /// The content, base64-encoded.
        bytes: String,
    },
    /// `{"uri": <uri>}`
    Uri {
        /// `file://`, `http(s)://`, or (in `data/get` answers) a relative path or other URI.
        uri: String,
    },
}

/// A file: FileWithBytes or FileWithUri (protocol.md#parts).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct File {
    /// The content.
    #[serde(flatten)]
    pub content: FileContent,
    /// The media type.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_round_trip_without_nulls() {
        let parts: Vec<Part> = serde_json::from_value(json!([
            {"kind": "text", "text": "hi", "metadata": null},
            {"kind": "data", "data": {"a": 1}},
            {"kind": "file", "file": {"uri": "file:///data/x.json", "mimeType": "application/json", "name": null}},
            {"kind": "file", "file": {"bytes": "e30=", "name": "x.json"}, "extra": 1},
        ]))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&parts).unwrap(),
            json!([
                {"kind": "text", "text": "hi"},
                {"kind": "data", "data": {"a": 1}},
                {"kind": "file", "file": {"uri": "file:///data/x.json", "mimeType": "application/json"}},
                {"kind": "file", "file": {"bytes": "e30=", "name": "x.json"}},
            ])
        );
    }

    #[test]
    fn data_must_be_an_object_and_kinds_known() {
        assert!(serde_json::from_value::<Part>(json!({"kind": "data", "data": [1]})).is_err());
        assert!(serde_json::from_value::<Part>(json!({"kind": "video"})).is_err());
        assert!(serde_json::from_value::<Part>(json!({"kind": "file", "file": {}})).is_err());
    }

    #[test]
    fn a_part_or_file_given_as_an_array_is_refused() {
        for value in [
            json!(["text", "hi"]),
            json!(["text", "hi", null]),
            json!(["data", {"a": 1}, null]),
            json!("text"),
            json!({"kind": "file", "file": ["e30=", "application/json", "x.json"]}),
        ] {
            assert!(Part::from_json(value.clone()).is_err(), "{value}");
        }
        let text = json!({"kind": "text", "text": "hi", "file": [1]});
        assert_eq!(
            Part::from_json(text),
            Ok(Part::Text {
                text: "hi".into(),
                metadata: None
            })
        );
        let file = json!({"kind": "file", "file": {"bytes": "e30="}});
        assert!(Part::from_json(file).is_ok());
    }
}
