//! Uploading an export under the `write_namespace` grant of the `data/get` being served
//! (envhost's docs/protocol.md#exports), as the reference's `NamespaceUploader` does.
//!
//! A `#[get_data]` method that takes an `Option<Namespace>` declares
//! `urn:agentenv:data-objects/v1`; it is called with the caller's grant, or `None` when the
//! caller sent none. It uploads under the grant and answers [`uploaded_file_part`]s naming what
//! it uploaded; one that cannot use the grant (its export outgrows the limits, say) answers as it
//! would without one.
//!
//! ```no_run
//! use envhost_sdk::upload::{Namespace, uploaded_file_part};
//! use envhost_sdk::{EnvError, Part};
//!
//! fn export(grant: Option<Namespace>, bytes: &[u8]) -> Result<Vec<Part>, EnvError> {
//!     let Some(grant) = grant else {
//!         return Ok(vec![Part::file_bytes(bytes.to_vec(), Some("application/zip"), None)]);
//!     };
//!     let mut object = grant.begin("export.zip")?;
//!     for chunk in bytes.chunks(1 << 20) {
//!         object.write(chunk)?;
//!     }
//!     object.finish()?;
//!     Ok(vec![uploaded_file_part("export.zip", Some("export.zip"), Some("application/zip"))])
//! }
//! ```
//!
//! The host keeps the bytes out of the guest's memory and the episode's journal, enforces the
//! grant's limits before anything leaves (a path uploaded again counts once, at its latest
//! size), and tries an upload again while the grant lasts when the store is unavailable or slow.

use serde_json::{Map, json};

use crate::bindings::agentenv::environment::upload as host;
use crate::error::EnvError;
use crate::part::{FilePart, FileSource, Part};

/// The metadata key of an uploaded object's part, and the URI the environment declares.
pub const DATA_OBJECTS_EXTENSION_URI: &str = "urn:agentenv:data-objects/v1";

/// A failed upload, with the reference's transfer code: `invalid_transfer`, `grant_expired`,
/// `transfer_too_large`, `transfer_rejected`, `transfer_unavailable` or `transfer_timeout`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferError {
    /// The code.
    pub code: String,
    /// The reference's message; never the grant's URL.
    pub message: String,
    /// Whether another try may succeed.
    pub retryable: bool,
}

impl std::fmt::Display for TransferError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for TransferError {}

impl From<host::TransferError> for TransferError {
    fn from(e: host::TransferError) -> Self {
        Self {
            code: e.code,
            message: e.message,
            retryable: e.retryable,
        }
    }
}

impl From<TransferError> for EnvError {
    /// The failure as the `data/get` fails with it: its code, message and retryability.
    fn from(e: TransferError) -> Self {
        EnvError::new(e.code, e.message).retryable(e.retryable)
    }
}

/// What an upload stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uploaded {
    /// Its size in bytes.
    pub size_bytes: u64,
    /// Its SHA-256, 64 lowercase hex digits.
    pub sha256: String,
}

/// The `write_namespace` grant of the `data/get` being served: its limits, and the uploads
/// through it. Uploads go one at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    /// The most distinct paths that may be uploaded.
    pub max_objects: u64,
    /// The most bytes one object may have.
    pub max_object_bytes: u64,
    /// The most bytes of all objects together.
    pub max_total_bytes: u64,
}

/// The grant of the `data/get` being served; `None` when its caller sent none.
pub fn grant() -> Option<Namespace> {
    host::grant().map(|n| Namespace {
        max_objects: n.max_objects,
        max_object_bytes: n.max_object_bytes,
        max_total_bytes: n.max_total_bytes,
    })
}

impl Namespace {
    /// Uploads `bytes` at `path`, relative to the grant's root.
    ///
    /// # Errors
    /// [`TransferError`]: `invalid_transfer` for a path that is not a normalized relative one,
    /// `transfer_too_large` beyond a limit, `grant_expired`, and the store's refusals.
    pub fn upload(&self, path: &str, bytes: &[u8]) -> Result<Uploaded, TransferError> {
        let mut object = self.begin(path)?;
        object.write(bytes)?;
        object.finish()
    }

    /// Starts the object at `path`, to be written in chunks; an object begun and not finished is
    /// dropped (as is one begun before it).
    ///
    /// # Errors
    /// [`TransferError`] as for [`Namespace::upload`].
    pub fn begin(&self, path: &str) -> Result<Object, TransferError> {
        host::begin(path)?;
        Ok(Object { _private: () })
    }
}

/// An object being written under the grant.
#[derive(Debug)]
pub struct Object {
    _private: (),
}

impl Object {
    /// Appends `bytes`.
    ///
    /// # Errors
    /// `transfer_too_large` once the object outgrows a limit (it is then dropped).
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), TransferError> {
        Ok(host::write(bytes)?)
    }

    /// Uploads the object, and answers what was stored.
    ///
    /// # Errors
    /// `grant_expired`, and the store's refusals: `transfer_rejected`, `transfer_unavailable`,
    /// `transfer_timeout`.
    pub fn finish(self) -> Result<Uploaded, TransferError> {
        let uploaded = host::finish()?;
        Ok(Uploaded {
            size_bytes: uploaded.size_bytes,
            sha256: uploaded.sha256,
        })
    }
}

impl std::io::Write for Object {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        Object::write(self, bytes).map_err(std::io::Error::other)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The `data/get` part naming an object uploaded under the grant at `path`, relative to the
/// grant's root (the reference's `uploaded_file_part`).
pub fn uploaded_file_part(path: &str, name: Option<&str>, mime_type: Option<&str>) -> Part {
    let mut metadata = Map::new();
    metadata.insert(DATA_OBJECTS_EXTENSION_URI.into(), json!({"path": path}));
    Part::File(FilePart {
        file: FileSource::Uri(path.to_owned()),
        mime_type: mime_type.map(str::to_owned),
        name: name.map(str::to_owned),
        metadata: Some(metadata),
    })
}

/// The declaration `#[get_data]` adds for a method that takes the grant.
#[doc(hidden)]
pub fn declaration() -> crate::ExtensionInfo {
    crate::ExtensionInfo {
        uri: DATA_OBJECTS_EXTENSION_URI.into(),
        description: None,
        params: None,
        required: None,
        layout: crate::ExtensionLayout::Single,
        methods: Vec::new(),
    }
}
