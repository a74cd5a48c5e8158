//! Exact-object transfers through grants, as the agentenv framework makes them
//! (`agentenv_protocol.transfers`; docs/agent-env.md#object-transfers): a [`WriteObject`] is a
//! presigned `PUT` of one object, a [`ReadObject`] a presigned `GET`, both `https` only and
//! good until `expires_at`. Uploads and downloads go through the egress-policed client, follow no
//! redirect, are tried again while the grant lasts when the store is unavailable or slow (three
//! attempts at most), and fail with the framework's codes and statuses. A grant's URL is never
//! logged nor put in a message.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The most attempts one transfer makes.
const ATTEMPTS: u32 = 3;

/// The wait before the second attempt; doubled before the third.
const BACKOFF: Duration = Duration::from_secs(1);

/// A grant to `PUT` one object.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteObject {
    /// The object's media type (`application/json`, ...).
    pub media_type: String,
    /// The most bytes it may have.
    pub max_bytes: u64,
    /// Where and until when.
    pub write: Grant,
}

/// A grant to `GET` one object, with what its bytes must be.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadObject {
    /// The object's media type.
    pub media_type: String,
    /// The most bytes it may have.
    pub max_bytes: u64,
    /// Its size, when known.
    pub size_bytes: Option<u64>,
    /// Its SHA-256 (64 lowercase hex digits), when known.
    pub sha256: Option<String>,
    /// Where and until when.
    pub read: Grant,
}

/// A presigned request: its kind (`http-put` for a write, `http-get` for a read), URL,
/// expiry and headers.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// `http-put` or `http-get`.
    pub kind: String,
    /// An absolute `https` URL.
    pub url: String,
    /// When it stops working (RFC 3339, UTC).
    pub expires_at: String,
    /// Headers to send with it.
    pub headers: Option<BTreeMap<String, String>>,
}

impl std::fmt::Debug for Grant {
    /// Never the URL or the headers, which are credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grant")
            .field("kind", &self.kind)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// What an upload stored: its size and SHA-256.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Uploaded {
    /// Bytes stored.
    pub size_bytes: u64,
    /// Their SHA-256, 64 lowercase hex digits.
    pub sha256: String,
}

/// A transfer that failed, with the framework's code (`invalid_transfer`, `grant_expired`,
/// `transfer_too_large`, `integrity_mismatch`, `transfer_rejected`, `transfer_unavailable`,
/// `transfer_timeout`).
#[derive(Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct TransferError {
    /// Its code.
    pub code: &'static str,
    /// What went wrong, without the grant's URL.
    pub message: String,
}

impl TransferError {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// Its HTTP status and whether trying again may succeed, as the framework maps the code.
    pub fn status(&self) -> (u16, bool) {
        match self.code {
            "invalid_transfer" => (400, false),
            "grant_expired" => (410, false),
            "transfer_too_large" => (413, false),
            "integrity_mismatch" => (422, false),
            "transfer_unavailable" => (502, true),
            "transfer_timeout" => (504, true),
            _ => (502, false),
        }
    }

    /// `{"error": {"code", "message", "retryable"}}`.
    pub fn body(&self) -> Value {
        json!({"error": {"code": self.code, "message": self.message, "retryable": self.status().1}})
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
}

impl Grant {
    /// Its URL and expiry, checked: `https` with a host, RFC 3339 in UTC, of `kind`.
    fn checked(&self, kind: &str) -> Result<(reqwest::Url, DateTime<Utc>), TransferError> {
        if self.kind != kind {
            return Err(TransferError::new(
                "invalid_transfer",
                format!("the grant's kind must be {kind}"),
            ));
        }
        let url = reqwest::Url::parse(&self.url)
            .ok()
            .filter(|u| u.scheme() == "https" && u.host().is_some())
            .ok_or_else(|| {
                TransferError::new(
                    "invalid_transfer",
                    "the grant's url must be an absolute HTTPS URL",
                )
            })?;
        let expires = DateTime::parse_from_rfc3339(&self.expires_at)
            .ok()
            .filter(|t| t.offset().local_minus_utc() == 0)
            .ok_or_else(|| {
                TransferError::new(
                    "invalid_transfer",
                    "expires_at must be an RFC 3339 UTC timestamp",
                )
            })?;
        Ok((url, expires.with_timezone(&Utc)))
    }

