//! The notebook of `../reference.py`, ported by hand from the reference SDK to envhost's Rust SDK,
//! and served to clients exactly as the reference serves the original. It exercises what slack and
//! tickets do not: an export through a `write_namespace` grant (a `#[get_data]` taking an
//! `Option<Namespace>` uploads every note and answers `uploaded_file_part`s), file parts with
//! inline bytes in `data/add`, a tool that changes another tool's description at run time
//! (`update_tool`), a mount hook (`#[served]`) leaving out a data-plane method, an extension and
//! an extension method, a verbatim `ToolResult` with audio, and optional parameters. `data/add`
//! reads its parts as the reference's Python reads them, and fails with Python's messages.

use envhost_sdk::upload::{Namespace, uploaded_file_part};
use envhost_sdk::{
    ContentBlock, EnvError, EnvInfo, FilePart, FileSource, Operation, Part, ToolContext,
    ToolResult, environment, json_dumps, update_tool,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

const LABS_URI: &str = "urn:example:notes-labs/v1";
/// A WAV header with no samples, base64: what a note sounds like.
const SILENCE: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

// A note. (No doc comment: schemars would make it the schema's description, which the
// reference's TypedDict has none of.)
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Note {
    id: i64,
    title: String,
    body: String,
    tags: Vec<String>,
}

/// The whole notebook, as `data/get` answers it without a grant.
#[derive(Serialize)]
struct Export<'a> {
    notes: &'a [Note],
}

/// The archive's answer to `count` and `purge`, and the labs' to `shuffle`.
#[derive(Serialize)]
struct Count {
    notes: usize,
}

/// The archive's answer to `tag`.
#[derive(Serialize)]
struct Tagged {
    id: i64,
    tags: Vec<String>,
}

/// The notebook: its notes in the order they were written (ids count from 1).
#[derive(Default)]
pub struct Notes {
    notes: Vec<Note>,
}

/// The id of the note after `notes`.
fn next_id(notes: &[Note]) -> i64 {
    i64::try_from(notes.len()).map_or(i64::MAX, |n| n + 1)
}

#[environment(name = "notes")]
impl Notes {
    // ------------------------------------------------------------------------ mount hooks

    #[served]
    fn served(info: &mut EnvInfo) {
        info.operations.retain(|op| !matches!(op, Operation::Reset));
        info.extensions.retain(|e| e.uri != LABS_URI);
        for extension in &mut info.extensions {
            extension.methods.retain(|m| m.op != "purge");
        }
    }

    // ------------------------------------------------------------------------ data plane

    /// Adds a note for every text part, every note of a data part's `notes` and every file
    /// part's text; all or none.
    #[add_data]
    fn add(&mut self, parts: Vec<Part>) -> Result<(), EnvError> {
        let mut notes = self.notes.clone();
        for part in parts {
            match part {
                Part::Text(part) => notes.push(Note {
                    id: next_id(&notes),
                    title: "text".into(),
                    body: part.text,
                    tags: Vec::new(),
                }),
                Part::Data(part) => {
                    if let Some(seeded) = part.data.to_map().get("notes") {
                        for note in py_iter(seeded)? {
                            let note = seeded_note(&note, next_id(&notes))?;
                            notes.push(note);
                        }
                    }
                }
                Part::File(FilePart {
                    file: FileSource::Bytes(bytes),
                    name,
                    ..
                }) => notes.push(Note {
                    id: next_id(&notes),
                    title: name
                        .filter(|n| !n.is_empty())
                        .unwrap_or_else(|| "file".into()),
                    body: utf8(bytes)?,
                    tags: vec!["file".into()],
                }),
                Part::File(_) => {
                    return Err(invalid("notes load from text, data and inline file parts"));
                }
            }
        }
        self.notes = notes;
        Ok(())
    }

