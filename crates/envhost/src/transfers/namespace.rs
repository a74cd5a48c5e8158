//! Exports through a `write_namespace` grant (protocol.md#exports): the grant `data/get` takes
//! when its environment declares `urn:agentenv:data-objects/v1`, checked as the reference's
//! `WriteNamespaceGrant` model checks it, and the uploader that stores the objects the guest
//! writes under the grant's root with its presigned POST policy.
//!
//! The guest's bytes go to an unnamed file in the OS temp dir as it writes them (the host never
//! holds an object in memory), and are uploaded from there when the guest finishes the object,
//! as many times as the attempts need. The path and limit checks are the `upload` capability's
//! (`envhost_runtime::capability::upload`), made before anything reaches here.

use std::io::{Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;

use envhost_runtime::{Finishing, Namespace, NamespaceLimits, Stored, TransferFailure};

use super::objects::{TransferError, answer_failure, failure, retrying};

/// The size of the chunks an object is read back in for its upload.
const CHUNK_BYTES: usize = 64 * 1024;

/// A `write_namespace` grant (protocol.md#exports), checked.
#[derive(Clone)]
pub struct NamespaceGrant {
    root_path: String,
    expires_at: DateTime<Utc>,
    limits: NamespaceLimits,
    url: reqwest::Url,
    /// The policy's form fields, in order.
    fields: Vec<(String, String)>,
    path_field: String,
    file_field: String,
    headers: HeaderMap,
}

impl std::fmt::Debug for NamespaceGrant {
    /// Never the URL, the fields or the headers, which are credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamespaceGrant")
            .field("root_path", &self.root_path)
            .field("expires_at", &self.expires_at)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// A check of one field: `Ok` with its value, or the field's failure.
type Checked<T> = Result<T, ()>;

/// The fields of a closed model: each one is taken once, and what is left are the unknown
/// fields the reference refuses.
struct Fields<'a> {
    object: &'a Map<String, Value>,
    at: &'a str,
    errors: Vec<String>,
}

impl<'a> Fields<'a> {
    fn new(object: &'a Map<String, Value>, at: &'a str) -> Self {
        Self {
            object,
            at,
            errors: Vec::new(),
        }
    }

    fn location(&self, name: &str) -> String {
        if self.at.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.at)
        }
    }

    /// Field `name` checked with `check` (`None` when it is absent and `optional`).
    fn take<T>(
        &mut self,
        name: &str,
        optional: bool,
        check: impl FnOnce(&Value) -> Checked<T>,
    ) -> Option<T> {
        match self.object.get(name) {
            None if optional => None,
            Some(Value::Null) if optional => None,
            None => {
                self.errors.push(self.location(name));
                None
            }
            Some(value) => match check(value) {
                Ok(v) => Some(v),
                Err(()) => {
                    self.errors.push(self.location(name));
                    None
                }
            },
        }
    }

    /// The errors, the unknown fields among `known` added.
    fn finish(mut self, known: &[&str]) -> Vec<String> {
        for name in self.object.keys() {
            if !known.contains(&name.as_str()) {
                self.errors.push(self.location(name));
            }
        }
        self.errors
    }
}

fn string(value: &Value) -> Checked<String> {
    value.as_str().map(str::to_owned).ok_or(())
}

fn positive(value: &Value) -> Checked<u64> {
    value.as_u64().filter(|n| *n > 0).ok_or(())
}

fn https(value: &Value) -> Checked<reqwest::Url> {
    let url = reqwest::Url::parse(value.as_str().ok_or(())?).map_err(|_| ())?;
    (url.scheme() == "https" && url.host().is_some())
        .then_some(url)
        .ok_or(())
}

fn utc(value: &Value) -> Checked<DateTime<Utc>> {
    match value {
        Value::String(text) => DateTime::parse_from_rfc3339(text)
            .ok()
            .filter(|t| t.offset().local_minus_utc() == 0)
            .map(|t| t.with_timezone(&Utc))
            .ok_or(()),
        Value::Number(n) => n
            .as_i64()
            .and_then(|s| DateTime::from_timestamp(s, 0))
            .ok_or(()),
        _ => Err(()),
    }
}

fn relative_path(value: &Value) -> Checked<String> {
    let path = string(value)?;
    envhost_runtime::capability::upload::is_relative_path(&path)
        .then_some(path)
        .ok_or(())
}