    fn header_map(&self) -> Result<reqwest::header::HeaderMap, TransferError> {
        let mut map = reqwest::header::HeaderMap::new();
        for (name, value) in self.headers.iter().flatten() {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes());
            let value = reqwest::header::HeaderValue::from_str(value);
            let (Ok(name), Ok(value)) = (name, value) else {
                return Err(TransferError::new(
                    "invalid_transfer",
                    "a grant header cannot be sent",
                ));
            };
            map.insert(name, value);
        }
        Ok(map)
    }
}

/// What one attempt's failure means.
fn failure(error: &reqwest::Error) -> TransferError {
    if let Some(refused) = super::egress::Refused::find(error) {
        return TransferError::new("transfer_rejected", refused.to_string());
    }
    if error.is_timeout() {
        TransferError::new(
            "transfer_timeout",
            "The object store did not answer in time.",
        )
    } else {
        TransferError::new(
            "transfer_unavailable",
            "The object store is temporarily unavailable.",
        )
    }
}

/// The failure a store's status means, none for a success.
fn status_failure(status: reqwest::StatusCode) -> Option<TransferError> {
    if status.is_success() {
        None
    } else if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        Some(TransferError::new(
            "transfer_unavailable",
            "The object store is temporarily unavailable.",
        ))
    } else if status == reqwest::StatusCode::PAYLOAD_TOO_LARGE {
        Some(TransferError::new(
            "transfer_too_large",
            "The transfer exceeds its configured size limit.",
        ))
    } else {
        Some(TransferError::new(
            "transfer_rejected",
            format!(
                "The object store refused the transfer ({}).",
                status.as_u16()
            ),
        ))
    }
}

/// Runs `attempt` until it succeeds, fails for good, [`ATTEMPTS`] have been made or the grant
/// expiring at `expires` has run out.
async fn retrying<T, F, Fut>(expires: DateTime<Utc>, mut attempt: F) -> Result<T, TransferError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, TransferError>>,
{
    let mut wait = BACKOFF;
    let mut last = None;
    for _ in 0..ATTEMPTS {
        if Utc::now() >= expires {
            break;
        }
        match attempt().await {
            Ok(done) => return Ok(done),
            Err(e) if e.status().1 => last = Some(e),
            Err(e) => return Err(e),
        }
        tokio::time::sleep(wait).await;
        wait *= 2;
    }
    Err(last
        .unwrap_or_else(|| TransferError::new("grant_expired", "The transfer grant has expired.")))
}

/// Uploads `bytes` through `target`.
///
/// # Errors
/// [`TransferError`]: `invalid_transfer` for a grant that is not one, `transfer_too_large` for
/// more than `max_bytes`, `grant_expired`, and what the store answers.
pub async fn upload(
    client: &reqwest::Client,
    target: &WriteObject,
    bytes: Vec<u8>,
) -> Result<Uploaded, TransferError> {
    let (url, expires) = target.write.checked("http-put")?;
    let size = bytes.len() as u64;
    if size > target.max_bytes {
        return Err(TransferError::new(
            "transfer_too_large",
            "The transfer exceeds its configured size limit.",
        ));
    }
    let mut headers = target.write.header_map()?;
    if !headers.contains_key(reqwest::header::CONTENT_TYPE) {
        let media = reqwest::header::HeaderValue::from_str(&target.media_type).map_err(|_| {
            TransferError::new(
                "invalid_transfer",
                "media_type must be a concrete MIME type",
            )
        })?;
        headers.insert(reqwest::header::CONTENT_TYPE, media);
    }
    let body = bytes::Bytes::from(bytes);
    let uploaded = Uploaded {
        size_bytes: size,
        sha256: sha256_hex(&body),
    };
    retrying(expires, || {
        let put = client
            .put(url.clone())
            .headers(headers.clone())
            .body(body.clone());
        async move {
            let answer = put.send().await.map_err(|e| failure(&e))?;
            status_failure(answer.status()).map_or(Ok(()), Err)
        }
    })
    .await?;
    Ok(uploaded)
}

