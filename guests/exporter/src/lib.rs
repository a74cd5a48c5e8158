//! A fixture environment whose `data/get` uploads its export through the `write_namespace`
//! grant it is sent (`urn:agentenv:data-objects/v1`, protocol.md#exports). `data/add` of a data
//! part describes the export: `{"objects": [{"path", "size", "chunk"?, "fill"?}], "report"?}`,
//! each object `size` bytes of `fill` written `chunk` bytes at a time; its file parts (fetched by
//! the host, through read grants too) are kept as received. Without a grant, `data/get` answers
//! `{"plan": ..., "received": [{"name", "size", "text"}]}`. With one, it uploads every object and answers their parts; with
//! `report`, a last data part lists what each upload stored or the transfer error it met, instead
//! of failing the call at the first error.

use envhost_sdk::upload::{Namespace, TransferError, Uploaded, uploaded_file_part};
use envhost_sdk::{EnvError, FileSource, Part, environment};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One object of the export.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Object {
    /// Where, relative to the grant's root.
    path: String,
    /// Its size in bytes.
    size: u64,
    /// The bytes written at a time (64 KiB by default).
    #[serde(default = "default_chunk")]
    chunk: u64,
    /// The byte it is made of.
    #[serde(default)]
    fill: u8,
}

fn default_chunk() -> u64 {
    64 * 1024
}

/// The export `data/add` describes.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Plan {
    objects: Vec<Object>,
    #[serde(default)]
    report: bool,
}

/// The export described, and how many exports went through a grant.
#[derive(Default)]
pub struct Exporter {
    plan: Plan,
    exports: u64,
    received: Vec<Value>,
}

/// Uploads `object` under `grant`, written in its chunks.
fn upload(grant: &Namespace, object: &Object) -> Result<Uploaded, TransferError> {
    let mut writing = grant.begin(&object.path)?;
    let chunk = vec![object.fill; usize::try_from(object.chunk.max(1)).unwrap_or(usize::MAX)];
    let mut left = object.size;
    while left > 0 {
        let n = left.min(chunk.len() as u64);
        writing.write(&chunk[..n as usize])?;
        left -= n;
    }
    writing.finish()
}

#[environment(name = "exporter")]
impl Exporter {
    /// Answers how many `data/get` calls uploaded through a grant in this episode.
    #[tool(name = "exporter_exports")]
    fn exports(&self) -> u64 {
        self.exports
    }

    #[reset]
    fn reset(&mut self) {
        *self = Self::default();
    }

    #[add_data]
    fn add(&mut self, parts: Vec<Part>) -> Result<(), EnvError> {
        for part in parts {
            match part {
                Part::Data(data) => {
                    self.plan = data
                        .data
                        .read()
                        .map_err(|e| EnvError::new("invalid_part", e.to_string()))?;
                }
                Part::File(file) => {
                    let FileSource::Bytes(bytes) = file.file else {
                        return Err(EnvError::new("invalid_part", "a file arrives as bytes"));
                    };
                    self.received
                        .push(json!({"name": file.name, "size": bytes.len(),
                                              "text": String::from_utf8_lossy(&bytes)}));
                }
                Part::Text(_) => return Err(EnvError::new("invalid_part", "no text parts")),
            }
        }
        Ok(())
    }

    #[get_data]
    fn get(&mut self, grant: Option<Namespace>) -> Result<Vec<Part>, EnvError> {
        let Some(grant) = grant else {
            return Ok(vec![Part::data(
                json!({"plan": self.plan, "received": self.received}),
            )?]);
        };
        self.exports += 1;
        let mut parts = Vec::new();
        let mut report = Vec::new();
        for object in &self.plan.objects {
            match upload(&grant, object) {
                Ok(stored) => {
                    let name = object.path.rsplit('/').next();
                    parts.push(uploaded_file_part(
                        &object.path,
                        name,
                        Some("application/octet-stream"),
                    ));
                    report.push(json!({"path": object.path, "size_bytes": stored.size_bytes,
                                       "sha256": stored.sha256}));
                }
                Err(e) if self.plan.report => report.push(json!({"path": object.path, "error": {
                    "code": e.code, "message": e.message, "retryable": e.retryable}})),
                Err(e) => return Err(e.into()),
            }
        }
        if self.plan.report {
            let limits = json!({"max_objects": grant.max_objects,
                                "max_object_bytes": grant.max_object_bytes,
                                "max_total_bytes": grant.max_total_bytes});
            parts.push(Part::data(
                json!({"uploads": Value::Array(report), "limits": limits}),
            )?);
        }
        Ok(parts)
    }
}
