//! The `upload` capability: `agentenv:environment/upload`, a `data/get` uploading its export
//! under the `write_namespace` grant its caller sent (protocol.md#exports). The checks are the
//! reference's `NamespaceUploader`'s, made here before any byte leaves: a normalized relative
//! path, at most `max_objects` distinct paths, `max_object_bytes` an object and
//! `max_total_bytes` in all (an overwritten path counted once, at its latest size). The call's
//! [`Namespace`](crate::call::Namespace) keeps the bytes and uploads them. The grant's limits and
//! every upload's answer are recorded for the journal; a replay answers from the record without
//! uploading again. The time spent uploading does not count against the call's CPU deadline.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{HasData, Linker};

use crate::bindings::agentenv::environment::upload;
use crate::call::{Exchange, Namespace, NamespaceLimits, Stored, TransferFailure};
use crate::capability::client::ClientView;

const INVALID: &str = "invalid_transfer";
const TOO_LARGE: &str = "transfer_too_large";

/// The export of the call being served: the grant's limits once asked, the objects uploaded
/// and the one begun.
#[derive(Default)]
pub struct Uploads {
    /// The grant's limits, once asked: `Some(None)` for a call without a grant.
    limits: Option<Option<NamespaceLimits>>,
    /// The latest size of each path uploaded.
    committed: BTreeMap<String, u64>,
    /// The object begun: its path and the bytes written so far.
    open: Option<(String, u64)>,
}

impl Uploads {
    /// Forgets the last call's export.
    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }
}

/// [`HasData`] for the `upload` capability: the [`ClientView`] of the call being served (its
/// peer, recorded answers and deadline), which the `client` capability uses too.
pub struct UploadData;

impl HasData for UploadData {
    type Data<'a> = ClientView<'a>;
}

/// Whether `path` is a normalized relative POSIX path, as the reference's `RelativePath`.
pub fn is_relative_path(path: &str) -> bool {
    !path.contains('\\') && path.split('/').all(|s| !matches!(s, "" | "." | ".."))
}

impl ClientView<'_> {
    /// The live namespace of the call, none in a replay or without a grant.
    fn namespace(&self) -> Option<Arc<dyn Namespace>> {
        self.context.peer().and_then(|peer| peer.namespace())
    }

    /// The grant's limits: asked once a call, recorded, and played back in a replay.
    fn limits(&mut self) -> Option<NamespaceLimits> {
        if let Some(limits) = self.context.uploads.limits {
            return limits;
        }
        let limits = match self.context.next_played() {
            Some(played) => played
                .and_then(Result::ok)
                .and_then(|json| serde_json::from_str(&json).ok()),
            None => {
                let limits = self.namespace().map(|n| n.limits());
                let json = serde_json::to_string(&limits).unwrap_or_else(|_| "null".into());
                self.context.record(Ok(json));
                limits
            }
        };
        self.context.uploads.limits = Some(limits);
        limits
    }

    /// Drops the object begun, here and in the namespace.
    fn abandon(&mut self) {
        self.context.uploads.open = None;
        if let Some(namespace) = self.namespace() {
            namespace.abandon();
        }
    }

    /// The answer of the upload of the object begun: played back, or the namespace's, recorded.
    async fn upload(&mut self) -> Result<Stored, TransferFailure> {
        if let Some(played) = self.context.next_played() {
            return played
                .and_then(Result::ok)
                .and_then(|json| serde_json::from_str(&json).ok())
                .unwrap_or_else(|| {
                    Err(TransferFailure::new(
                        INVALID,
                        "The replay recorded no answer to this upload.",
                    ))
                });
        }
        let answer = match self.namespace() {
            Some(namespace) => {
                let started = Instant::now();
                let answer = namespace.finish().await;
                self.deadline.shift(started.elapsed());
                answer
            }
            None => Err(no_grant()),
        };
        let exchange: Exchange = Ok(serde_json::to_string(&answer).unwrap_or_default());
        self.context.record(exchange);
        answer
    }
}

fn no_grant() -> TransferFailure {
    TransferFailure::new(
        INVALID,
        "No write_namespace grant came with the data/get being served.",
    )
}

fn to_wit(failure: TransferFailure) -> upload::TransferError {
    upload::TransferError {
        code: failure.code,
        message: failure.message,
        retryable: failure.retryable,
    }
}

impl upload::Host for ClientView<'_> {
    fn grant(&mut self) -> Option<upload::Namespace> {
        self.limits().map(|l| upload::Namespace {
            max_objects: l.max_objects,
            max_object_bytes: l.max_object_bytes,
            max_total_bytes: l.max_total_bytes,
        })
    }

    fn begin(&mut self, path: String) -> Result<(), upload::TransferError> {
        let limits = self.limits().ok_or_else(|| to_wit(no_grant()))?;
        self.abandon();
        if !is_relative_path(&path) {
            return Err(to_wit(TransferFailure::new(
                INVALID,
                "The namespace upload path is invalid.",
            )));
        }
        let committed = &self.context.uploads.committed;
        let objects = committed.len() as u64 + u64::from(!committed.contains_key(&path));
        if objects > limits.max_objects {
            return Err(to_wit(TransferFailure::new(
                TOO_LARGE,
                "The upload exceeds the namespace object limit.",
            )));
        }
        if let Some(namespace) = self.namespace() {
            namespace.begin(&path);
        }
        self.context.uploads.open = Some((path, 0));
        Ok(())
    }

    fn write(&mut self, bytes: Vec<u8>) -> Result<(), upload::TransferError> {
        let limits = self.limits().ok_or_else(|| to_wit(no_grant()))?;
        let uploads = &mut self.context.uploads;
        let Some((path, size)) = uploads.open.as_mut() else {
            return Err(to_wit(not_begun()));
        };
        *size += bytes.len() as u64;
        let others: u64 = uploads
            .committed
            .iter()
            .filter(|(p, _)| *p != path)
            .map(|(_, s)| s)
            .sum();
        let refused = if *size > limits.max_object_bytes {
            Some("The transfer exceeds its configured size limit.")
        } else if others + *size > limits.max_total_bytes {
            Some("The upload exceeds the namespace total-byte limit.")
        } else {
            None
        };
        if let Some(message) = refused {
            self.abandon();
            return Err(to_wit(TransferFailure::new(TOO_LARGE, message)));
        }
        if let Some(namespace) = self.namespace() {
            namespace.write(&bytes);
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<upload::Uploaded, upload::TransferError> {
        if self.limits().is_none() {
            return Err(to_wit(no_grant()));
        }
        let Some((path, size)) = self.context.uploads.open.take() else {
            return Err(to_wit(not_begun()));
        };
        let stored = self.upload().await.map_err(to_wit)?;
        self.context.uploads.committed.insert(path, size);
        Ok(upload::Uploaded {
            size_bytes: stored.size_bytes,
            sha256: stored.sha256,
        })
    }
}

fn not_begun() -> TransferFailure {
    TransferFailure::new(INVALID, "No object is begun: call begin first.")
}

/// Adds `agentenv:environment/upload` to `linker`, its view of a store's data reached through
/// `get`.
///
/// # Errors
/// wasmtime's, when the interface is defined twice.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> ClientView<'_>,
) -> wasmtime::Result<()> {
    upload::add_to_linker::<T, UploadData>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_the_references_relative_paths() {
        for good in ["a", "a/b.zip", "x..y/z", ".hidden"] {
            assert!(is_relative_path(good), "{good}");
        }
        for bad in ["", "/a", "a/", "a//b", "./a", "a/../b", "..", "a\\b"] {
            assert!(!is_relative_path(bad), "{bad}");
        }
    }
}
