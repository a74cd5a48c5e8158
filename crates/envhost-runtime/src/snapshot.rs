//! Snapshots: everything needed to rebuild an episode exactly, in memory and as a portable JSON
//! file (format `envhost-snapshot`, version 2, described in `docs/snapshots.md`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use envhost_protocol::Caller;
use envhost_protocol::tool_access::Rules;

use crate::bindings::agentenv::environment::types as wit;
use crate::call::CallContext;
use crate::capability::wasi::{Reading, Seed};
use crate::journal::{Entry, Journal, Op};

/// The `format` of a snapshot file.
pub const FORMAT: &str = "envhost-snapshot";

/// The snapshot file version this envhost writes and reads.
pub const VERSION: u32 = 2;

/// An episode at one point: its environment (by digest), seed, tool-access rules and journal.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The environment's name when the snapshot was taken (informative).
    pub environment: String,
    /// `sha256:<hex>` of the environment's component: a restore needs this very component.
    pub digest: String,
    /// The episode's seed.
    pub seed: Seed,
    /// The episode's tool-access rules (protocol.md#tool-access).
    pub tool_access: Rules,
    /// The journal.
    pub journal: Journal,
}

/// Why a snapshot file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotFileError {
    /// Not JSON, or not of the snapshot's shape.
    #[error("not an envhost snapshot: {0}")]
    Shape(String),
    /// Another format or version.
    #[error(
        "unsupported snapshot: format {format:?} version {version} (this envhost reads {FORMAT:?} version {VERSION})"
    )]
    Version {
        /// The file's format.
        format: String,
        /// The file's version.
        version: u32,
    },
}

impl Snapshot {
    /// The snapshot as its file: JSON text.
    pub fn to_file(&self) -> Vec<u8> {
        let file = File {
            format: FORMAT.into(),
            version: VERSION,
            environment: EnvironmentRef {
                name: self.environment.clone(),
                digest: self.digest.clone(),
            },
            seed: self.seed.to_hex(),
            tool_access: self.tool_access.clone(),
            start: self.journal.start.clone(),
            journal: self
                .journal
                .entries()
                .map_while(Result::ok)
                .map(|e| entry_file(&e))
                .collect(),
        };
        serde_json::to_vec(&file).unwrap_or_default()
    }

    /// Reads a snapshot file.
    ///
    /// # Errors
    /// [`SnapshotFileError`] for anything but a well-formed version-2 snapshot.
    pub fn from_file(bytes: &[u8]) -> Result<Self, SnapshotFileError> {
        let header: Header =
            serde_json::from_slice(bytes).map_err(|e| SnapshotFileError::Shape(e.to_string()))?;
        if header.format != FORMAT || header.version != VERSION {
            return Err(SnapshotFileError::Version {
                format: header.format,
                version: header.version,
            });
        }
        let file: File =
            serde_json::from_slice(bytes).map_err(|e| SnapshotFileError::Shape(e.to_string()))?;
        let seed = Seed::from_hex(&file.seed)
            .ok_or_else(|| SnapshotFileError::Shape("seed: expected 64 hex digits".into()))?;
        let mut journal = Journal::new(file.start);
        for (i, e) in file.journal.into_iter().enumerate() {
            let e = entry(e).map_err(|m| SnapshotFileError::Shape(format!("journal[{i}]: {m}")))?;
            journal.push(&e.op, e.context.as_ref(), &e.readings, &e.answer);
        }
        // Frozen, so that every restore's copy shares the entries.
        journal.share();
        Ok(Self {
            environment: file.environment.name,
            digest: file.environment.digest,
            seed,
            tool_access: file.tool_access,
            journal,
        })
    }
}