/// A `{str: str}` object, in order; the location of its first bad entry otherwise.
fn string_map(value: &Value) -> Result<Vec<(String, String)>, Option<String>> {
    let object = value.as_object().ok_or(None)?;
    object
        .iter()
        .map(|(k, v)| {
            v.as_str()
                .map(|v| (k.clone(), v.to_owned()))
                .ok_or_else(|| Some(k.clone()))
        })
        .collect()
}

impl NamespaceGrant {
    /// The grant `value` describes, checked as the reference's `WriteNamespaceGrant`
    /// (protocol.md#exports): `root_path` a normalized relative path, `expires_at` RFC 3339 in
    /// UTC, the three limits positive integers, `write` an `http-post-policy` grant to an
    /// `https` URL; no field besides these.
    ///
    /// # Errors
    /// The dotted locations of every field that fails (`write.url`, ...), `write_namespace`
    /// alone for a value that is not an object.
    pub fn parse(value: &Value) -> Result<Self, Vec<String>> {
        let Some(object) = value.as_object() else {
            return Err(vec!["write_namespace".into()]);
        };
        let mut fields = Fields::new(object, "");
        let root_path = fields.take("root_path", false, relative_path);
        let expires_at = fields.take("expires_at", false, utc);
        let max_objects = fields.take("max_objects", false, positive);
        let max_object_bytes = fields.take("max_object_bytes", false, positive);
        let max_total_bytes = fields.take("max_total_bytes", false, positive);
        let mut write = None;
        let mut nested = Vec::new();
        match object.get("write") {
            Some(Value::Object(policy)) => match Policy::parse(policy) {
                Ok(policy) => write = Some(policy),
                Err(errors) => nested = errors,
            },
            _ => fields.errors.push("write".into()),
        }
        let mut errors = fields.finish(&[
            "root_path",
            "expires_at",
            "max_objects",
            "max_object_bytes",
            "max_total_bytes",
            "write",
        ]);
        let at = errors
            .iter()
            .position(|e| !is_known(e))
            .unwrap_or(errors.len());
        errors.splice(at..at, nested);
        match (
            root_path,
            expires_at,
            max_objects,
            max_object_bytes,
            max_total_bytes,
            write,
        ) {
            (Some(root_path), Some(expires_at), Some(o), Some(b), Some(t), Some(w))
                if errors.is_empty() =>
            {
                Ok(Self {
                    root_path,
                    expires_at,
                    limits: NamespaceLimits {
                        max_objects: o,
                        max_object_bytes: b,
                        max_total_bytes: t,
                    },
                    url: w.url,
                    fields: w.fields,
                    path_field: w.path_field,
                    file_field: w.file_field,
                    headers: w.headers,
                })
            }
            _ => Err(errors),
        }
    }

    /// The grant's limits.
    pub fn limits(&self) -> NamespaceLimits {
        self.limits
    }
}

/// Whether `location` names a field of the grant itself (the nested `write` errors go after
/// them, before the unknown fields, as pydantic orders them).
fn is_known(location: &str) -> bool {
    matches!(
        location,
        "root_path"
            | "expires_at"
            | "max_objects"
            | "max_object_bytes"
            | "max_total_bytes"
            | "write"
    )
}

/// An `http-post-policy` grant.
struct Policy {
    url: reqwest::Url,
    fields: Vec<(String, String)>,
    path_field: String,
    file_field: String,
    headers: HeaderMap,
}

impl Policy {
    fn parse(object: &Map<String, Value>) -> Result<Self, Vec<String>> {
        let mut fields = Fields::new(object, "write");
        let kind = fields.take("kind", false, |v| {
            (v.as_str() == Some("http-post-policy"))
                .then_some(())
                .ok_or(())
        });
        let url = fields.take("url", false, https);
        let mut bad_entries = Vec::new();
        let form = fields.take("fields", false, |v| {
            string_map(v).map_err(|entry| bad_entries.extend(entry))
        });
        let nonempty = |v: &Value| string(v).and_then(|s| (!s.is_empty()).then_some(s).ok_or(()));
        let path_field = fields.take("path_field", false, nonempty);
        let file_field = fields.take("file_field", false, nonempty);
        let headers = fields.take("headers", true, |v| {
            let entries = string_map(v).map_err(|_| ())?;
            let mut map = HeaderMap::new();
            for (name, value) in entries {
                let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| ())?;
                map.insert(name, HeaderValue::from_str(&value).map_err(|_| ())?);
            }
            Ok(map)
        });
        let mut errors = fields.finish(&[
            "kind",
            "url",
            "fields",
            "path_field",
            "file_field",
            "headers",
        ]);
        for entry in bad_entries {
            if let Some(at) = errors.iter().position(|e| e == "write.fields") {
                errors[at] = format!("write.fields.{entry}");
            }
        }
        match (kind, url, form, path_field, file_field) {
            (Some(()), Some(url), Some(fields), Some(path_field), Some(file_field))
                if errors.is_empty() =>
            {
                Ok(Self {
                    url,
                    fields,
                    path_field,
                    file_field,
                    headers: headers.unwrap_or_default(),
                })
            }
            _ => Err(errors),
        }
    }
}