    /// The notes; through a grant, every note uploaded as `notes/<id>.md` and the titles as
    /// `index.json`, answered as the parts naming them.
    #[get_data]
    fn get(&self, write_namespace: Option<Namespace>) -> Result<Vec<Part>, EnvError> {
        let Some(uploader) = write_namespace else {
            return Ok(vec![Part::data_of(&Export { notes: &self.notes })?]);
        };
        let mut parts = Vec::new();
        for note in &self.notes {
            let path = format!("notes/{}.md", note.id);
            let markdown = format!("# {}\n\n{}\n", note.title, note.body);
            uploader.upload(&path, markdown.as_bytes())?;
            let name = format!("{}.md", note.id);
            parts.push(uploaded_file_part(
                &path,
                Some(&name),
                Some("text/markdown"),
            ));
        }
        let titles: Vec<&str> = self.notes.iter().map(|n| n.title.as_str()).collect();
        let index =
            json_dumps(&titles).map_err(|e| EnvError::new("invalid_result", e.to_string()))?;
        uploader.upload("index.json", index.as_bytes())?;
        parts.push(uploaded_file_part(
            "index.json",
            None,
            Some("application/json"),
        ));
        Ok(parts)
    }

    // ------------------------------------------------------------------------ tools

    /// Writes a note.
    #[tool(name = "{environment_name}_write")]
    fn write(
        &mut self,
        #[arg(description = "The note's title.")] title: String,
        body: String,
        tags: Option<Vec<String>>,
    ) -> Note {
        let note = Note {
            id: next_id(&self.notes),
            title,
            body,
            tags: tags.unwrap_or_default(),
        };
        self.notes.push(note.clone());
        note
    }

    /// Finds notes whose title or body holds the query.
    #[tool(name = "{environment_name}_find", annotations(read_only_hint = true))]
    fn find(&self, query: String, limit: Option<i64>, tag: Option<String>) -> Vec<Note> {
        let query = query.to_lowercase();
        let mut found: Vec<Note> = self
            .notes
            .iter()
            .filter(|n| {
                format!("{} {}", n.title, n.body)
                    .to_lowercase()
                    .contains(&query)
                    && tag.as_ref().is_none_or(|tag| n.tags.contains(tag))
            })
            .cloned()
            .collect();
        if let Some(limit) = limit {
            found.truncate(slice_end(limit, found.len()));
        }
        found
    }

    /// Reads a note aloud.
    #[tool(name = "{environment_name}_read_aloud")]
    fn read_aloud(&self, id: i64) -> ToolResult {
        let (content, is_error) = match self.notes.iter().find(|n| n.id == id) {
            Some(note) => (
                vec![
                    ContentBlock::Text(note.title.clone()),
                    ContentBlock::Block(
                        json!({"type": "audio", "data": SILENCE, "mimeType": "audio/wav"})
                            .to_string(),
                    ),
                ],
                false,
            ),
            None => (vec![ContentBlock::Text(format!("no note {id}"))], true),
        };
        ToolResult {
            content,
            structured_content: None,
            is_error,
            meta: None,
        }
    }

    /// Points the find tool at a topic.
    #[tool(name = "{environment_name}_focus")]
    fn focus(&self, ctx: ToolContext, topic: String) -> Result<String, EnvError> {
        let served = ctx.tool.unwrap_or_default();
        let find = format!("{}_find", served.strip_suffix("_focus").unwrap_or(&served));
        update_tool(&find, &format!("Finds notes about {topic}."))?;
        Ok(format!("{find} now looks for {topic}"))
    }

    // ------------------------------------------------------------------------ extensions