#[derive(Deserialize)]
struct Header {
    format: String,
    version: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: String,
    version: u32,
    environment: EnvironmentRef,
    seed: String,
    tool_access: Rules,
    start: Vec<Reading>,
    journal: Vec<EntryFile>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvironmentRef {
    name: String,
    digest: String,
}

#[derive(Serialize, Deserialize)]
struct EntryFile {
    #[serde(flatten)]
    op: OpFile,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    context: Option<ContextFile>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    readings: Vec<Reading>,
    answer: String,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum OpFile {
    Reset,
    AddData {
        parts: Vec<PartFile>,
    },
    GetData,
    CallTool {
        name: String,
        arguments: String,
    },
    CallExtension {
        uri: String,
        method: String,
        request: String,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextFile {
    role: Option<String>,
    session: Option<String>,
    tool: String,
    arguments: String,
    call_id: String,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum PartFile {
    Text {
        text: String,
        #[serde(default)]
        metadata: Option<String>,
    },
    Data {
        data: String,
        #[serde(default)]
        metadata: Option<String>,
    },
    File {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
        #[serde(default)]
        mime_type: Option<String>,
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        metadata: Option<String>,
    },
}

fn entry_file(entry: &Entry) -> EntryFile {
    let op = match &entry.op {
        Op::Reset => OpFile::Reset,
        Op::AddData(parts) => OpFile::AddData {
            parts: parts.iter().map(part_file).collect(),
        },
        Op::GetData => OpFile::GetData,
        Op::CallTool { name, arguments } => OpFile::CallTool {
            name: name.clone(),
            arguments: arguments.clone(),
        },
        Op::CallExtension { uri, op, request } => OpFile::CallExtension {
            uri: uri.clone(),
            method: op.clone(),
            request: request.clone(),
        },
    };
    EntryFile {
        op,
        context: entry.context.clone().map(|c| ContextFile {
            role: c.caller.role,
            session: c.caller.session,
            tool: c.tool,
            arguments: c.arguments,
            call_id: c.call_id,
        }),
        readings: entry.readings.clone(),
        answer: hex(&entry.answer),
    }
}

fn entry(file: EntryFile) -> Result<Entry, String> {
    let op = match file.op {
        OpFile::Reset => Op::Reset,
        OpFile::AddData { parts } => {
            Op::AddData(parts.into_iter().map(part).collect::<Result<_, _>>()?)
        }
        OpFile::GetData => Op::GetData,
        OpFile::CallTool { name, arguments } => Op::CallTool { name, arguments },
        OpFile::CallExtension {
            uri,
            method,
            request,
        } => Op::CallExtension {
            uri,
            op: method,
            request,
        },
    };
    let answer = unhex(&file.answer).ok_or("answer: expected 64 hex digits")?;
    let context = file.context.map(|c| CallContext {
        caller: Caller {
            role: c.role,
            session: c.session,
        },
        tool: c.tool,
        arguments: c.arguments,
        call_id: c.call_id,
    });
    Ok(Entry {
        op,
        context,
        readings: file.readings,
        answer,
    })
}

fn part_file(part: &wit::Part) -> PartFile {
    match part {
        wit::Part::Text(p) => PartFile::Text {
            text: p.text.clone(),
            metadata: p.metadata.clone(),
        },
        wit::Part::Data(p) => PartFile::Data {
            data: p.data.clone(),
            metadata: p.metadata.clone(),
        },
        wit::Part::File(p) => {
            let (bytes, uri) = match &p.file {
                wit::FileContent::Bytes(b) => (Some(BASE64.encode(b)), None),
                wit::FileContent::Uri(u) => (None, Some(u.clone())),
            };
            PartFile::File {
                bytes,
                uri,
                mime_type: p.mime_type.clone(),
                name: p.name.clone(),
                metadata: p.metadata.clone(),
            }
        }
    }
}

fn part(file: PartFile) -> Result<wit::Part, String> {
    Ok(match file {
        PartFile::Text { text, metadata } => wit::Part::Text(wit::TextPart { text, metadata }),
        PartFile::Data { data, metadata } => wit::Part::Data(wit::DataPart { data, metadata }),
        PartFile::File {
            bytes,
            uri,
            mime_type,
            name,
            metadata,
        } => {
            let file = match (bytes, uri) {
                (Some(b), None) => wit::FileContent::Bytes(
                    BASE64
                        .decode(b)
                        .map_err(|e| format!("file part bytes: {e}"))?,
                ),
                (None, Some(u)) => wit::FileContent::Uri(u),
                _ => return Err("a file part has exactly one of bytes and uri".into()),
            };
            wit::Part::File(wit::FilePart {
                file,
                mime_type,
                name,
                metadata,
            })
        }
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    Seed::from_hex(text).map(|s| s.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_round_trips_through_its_file() {
        let parts = Op::AddData(vec![
            wit::Part::Data(wit::DataPart {
                data: r#"{"a":1}"#.into(),
                metadata: None,
            }),
            wit::Part::File(wit::FilePart {
                file: wit::FileContent::Bytes(vec![0, 1, 255]),
                mime_type: Some("application/octet-stream".into()),
                name: None,
                metadata: Some("{}".into()),
            }),
        ]);
        let call = Op::CallTool {
            name: "send".into(),
            arguments: "{}".into(),
        };
        let caller = Caller {
            role: Some("alice".into()),
            session: None,
        };
        let same = CallContext::new(caller.clone(), "slack_send".into(), "{}".into());
        let other = CallContext::new(caller, "slack_send".into(), r#"{"x":1}"#.into());
        let mut journal = Journal::new(vec![Reading::Wall(1)]);
        journal.push(&parts, None, &[Reading::Monotonic(5)], &[7; 32]);
        journal.push(&call, Some(&same), &[Reading::Wall(1 << 60)], &[9; 32]);
        journal.push(&call, Some(&other), &[], &[3; 32]);
        let snapshot = Snapshot {
            environment: "slack".into(),
            digest: "sha256:00".into(),
            seed: Seed::fresh(),
            tool_access: Rules::default(),
            journal,
        };
        let file = snapshot.to_file();
        let back = Snapshot::from_file(&file).unwrap();
        assert_eq!(back.to_file(), file);
        assert_eq!(back.seed, snapshot.seed);
        let entries: Vec<Entry> = back.journal.entries().map(Result::unwrap).collect();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[1].context.as_ref(), Some(&same));
        assert_eq!(entries[2].context.as_ref(), Some(&other));
        assert_eq!(entries[1].readings, [Reading::Wall(1 << 60)]);
    }

    #[test]
    fn other_versions_and_shapes_are_refused() {
        assert!(matches!(
            Snapshot::from_file(br#"{"format": "envhost-snapshot", "version": 1}"#),
            Err(SnapshotFileError::Version { version: 1, .. })
        ));
        assert!(matches!(
            Snapshot::from_file(b"[]"),
            Err(SnapshotFileError::Shape(_))
        ));
    }
}