/// The object begun: its path, and its bytes so far in an unnamed temporary file with their
/// count and SHA-256.
struct Spool {
    path: String,
    file: Option<std::io::BufWriter<std::fs::File>>,
    size_bytes: u64,
    digest: Sha256,
}

/// A file in the OS temp dir that no other process can open: created exclusively, then
/// unlinked at once.
fn unnamed_file() -> std::io::Result<std::fs::File> {
    let path = std::env::temp_dir().join(format!("envhost-export-{}", uuid::Uuid::new_v4()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// Uploads a `data/get`'s export under its grant: the [`Namespace`] of the `upload` capability.
pub struct NamespaceUploader {
    client: reqwest::Client,
    grant: NamespaceGrant,
    open: Mutex<Option<Spool>>,
    /// The runtime uploads run on: the server's, whose I/O driver the guests' runtime lacks.
    io: tokio::runtime::Handle,
}

impl NamespaceUploader {
    /// An uploader through `grant` with `client` (the grants' client, following no redirect),
    /// its uploads run on the current runtime.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn new(client: reqwest::Client, grant: NamespaceGrant) -> Arc<Self> {
        Arc::new(Self {
            client,
            grant,
            open: Mutex::new(None),
            io: tokio::runtime::Handle::current(),
        })
    }

    fn spool(&self) -> std::sync::MutexGuard<'_, Option<Spool>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl NamespaceGrant {
    /// The form's fields as the reference sends them: the policy's, then the object's key in
    /// `path_field` (in place of a field of that name), then `Content-Type` unless the policy
    /// has one.
    fn form_fields(&self, key: &str) -> Vec<(String, String)> {
        let grant = self;
        let mut fields = grant.fields.clone();
        match fields
            .iter_mut()
            .find(|(name, _)| *name == grant.path_field)
        {
            Some(field) => field.1 = key.to_owned(),
            None => fields.push((grant.path_field.clone(), key.to_owned())),
        }
        if !fields.iter().any(|(name, _)| name == "Content-Type") {
            fields.push(("Content-Type".into(), "application/octet-stream".into()));
        }
        fields
    }

    /// One attempt with `client`: the multipart POST of the object in `file`, `size_bytes` long.
    async fn post(
        &self,
        client: &reqwest::Client,
        key: &str,
        file: &std::fs::File,
        size_bytes: u64,
    ) -> Result<(), TransferError> {
        let read_failed =
            || TransferError::new("invalid_transfer", "The transfer source could not be read.");
        let mut reader = file.try_clone().map_err(|_| read_failed())?;
        reader.seek(SeekFrom::Start(0)).map_err(|_| read_failed())?;
        let reader = tokio::fs::File::from_std(reader);
        let chunks = futures::stream::unfold(reader, |mut reader| async move {
            let mut chunk = vec![0; CHUNK_BYTES];
            match reader.read(&mut chunk).await {
                Ok(0) => None,
                Ok(n) => {
                    chunk.truncate(n);
                    Some((Ok::<_, std::io::Error>(bytes::Bytes::from(chunk)), reader))
                }
                Err(e) => Some((Err(e), reader)),
            }
        })
        .boxed();
        let name = key.rsplit('/').next().unwrap_or(key).to_owned();
        let part = reqwest::multipart::Part::stream_with_length(
            reqwest::Body::wrap_stream(chunks),
            size_bytes,
        )
        .file_name(name)
        .mime_str("application/octet-stream")
        .map_err(|_| read_failed())?;
        let mut form = reqwest::multipart::Form::new();
        for (name, value) in self.form_fields(key) {
            form = form.text(name, value);
        }
        form = form.part(self.file_field.clone(), part);
        let answer = client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .multipart(form)
            .send()
            .await
            .map_err(|e| failure(&e, self.expires_at))?;
        answer_failure(answer).await.map_or(Ok(()), Err)
    }
}

fn to_failure(error: TransferError) -> TransferFailure {
    TransferFailure {
        code: error.code.to_owned(),
        message: error.message,
        retryable: error.retryable,
    }
}

impl Namespace for NamespaceUploader {
    fn limits(&self) -> NamespaceLimits {
        self.grant.limits
    }

    fn begin(&self, path: &str) {
        *self.spool() = Some(Spool {
            path: path.to_owned(),
            file: unnamed_file().ok().map(std::io::BufWriter::new),
            size_bytes: 0,
            digest: Sha256::new(),
        });
    }

    fn write(&self, bytes: &[u8]) {
        if let Some(spool) = self.spool().as_mut() {
            spool.size_bytes += bytes.len() as u64;
            spool.digest.update(bytes);
            if let Some(file) = spool.file.as_mut()
                && file.write_all(bytes).is_err()
            {
                spool.file = None;
            }
        }
    }

    fn abandon(&self) {
        *self.spool() = None;
    }

    fn finish(&self) -> Finishing {
        let spool = self.spool().take();
        let (client, grant) = (self.client.clone(), self.grant.clone());
        let upload = self.io.spawn(async move {
            let unreadable = || {
                TransferFailure::new("invalid_transfer", "The transfer source could not be read.")
            };
            let spool = spool.ok_or_else(unreadable)?;
            let file = spool
                .file
                .and_then(|f| f.into_inner().ok())
                .ok_or_else(unreadable)?;
            let key = format!("{}/{}", grant.root_path, spool.path);
            retrying(grant.expires_at, || {
                grant.post(&client, &key, &file, spool.size_bytes)
            })
            .await
            .map_err(to_failure)?;
            Ok(Stored {
                size_bytes: spool.size_bytes,
                sha256: super::objects::sha256_hex_of(spool.digest),
            })
        });
        Box::pin(async move {
            upload.await.unwrap_or_else(|_| {
                Err(TransferFailure::new(
                    "transfer_unavailable",
                    "The upload stopped before it finished.",
                ))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn grant() -> Value {
        json!({"root_path": "exports/abc", "expires_at": "2030-01-01T00:00:00Z",
               "max_objects": 2, "max_object_bytes": 10, "max_total_bytes": 15,
               "write": {"kind": "http-post-policy", "url": "https://store.test/bucket",
                         "fields": {"key": "x", "policy": "p"}, "path_field": "key",
                         "file_field": "file"}})
    }

    fn errors(value: Value) -> Vec<String> {
        NamespaceGrant::parse(&value).unwrap_err()
    }

    #[test]
    fn a_grant_parses_and_hides_its_secrets() {
        let parsed = NamespaceGrant::parse(&grant()).unwrap();
        assert_eq!(parsed.limits().max_total_bytes, 15);
        assert!(!format!("{parsed:?}").contains("store.test"));
    }

    #[test]
    fn every_bad_field_is_named_as_pydantic_locates_it() {
        assert_eq!(errors(json!([1])), ["write_namespace"]);
        assert_eq!(
            errors(json!({})),
            [
                "root_path",
                "expires_at",
                "max_objects",
                "max_object_bytes",
                "max_total_bytes",
                "write"
            ]
        );
        let mut bad = grant();
        bad["root_path"] = json!("/abs");
        bad["expires_at"] = json!("2030-01-01T00:00:00+02:00");
        bad["max_objects"] = json!(true);
        bad["write"]["url"] = json!("http://store.test/bucket");
        bad["write"]["fields"]["policy"] = json!(1);
        bad["write"]["kind"] = json!("http-put");
        bad["extra"] = json!(1);
        assert_eq!(
            errors(bad),
            [
                "root_path",
                "expires_at",
                "max_objects",
                "write.kind",
                "write.url",
                "write.fields.policy",
                "extra"
            ]
        );
    }

    #[test]
    fn the_objects_key_takes_the_path_fields_place() {
        let grant = NamespaceGrant::parse(&grant()).unwrap();
        assert_eq!(
            grant.form_fields("exports/abc/a.zip"),
            [
                ("key".to_owned(), "exports/abc/a.zip".to_owned()),
                ("policy".to_owned(), "p".to_owned()),
                (
                    "Content-Type".to_owned(),
                    "application/octet-stream".to_owned()
                ),
            ]
        );
    }
}
