//! Snapshots: everything needed to rebuild an episode exactly, in memory and as a portable JSON
//! file (format `envhost-snapshot`, versions 2 and 3, described in `docs/snapshots.md`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use envhost_protocol::Caller;
use envhost_protocol::tool_access::Rules;

use crate::bindings::agentenv::environment::types as wit;
use crate::call::CallContext;
use crate::capability::wasi::{Reading, Seed};
use crate::journal::{AnswerHash, Entry, Journal, Op};

/// The `format` of a snapshot file.
pub const FORMAT: &str = "envhost-snapshot";

/// The snapshot file version this envhost writes (for every journal it starts) and reads:
/// answers digested with BLAKE3.
pub const VERSION: u32 = 3;

/// The earlier version this envhost still reads and writes back: answers digested with
/// SHA-256.
pub const SHA256_VERSION: u32 = 2;

/// The version of a file whose journal digests answers with `hash`.
fn version_of(hash: AnswerHash) -> u32 {
    match hash {
        AnswerHash::Sha256 => SHA256_VERSION,
        AnswerHash::Blake3 => VERSION,
    }
}

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
        "unsupported snapshot: format {format:?} version {version} (this envhost reads {FORMAT:?} versions {SHA256_VERSION} and {VERSION})"
    )]
    Version {
        /// The file's format.
        format: String,
        /// The file's version.
        version: u32,
    },
}

impl Snapshot {
    /// The snapshot as its file: JSON text, of the version its journal's hash is written in.
    pub fn to_file(&self) -> Vec<u8> {
        let file = File {
            format: FORMAT.into(),
            version: version_of(self.journal.hash()),
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
    /// [`SnapshotFileError`] for anything but a well-formed version-2 or version-3 snapshot.
    pub fn from_file(bytes: &[u8]) -> Result<Self, SnapshotFileError> {
        let header: Header =
            serde_json::from_slice(bytes).map_err(|e| SnapshotFileError::Shape(e.to_string()))?;
        let hash = match (header.format == FORMAT, header.version) {
            (true, VERSION) => AnswerHash::Blake3,
            (true, SHA256_VERSION) => AnswerHash::Sha256,
            _ => {
                return Err(SnapshotFileError::Version {
                    format: header.format,
                    version: header.version,
                });
            }
        };
        let file: File =
            serde_json::from_slice(bytes).map_err(|e| SnapshotFileError::Shape(e.to_string()))?;
        let seed = Seed::from_hex(&file.seed)
            .ok_or_else(|| SnapshotFileError::Shape("seed: expected 64 hex digits".into()))?;
        let mut journal = Journal::with_hash(file.start, hash);
        for (i, e) in file.journal.into_iter().enumerate() {
            let e = entry(e).map_err(|m| SnapshotFileError::Shape(format!("journal[{i}]: {m}")))?;
            journal.push(
                &e.op,
                e.context.as_ref(),
                &e.readings,
                &e.answer,
                &e.exchanges,
            );
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
    /// What the caller answered the guest's requests: `{"result"}` (JSON text) or `{"code",
    /// "message"}` each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    exchanges: Vec<ExchangeFile>,
}

#[derive(Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum ExchangeFile {
    Result { result: String },
    Error { code: i32, message: String },
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
    CallMcp {
        method: String,
        params: String,
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
        Op::CallMcp { method, params } => OpFile::CallMcp {
            method: method.clone(),
            params: params.clone(),
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
        exchanges: entry
            .exchanges
            .iter()
            .map(|e| match e {
                Ok(result) => ExchangeFile::Result {
                    result: result.clone(),
                },
                Err(e) => ExchangeFile::Error {
                    code: e.code,
                    message: e.message.clone(),
                },
            })
            .collect(),
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
        OpFile::CallMcp { method, params } => Op::CallMcp { method, params },
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
    let exchanges = file
        .exchanges
        .into_iter()
        .map(|e| match e {
            ExchangeFile::Result { result } => Ok(result),
            ExchangeFile::Error { code, message } => {
                Err(crate::call::ClientError { code, message })
            }
        })
        .collect();
    Ok(Entry {
        op,
        context,
        readings: file.readings,
        answer,
        exchanges,
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
        let asked = [
            Ok(r#"{"action":"accept"}"#.to_owned()),
            Err(crate::call::ClientError {
                code: -32601,
                message: "no sampling".into(),
            }),
        ];
        journal.push(&parts, None, &[Reading::Monotonic(5)], &[7; 32], &[]);
        journal.push(
            &call,
            Some(&same),
            &[Reading::Wall(1 << 60)],
            &[9; 32],
            &asked,
        );
        journal.push(&call, Some(&other), &[], &[3; 32], &[]);
        let snapshot = Snapshot {
            environment: "slack".into(),
            digest: "sha256:00".into(),
            seed: Seed::fresh(),
            tool_access: Rules::default(),
            journal,
        };
        let file = snapshot.to_file();
        assert!(String::from_utf8_lossy(&file).contains(r#""version":3"#));
        let back = Snapshot::from_file(&file).unwrap();
        assert_eq!(back.to_file(), file);
        assert_eq!(back.journal.hash(), AnswerHash::Blake3);
        assert_eq!(back.seed, snapshot.seed);
        let entries: Vec<Entry> = back.journal.entries().map(Result::unwrap).collect();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[1].context.as_ref(), Some(&same));
        assert_eq!(entries[2].context.as_ref(), Some(&other));
        assert_eq!(entries[1].readings, [Reading::Wall(1 << 60)]);
        assert_eq!(entries[1].exchanges, asked);
        assert!(entries[2].exchanges.is_empty());
        assert_eq!(
            snapshot
                .journal
                .entries()
                .nth(1)
                .unwrap()
                .unwrap()
                .exchanges,
            asked
        );
    }

    #[test]
    fn version_2_files_keep_their_sha256_digests() {
        let mut journal = Journal::with_hash(vec![], AnswerHash::Sha256);
        let done = Ok(crate::journal::Answer::Done);
        let answer = journal.digest(&done);
        journal.push(&Op::Reset, None, &[], &answer, &[]);
        let snapshot = Snapshot {
            environment: "slack".into(),
            digest: "sha256:00".into(),
            seed: Seed::fresh(),
            tool_access: Rules::default(),
            journal,
        };
        let file = snapshot.to_file();
        assert!(String::from_utf8_lossy(&file).contains(r#""version":2"#));
        let back = Snapshot::from_file(&file).unwrap();
        assert_eq!(back.journal.hash(), AnswerHash::Sha256);
        assert_eq!(back.journal.digest(&done), answer);
        assert_eq!(back.to_file(), file);
    }

    #[test]
    fn other_versions_and_shapes_are_refused() {
        for version in [1, 4] {
            let file = format!(r#"{{"format": "envhost-snapshot", "version": {version}}}"#);
            let refused = Snapshot::from_file(file.as_bytes()).unwrap_err();
            assert!(
                matches!(refused, SnapshotFileError::Version { version: v, .. } if v == version)
            );
            assert!(
                refused.to_string().contains("versions 2 and 3"),
                "{refused}"
            );
        }
        assert!(matches!(
            Snapshot::from_file(b"[]"),
            Err(SnapshotFileError::Shape(_))
        ));
    }
}