    #[extension(
        uri = "urn:example:notes-archive/v1",
        op = "count",
        method = "GET",
        description = "The notebook's archive."
    )]
    fn count(&self) -> Count {
        Count {
            notes: self.notes.len(),
        }
    }

    #[extension(uri = "urn:example:notes-archive/v1", op = "tag", method = "POST")]
    fn tag(&mut self, id: i64, tag: String) -> Result<Tagged, EnvError> {
        let note = self.notes.iter_mut().find(|n| n.id == id).ok_or_else(|| {
            EnvError::new("note_not_found", format!("no note {id}"))
                .status(404)
                .hint("list them with data/get")
        })?;
        note.tags.push(tag);
        Ok(Tagged {
            id,
            tags: note.tags.clone(),
        })
    }

    #[extension(uri = "urn:example:notes-archive/v1", op = "purge", method = "POST")]
    fn purge(&mut self) -> Count {
        self.notes.clear();
        Count { notes: 0 }
    }

    #[extension(
        uri = "urn:example:notes-labs/v1",
        op = "shuffle",
        method = "POST",
        description = "Not served."
    )]
    fn shuffle(&mut self) -> Count {
        self.notes.reverse();
        Count {
            notes: self.notes.len(),
        }
    }
}

/// Where Python's `found[:stop]` ends in a list of `len` items: a negative `stop` counts from the
/// end.
fn slice_end(stop: i64, len: usize) -> usize {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let end = if stop < 0 {
        len.saturating_add(stop).max(0)
    } else {
        stop.min(len)
    };
    usize::try_from(end).unwrap_or(0)
}

fn invalid(message: impl Into<String>) -> EnvError {
    EnvError::new("invalid_data", message)
}

/// A note of a data part's `notes`, as the reference reads one: `str(note["title"])`,
/// `str(note.get("body", ""))` and `[str(t) for t in note.get("tags", [])]`, failing where
/// Python fails, with its message.
fn seeded_note(note: &Value, id: i64) -> Result<Note, EnvError> {
    let Value::Object(note) = note else {
        return Err(invalid(not_subscriptable(note)));
    };
    let title = note.get("title").ok_or_else(|| invalid("'title'"))?;
    let tags = match note.get("tags") {
        None => Vec::new(),
        Some(tags) => py_iter(tags)?.iter().map(py_str).collect(),
    };
    Ok(Note {
        id,
        title: py_str(title),
        body: note.get("body").map_or_else(String::new, py_str),
        tags,
    })
}

/// The name of the Python type the reference's `json` reads `value` into.
fn py_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// What a Python `for` loop takes from `value`: a list's items, a string's characters, an
/// object's keys; anything else is not iterable.
fn py_iter(value: &Value) -> Result<Vec<Value>, EnvError> {
    match value {
        Value::Array(items) => Ok(items.clone()),
        Value::String(text) => Ok(text.chars().map(|c| Value::String(c.into())).collect()),
        Value::Object(object) => Ok(object.keys().cloned().map(Value::String).collect()),
        other => Err(invalid(format!(
            "'{}' object is not iterable",
            py_type(other)
        ))),
    }
}

/// Python's message for `value["title"]` when `value` is not a dict.
fn not_subscriptable(value: &Value) -> String {
    match value {
        Value::String(_) => "string indices must be integers, not 'str'".into(),
        Value::Array(_) => "list indices must be integers or slices, not str".into(),
        other => format!("'{}' object is not subscriptable", py_type(other)),
    }
}

/// Python's `str()` of `value`: a string as it is, `None`, `True`, a number as Python writes it;
/// a list or an object as its JSON (Python writes its `repr`, with single quotes).
fn py_str(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => json_dumps(other).unwrap_or_default(),
    }
}

/// A file's bytes as text, or the error of Python's `bytes.decode("utf-8")`, with its message.
fn utf8(bytes: Vec<u8>) -> Result<String, EnvError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let start = e.utf8_error().valid_up_to();
        let (end, reason) = match e.utf8_error().error_len() {
            None => (bytes.len(), "unexpected end of data"),
            Some(n) if (0xc2..=0xf4).contains(&bytes[start]) => {
                (start + n, "invalid continuation byte")
            }
            Some(n) => (start + n, "invalid start byte"),
        };
        let at = if end - start == 1 {
            format!("byte 0x{:02x} in position {start}", bytes[start])
        } else {
            format!("bytes in position {start}-{}", end - 1)
        };
        invalid(format!("'utf-8' codec can't decode {at}: {reason}"))
    })
}
