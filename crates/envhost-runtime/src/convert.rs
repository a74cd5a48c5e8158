//! Between the guest's WIT types and the protocol's JSON types.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use http::Method;
use serde_json::Value;

use crate::bindings::agentenv::environment::types as wit;
use crate::bindings::exports::agentenv::environment::env as exports;
use envhost_protocol::description::{
    Annotations, Description, DescriptionError, Extension, ExtensionMethod, Layout, Object,
    Operation, Tool,
};
use envhost_protocol::error::{Applied, CodedError};
use envhost_protocol::json::to_text;
use envhost_protocol::json_object::JsonObject;
use envhost_protocol::part::{File, FileContent, Part};

fn object(json: &str, what: &'static str, item: &str) -> Result<Object, DescriptionError> {
    match serde_json::from_str(json) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(invalid(what, item, "not a JSON object".into())),
        Err(e) => Err(invalid(what, item, e.to_string())),
    }
}

fn invalid(what: &'static str, item: &str, detail: String) -> DescriptionError {
    DescriptionError::Invalid {
        what,
        item: item.to_owned(),
        detail,
    }
}

fn optional_object(
    json: Option<&str>,
    what: &'static str,
    item: &str,
) -> Result<Option<Object>, DescriptionError> {
    json.map(|j| object(j, what, item)).transpose()
}

fn tool(t: exports::ToolInfo) -> Result<Tool, DescriptionError> {
    let item = t.name.as_str();
    Ok(Tool {
        input_schema: object(&t.input_schema, "input schema", item)?,
        output_schema: optional_object(t.output_schema.as_deref(), "output schema", item)?,
        meta: optional_object(t.meta.as_deref(), "meta", item)?,
        annotations: t.annotations.map(|a| Annotations {
            title: a.title,
            read_only_hint: a.read_only_hint,
            destructive_hint: a.destructive_hint,
            idempotent_hint: a.idempotent_hint,
            open_world_hint: a.open_world_hint,
        }),
        name: t.name.clone(),
        declared_name: t.name,
        description: t.description,
        hidden_by_default: t.hidden_by_default,
    })
}

fn extension(e: exports::ExtensionInfo) -> Result<Extension, DescriptionError> {
    let item = e.uri.as_str();
    let methods = e
        .methods
        .into_iter()
        .map(|m| {
            Ok(ExtensionMethod {
                http_method: Method::from_bytes(m.http_method.to_ascii_uppercase().as_bytes())
                    .map_err(|_| invalid("verb", item, m.http_method.clone()))?,
                request_schema: object(&m.request_schema, "request schema", item)?,
                path: m.path.unwrap_or_default(),
                op: m.op,
            })
        })
        .collect::<Result<_, DescriptionError>>()?;
    Ok(Extension {
        params: optional_object(e.params.as_deref(), "params", item)?,
        layout: match e.layout {
            exports::ExtensionLayout::Single => Layout::Single,
            exports::ExtensionLayout::PerMethod => Layout::PerMethod,
        },
        uri: e.uri,
        description: e.description,
        required: e.required,
        methods,
    })
}

/// The guest's `describe()` answer as a (not yet resolved) [`Description`].
///
/// # Errors
/// [`DescriptionError::Invalid`] for a schema, meta or params that is not a JSON object, or a
/// verb that is not an HTTP method.
pub fn description(info: exports::EnvInfo) -> Result<Description, DescriptionError> {
    let mut operations: Vec<Operation> = info
        .operations
        .into_iter()
        .map(|o| match o {
            exports::Operation::Reset => Operation::Reset,
            exports::Operation::Add => Operation::Add,
            exports::Operation::Get => Operation::Get,
        })
        .collect();
    operations.sort_by_key(|o| *o as u8);
    operations.dedup();
    Ok(Description {
        name: info.name,
        tools: info.tools.into_iter().map(tool).collect::<Result<_, _>>()?,
        extensions: info
            .extensions
            .into_iter()
            .map(extension)
            .collect::<Result<_, _>>()?,
        operations,
        tool_access: info.tool_access,
    })
}

/// A guest's coded error as the protocol's.
pub fn coded_error(e: wit::EnvError) -> CodedError {
    CodedError {
        code: e.code,
        message: e.message,
        retryable: e.retryable,
        applied: match e.applied {
            wit::Applied::Yes => Applied::Yes,
            wit::Applied::No => Applied::No,
            wit::Applied::Unknown => Applied::Unknown,
        },
        hint: e.hint,
        status: e.status,
    }
}

fn metadata(metadata: Option<String>) -> Option<Object> {
    metadata.and_then(|m| match serde_json::from_str(&m) {
        Ok(Value::Object(o)) => Some(o),
        _ => None,
    })
}

/// A part a guest answered `data/get` with, as the wire's (file bytes base64-encoded).
///
/// # Errors
/// A message when a data part's `data` is not a JSON object (the reference answers -32000).
pub fn part_from_guest(part: wit::Part) -> Result<Part, String> {
    Ok(match part {
        wit::Part::Text(t) => Part::Text {
            text: t.text,
            metadata: metadata(t.metadata),
        },
        wit::Part::Data(d) => match JsonObject::parse(d.data) {
            Ok(data) => Part::Data {
                data,
                metadata: metadata(d.metadata),
            },
            Err(_) => {
                return Err(
                    "the environment answered a data part that is not a JSON object".into(),
                );
            }
        },
        wit::Part::File(f) => Part::File {
            file: File {
                content: match f.file {
                    wit::FileContent::Bytes(b) => FileContent::Bytes {
                        bytes: BASE64.encode(b),
                    },
                    wit::FileContent::Uri(uri) => FileContent::Uri { uri },
                },
                mime_type: f.mime_type,
                name: f.name,
            },
            metadata: metadata(f.metadata),
        },
    })
}

/// A part for the guest's `add-data`: text and data as they are, a file as the `bytes` the
/// host resolved it to.
pub fn part_to_guest(part: Part, file_bytes: Option<Vec<u8>>) -> wit::Part {
    let text = |o: Option<Object>| o.map(|o| to_text(&Value::Object(o)));
    match part {
        Part::Text { text: t, metadata } => wit::Part::Text(wit::TextPart {
            text: t,
            metadata: text(metadata),
        }),
        Part::Data { data, metadata } => wit::Part::Data(wit::DataPart {
            data: data.into_string(),
            metadata: text(metadata),
        }),
        Part::File { file, metadata } => wit::Part::File(wit::FilePart {
            file: wit::FileContent::Bytes(file_bytes.unwrap_or_default()),
            mime_type: file.mime_type,
            name: file.name,
            metadata: text(metadata),
        }),
    }
}
