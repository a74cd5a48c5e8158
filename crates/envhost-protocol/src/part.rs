//! Parts (protocol.md#parts): the A2A-shaped content of `data/add` and `data/get`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::description::Object;
use super::json_object::JsonObject;

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
        /// The data: an object, as the JSON text it came as.
        data: JsonObject,
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
    /// About how many bytes the part encodes to: its text, data or file content, and a few
    /// bytes of framing (more when its text needs escapes).
    pub fn size_hint(&self) -> usize {
        const FRAMING: usize = 64;
        FRAMING
            + match self {
                Self::Text { text, .. } => text.len(),
                Self::Data { data, .. } => data.as_str().len(),
                Self::File { file, .. } => match &file.content {
                    FileContent::Bytes { bytes } => bytes.len(),
                    FileContent::Uri { uri } => uri.len(),
                },
            }
    }

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

/// The parts of `data/add` params (protocol.md#add-data): an object with a `parts` list of
/// valid parts (an empty list included: whether one is enough is the caller's to say).
///
/// A request of text and data parts is read in one pass over its text, each data part's object
/// kept as the text it came as ([`JsonObject`]); anything else (a file part, a key written with
/// escapes, a part with a field of the wrong type, an error) is read through a [`Value`] as
/// [`Part::from_json`] reads it, so that errors and edge cases are the same either way.
///
/// # Errors
/// The `detail` of the `-32602` answer (protocol.md#add-data).
pub fn parts_from_add_params(params: &RawValue) -> Result<Vec<Part>, String> {
    if let Ok(FastParams { parts }) = serde_json::from_str(params.get())
        && let Some(parts) = fast_parts(parts)
    {
        return Ok(parts);
    }
    let params: Value = serde_json::from_str(params.get()).map_err(|e| e.to_string())?;
    let Value::Object(mut params) = params else {
        return Err("data/add takes its params by name: {\"parts\": [...]}".into());
    };
    match params.remove("parts") {
        Some(list) => slow_parts(list),
        None => Err("parts: field required".into()),
    }
}

/// The parts of a `parts` list given on its own (e.g. `POST /episodes`'s), read as
/// [`parts_from_add_params`] reads the list of its params, with the same errors.
///
/// # Errors
/// What is wrong, as [`parts_from_add_params`] words it.
pub fn parts_from_list(list: &RawValue) -> Result<Vec<Part>, String> {
    if let Ok(parts) = serde_json::from_str::<Vec<FastPart<'_>>>(list.get())
        && let Some(parts) = fast_parts(parts)
    {
        return Ok(parts);
    }
    slow_parts(serde_json::from_str(list.get()).map_err(|e| e.to_string())?)
}

/// The parts of `list` read through [`Part::from_json`].
fn slow_parts(list: Value) -> Result<Vec<Part>, String> {
    let Value::Array(items) = list else {
        return Err("parts: input should be a list".into());
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, p)| Part::from_json(p).map_err(|e| format!("parts[{i}]: {e}")))
        .collect()
}

/// `data/add` params as the one-pass reading sees them.
#[derive(Deserialize)]
pub(crate) struct FastParams<'a> {
    #[serde(borrow)]
    parts: Vec<FastPart<'a>>,
}

impl FastParams<'_> {
    /// The parts, when every one reads in one pass.
    pub(crate) fn into_parts(self) -> Option<Vec<Part>> {
        fast_parts(self.parts)
    }
}

/// A part as the one-pass reading sees it: only a JSON object (never an array, as serde's
/// derive would also read), each key at most once.
#[derive(Default)]
pub(crate) struct FastPart<'a> {
    kind: Option<&'a str>,
    text: Option<String>,
    data: Option<&'a RawValue>,
    /// Given (`null` or an object) or not.
    metadata: Option<Option<Object>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for FastPart<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(FastPartVisitor(std::marker::PhantomData))
    }
}

/// Reads a [`FastPart`] from a map only.
struct FastPartVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> serde::de::Visitor<'de> for FastPartVisitor<'a> {
    type Value = FastPart<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a part object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut part = FastPart::default();
        while let Some(key) = map.next_key::<&'de str>()? {
            match key {
                "kind" => once(&mut part.kind, map.next_value()?)?,
                "text" => once(&mut part.text, map.next_value()?)?,
                "data" => once(&mut part.data, map.next_value()?)?,
                "metadata" => once(&mut part.metadata, map.next_value()?)?,
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(part)
    }
}

