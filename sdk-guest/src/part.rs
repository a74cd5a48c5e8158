//! Data-plane parts (protocol.md#parts), as the guest sees them.

use std::io;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::ser::Formatter;
use serde_json::{Map, Value};

use crate::bindings::agentenv::environment::types as wit;
use crate::error::EnvError;

/// A part of data-plane content.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    /// Plain text.
    Text(TextPart),
    /// A JSON object.
    Data(DataPart),
    /// A file.
    File(FilePart),
}

/// A `text` part.
#[derive(Clone, Debug, PartialEq)]
pub struct TextPart {
    /// The text.
    pub text: String,
    /// The part's metadata.
    pub metadata: Option<Map<String, Value>>,
}

/// Compact JSON but for `", "` and `": "` between items, keys and values.
pub(crate) struct Spaced;

impl Formatter for Spaced {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// `value` as JSON text with the [`Spaced`] separators.
fn spaced<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    crate::json::to_string_with(value, Spaced, 128)
}

/// A JSON object as its JSON text, as it crosses the component boundary: read it into your own
/// types with [`JsonObject::read`] (one pass, no tree), or into a tree with
/// [`JsonObject::to_map`]. The host checked that it is one JSON object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonObject(String);

impl JsonObject {
    /// The object serialized from `value`, with the separators the data plane answers with
    /// (`", "` and `": "`, Python's `json.dumps` spacing), so the host passes the text through
    /// as it is.
    ///
    /// # Errors
    /// `invalid_part` when `value` does not serialize to a JSON object.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Result<Self, EnvError> {
        match spaced(value) {
            Ok(text) if text.starts_with('{') => Ok(Self(text)),
            Ok(_) => Err(EnvError::new(
                "invalid_part",
                "a data part holds a JSON object",
            )),
            Err(e) => Err(EnvError::new("invalid_part", format!("not JSON: {e}"))),
        }
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The object read into `T` with serde, in one pass over the text.
    ///
    /// # Errors
    /// serde_json's, when the object does not fit `T`.
    pub fn read<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(&self.0)
    }

    /// The object as a tree (empty if the text is not an object, which the host never sends).
    pub fn to_map(&self) -> Map<String, Value> {
        serde_json::from_str(&self.0).unwrap_or_default()
    }
}

impl From<Map<String, Value>> for JsonObject {
    /// The object's text, spaced as [`JsonObject::of`] spaces it.
    fn from(object: Map<String, Value>) -> Self {
        Self(spaced(&object).unwrap_or_default())
    }
}

/// A `data` part.
#[derive(Clone, Debug, PartialEq)]
pub struct DataPart {
    /// The data object.
    pub data: JsonObject,
    /// The part's metadata.
    pub metadata: Option<Map<String, Value>>,
}

/// Where a file's content is.
#[derive(Clone, Debug, PartialEq)]
pub enum FileSource {
    /// The bytes. `data/add` always delivers files this way: the host fetched any URI.
    Bytes(Vec<u8>),
    /// A URI, for `data/get` answers that point at the content instead of carrying it.
    Uri(String),
}

/// A `file` part.
#[derive(Clone, Debug, PartialEq)]
pub struct FilePart {
    /// The content.
    pub file: FileSource,
    /// The media type, e.g. `application/json`.
    pub mime_type: Option<String>,
    /// The file name.
    pub name: Option<String>,
    /// The part's metadata.
    pub metadata: Option<Map<String, Value>>,
}

impl Part {
    /// A data part holding `data`.
    ///
    /// # Errors
    /// `invalid_part` when `data` is not a JSON object.
    pub fn data(data: Value) -> Result<Self, EnvError> {
        match data {
            Value::Object(data) => Ok(Self::Data(DataPart {
                data: data.into(),
                metadata: None,
            })),
            _ => Err(EnvError::new(
                "invalid_part",
                "a data part holds a JSON object",
            )),
        }
    }

    /// A data part holding `value` serialized, with no tree in between (e.g. a struct of the
    /// environment's state for `data/get`).
    ///
    /// # Errors
    /// `invalid_part` when `value` does not serialize to a JSON object.
    pub fn data_of<T: Serialize + ?Sized>(value: &T) -> Result<Self, EnvError> {
        Ok(Self::Data(DataPart {
            data: JsonObject::of(value)?,
            metadata: None,
        }))
    }

    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextPart {
            text: text.into(),
            metadata: None,
        })
    }

    /// A file part carrying `bytes`.
    pub fn file_bytes(bytes: Vec<u8>, mime_type: Option<&str>, name: Option<&str>) -> Self {
        Self::File(FilePart {
            file: FileSource::Bytes(bytes),
            mime_type: mime_type.map(str::to_owned),
            name: name.map(str::to_owned),
            metadata: None,
        })
    }
}

fn metadata_from_wit(metadata: Option<String>) -> Option<Map<String, Value>> {
    metadata.and_then(|m| serde_json::from_str(&m).ok())
}

fn metadata_to_wit(metadata: Option<Map<String, Value>>) -> Option<String> {
    metadata.map(|m| Value::Object(m).to_string())
}

impl From<wit::Part> for Part {
    fn from(part: wit::Part) -> Self {
        match part {
            wit::Part::Text(t) => Self::Text(TextPart {
                text: t.text,
                metadata: metadata_from_wit(t.metadata),
            }),
            wit::Part::Data(d) => Self::Data(DataPart {
                data: JsonObject(d.data),
                metadata: metadata_from_wit(d.metadata),
            }),
            wit::Part::File(f) => Self::File(FilePart {
                file: match f.file {
                    wit::FileContent::Bytes(b) => FileSource::Bytes(b),
                    wit::FileContent::Uri(u) => FileSource::Uri(u),
                },
                mime_type: f.mime_type,
                name: f.name,
                metadata: metadata_from_wit(f.metadata),
            }),
        }
    }
}

impl From<Part> for wit::Part {
    fn from(part: Part) -> Self {
        match part {
            Part::Text(t) => wit::Part::Text(wit::TextPart {
                text: t.text,
                metadata: metadata_to_wit(t.metadata),
            }),
            Part::Data(d) => wit::Part::Data(wit::DataPart {
                data: d.data.0,
                metadata: metadata_to_wit(d.metadata),
            }),
            Part::File(f) => wit::Part::File(wit::FilePart {
                file: match f.file {
                    FileSource::Bytes(b) => wit::FileContent::Bytes(b),
                    FileSource::Uri(u) => wit::FileContent::Uri(u),
                },
                mime_type: f.mime_type,
                name: f.name,
                metadata: metadata_to_wit(f.metadata),
            }),
        }
    }
}