/// Downloads the object `source` grants, checked against its `max_bytes`, `size_bytes` and
/// `sha256`.
///
/// # Errors
/// [`TransferError`] as for [`upload`], and `integrity_mismatch` for bytes that are not the
/// object described.
pub async fn download(
    client: &reqwest::Client,
    source: &ReadObject,
) -> Result<Vec<u8>, TransferError> {
    let (url, expires) = source.read.checked("http-get")?;
    let mut headers = source.read.header_map()?;
    headers.insert(
        reqwest::header::ACCEPT_ENCODING,
        reqwest::header::HeaderValue::from_static("identity"),
    );
    let max_bytes = source.max_bytes;
    let bytes = retrying(expires, || {
        let get = client.get(url.clone()).headers(headers.clone());
        async move {
            let mut answer = get.send().await.map_err(|e| failure(&e))?;
            if let Some(failed) = status_failure(answer.status()) {
                return Err(failed);
            }
            let mut bytes = Vec::new();
            while let Some(chunk) = answer.chunk().await.map_err(|e| failure(&e))? {
                bytes.extend_from_slice(&chunk);
                if bytes.len() as u64 > max_bytes {
                    return Err(TransferError::new(
                        "transfer_too_large",
                        "The transfer exceeds its configured size limit.",
                    ));
                }
            }
            Ok(bytes)
        }
    })
    .await?;
    let size_differs = source.size_bytes.is_some_and(|s| s != bytes.len() as u64);
    let digest_differs = source
        .sha256
        .as_ref()
        .is_some_and(|d| *d != sha256_hex(&bytes));
    if size_differs || digest_differs {
        return Err(TransferError::new(
            "integrity_mismatch",
            "The transferred object does not match its size or checksum.",
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(kind: &str, url: &str, expires_at: &str) -> Grant {
        Grant {
            kind: kind.into(),
            url: url.into(),
            expires_at: expires_at.into(),
            headers: None,
        }
    }

    #[test]
    fn grants_are_https_utc_and_of_their_kind() {
        let ok = grant(
            "http-put",
            "https://store.example/o?sig=1",
            "2030-01-01T00:00:00Z",
        );
        assert!(ok.checked("http-put").is_ok());
        for (bad, kind) in [
            (
                grant("http-put", "http://store.example/o", "2030-01-01T00:00:00Z"),
                "http-put",
            ),
            (
                grant(
                    "http-put",
                    "https://store.example/o",
                    "2030-01-01T00:00:00+02:00",
                ),
                "http-put",
            ),
            (
                grant("http-put", "https://store.example/o", "tomorrow"),
                "http-put",
            ),
            (
                grant(
                    "http-get",
                    "https://store.example/o",
                    "2030-01-01T00:00:00Z",
                ),
                "http-put",
            ),
        ] {
            assert_eq!(bad.checked(kind).unwrap_err().code, "invalid_transfer");
        }
        assert!(!format!("{ok:?}").contains("sig"));
    }

    #[test]
    fn codes_map_to_the_frameworks_statuses() {
        let status = |code| TransferError::new(code, "").status();
        assert_eq!(status("grant_expired"), (410, false));
        assert_eq!(status("transfer_unavailable"), (502, true));
        assert_eq!(status("transfer_timeout"), (504, true));
        assert_eq!(sha256_hex(b"").len(), 64);
    }
}