/// Fills `slot` with the value of a key, refusing a key given twice (where a [`Value`] would
/// keep the last, the one-pass readings leave the request to the `Value` reading).
pub(crate) fn once<T, E: serde::de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
    match slot.replace(value) {
        None => Ok(()),
        Some(_) => Err(E::custom("a key given twice")),
    }
}

/// The parts read in one pass, or `None` where [`parts_from_add_params`] reads them through a
/// [`Value`].
fn fast_parts(parts: Vec<FastPart<'_>>) -> Option<Vec<Part>> {
    parts
        .into_iter()
        .map(|part| match (part.kind?, part.text, part.data) {
            ("text", Some(text), _) => Some(Part::Text {
                text,
                metadata: part.metadata.flatten(),
            }),
            ("data", _, Some(data)) if !has_surrogate_escape(data.get()) => Some(Part::Data {
                data: JsonObject::from_raw(data.to_owned()).ok()?,
                metadata: part.metadata.flatten(),
            }),
            _ => None,
        })
        .collect()
}

/// Whether `text` may hold a `\uD800`–`\uDFFF` escape, which a [`Value`] refuses alone and
/// takes apart in pairs: such text is read through a `Value`, as before.
fn has_surrogate_escape(text: &str) -> bool {
    text.contains("\\u")
        && text
            .match_indices("\\u")
            .any(|(i, _)| text.as_bytes().get(i + 2).is_some_and(|b| b | 0x20 == b'd'))
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

    fn add(params: &str) -> Result<Vec<Part>, String> {
        parts_from_add_params(&RawValue::from_string(params.into()).unwrap())
    }

    #[test]
    fn add_params_need_a_list_of_valid_parts() {
        assert!(add("[1]").unwrap_err().contains("by name"));
        assert_eq!(add("{}").unwrap_err(), "parts: field required");
        assert_eq!(
            add(r#"{"parts": {}}"#).unwrap_err(),
            "parts: input should be a list"
        );
        assert!(
            add(r#"{"parts": [{"kind": "nope"}]}"#)
                .unwrap_err()
                .starts_with("parts[0]:")
        );
        assert!(
            add(r#"{"parts": [["text", "x", null]]}"#)
                .unwrap_err()
                .starts_with("parts[0]:")
        );
        assert!(
            add(r#"{"parts": [{"kind": "data", "data": [1]}]}"#)
                .unwrap_err()
                .starts_with("parts[0]:")
        );
        assert!(add(r#"{"parts": [{"kind": "data", "data": {"s": "\ud800"}}]}"#).is_err());
        assert_eq!(add(r#"{"parts": [], "extra": 1}"#).unwrap(), []);
    }

    #[test]
    fn add_params_keep_data_as_written_and_read_the_rest_as_before() {
        let fast = add(concat!(
            r#"{"parts": [{"kind": "data", "data": {"b": [1, 2], "a": "\u00e9"}, "metadata": null},"#,
            r#" {"kind": "text", "text": "hi", "file": [1], "metadata": {"m": 1}}], "extra": 1}"#
        ))
        .unwrap();
        assert_eq!(
            fast,
            [
                Part::Data {
                    data: JsonObject::parse(r#"{"b": [1, 2], "a": "\u00e9"}"#.into()).unwrap(),
                    metadata: None,
                },
                Part::Text {
                    text: "hi".into(),
                    metadata: json!({"m": 1}).as_object().cloned(),
                }
            ]
        );
        let slow = add(concat!(
            r#"{"parts": [{"kind": "data", "data": {"x": 1}, "kind": "data", "text": 5},"#,
            r#" {"kind": "file", "file": {"bytes": "e30="}}]}"#
        ))
        .unwrap();
        assert_eq!(
            slow[0],
            Part::Data {
                data: JsonObject::parse(r#"{"x":1}"#.into()).unwrap(),
                metadata: None,
            }
        );
        assert!(matches!(slow[1], Part::File { .. }));
    }

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
            parts[1],
            Part::Data {
                data: JsonObject::parse(r#"{"a":1}"#.into()).unwrap(),
                metadata: None
            }
        );
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
