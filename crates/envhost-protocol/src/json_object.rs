//! A JSON object carried as its JSON text: checked once where it enters (a request body, a
//! guest's answer), then handed on (to a guest, to the journal, to the wire) as the text it
//! arrived as, never parsed into a tree or printed again on the way.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON object as its JSON text (UTF-8, no whitespace around it). Serializing it writes the
/// text as it is with serde_json's compact formatter, and as Python's `json.dumps` would
/// write the same object with [`crate::json::to_python_json`] (protocol.md#json-encoding).
/// Deserializing reads any JSON object (through a [`Map`]: text read in one pass is kept with
/// [`JsonObject::from_raw`]).
#[derive(Clone)]
pub struct JsonObject(Box<RawValue>);

/// Why a text is not a [`JsonObject`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JsonObjectError {
    /// The text is not JSON: serde_json's message.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// The text is JSON, but not an object.
    #[error("not a JSON object")]
    NotAnObject,
}

impl JsonObject {
    /// `text` checked to be one JSON object, kept without a copy.
    ///
    /// # Errors
    /// [`JsonObjectError`] when it is not JSON, or not an object.
    pub fn parse(text: String) -> Result<Self, JsonObjectError> {
        let raw =
            RawValue::from_string(text).map_err(|e| JsonObjectError::NotJson(e.to_string()))?;
        Self::from_raw(raw)
    }

    /// `raw` when it is an object.
    ///
    /// # Errors
    /// [`JsonObjectError::NotAnObject`].
    pub fn from_raw(raw: Box<RawValue>) -> Result<Self, JsonObjectError> {
        if raw.get().starts_with('{') {
            Ok(Self(raw))
        } else {
            Err(JsonObjectError::NotAnObject)
        }
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The JSON text, without a copy.
    pub fn into_string(self) -> String {
        Box::<str>::from(self.0).into_string()
    }

    /// The object as a tree.
    ///
    /// # Errors
    /// When serde_json cannot hold it as a [`Value`] (a number out of `f64`'s range, a lone
    /// surrogate escape); every object made from a `Value` can.
    pub fn to_map(&self) -> serde_json::Result<Map<String, Value>> {
        serde_json::from_str(self.as_str())
    }
}

impl From<Map<String, Value>> for JsonObject {
    fn from(object: Map<String, Value>) -> Self {
        let text = crate::json::to_text(&Value::Object(object));
        // A `Value`'s compact text is always JSON, and this one is an object.
        Self(RawValue::from_string(text).unwrap_or_else(|_| empty()))
    }
}

fn empty() -> Box<RawValue> {
    RawValue::from_string("{}".into()).unwrap_or_else(|_| unreachable!("{{}} is JSON"))
}

impl Default for JsonObject {
    fn default() -> Self {
        Self(empty())
    }
}

/// Equal when the texts are: two texts of the same object that differ in spacing are not.
impl PartialEq for JsonObject {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for JsonObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for JsonObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Map::<String, Value>::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_objects_are_kept_and_as_they_were_written() {
        let object = JsonObject::parse(r#"{"b": 1,  "a": [2]}"#.into()).unwrap();
        assert_eq!(object.as_str(), r#"{"b": 1,  "a": [2]}"#);
        assert_eq!(
            serde_json::to_string(&object).unwrap(),
            r#"{"b": 1,  "a": [2]}"#
        );
        assert_eq!(
            object.to_map().unwrap(),
            json!({"b": 1, "a": [2]}).as_object().cloned().unwrap()
        );
        assert_eq!(
            JsonObject::parse("[1]".into()).unwrap_err(),
            JsonObjectError::NotAnObject
        );
        assert!(matches!(
            JsonObject::parse("{".into()),
            Err(JsonObjectError::NotJson(_))
        ));
        assert_eq!(JsonObject::parse(" {} ".into()).unwrap().as_str(), "{}");
    }

    #[test]
    fn objects_come_from_maps_and_from_values() {
        let map = json!({"z": 1, "a": "é"}).as_object().cloned().unwrap();
        assert_eq!(JsonObject::from(map).as_str(), r#"{"z":1,"a":"é"}"#);
        let read: JsonObject = serde_json::from_value(json!({"k": [true]})).unwrap();
        assert_eq!(read.into_string(), r#"{"k":[true]}"#);
        assert!(serde_json::from_value::<JsonObject>(json!([1])).is_err());
        assert_eq!(JsonObject::default().as_str(), "{}");
    }
}
