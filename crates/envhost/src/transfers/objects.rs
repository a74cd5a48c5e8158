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

impl ReadObject {
    /// Whether its fields hold what the reference's model requires: a concrete media type, a
    /// positive `max_bytes`, a known size within it, a SHA-256 of 64 lowercase hex digits, an
    /// `http-get` grant to an `https` URL until a UTC time.
    pub fn is_valid(&self) -> bool {
        let token = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-|~".contains(&b))
        };
        let media = self
            .media_type
            .split_once('/')
            .is_some_and(|(kind, sub)| token(kind) && token(sub));
        let digest = self.sha256.as_ref().is_none_or(|d| {
            d.len() == 64
                && d.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        media
            && self.max_bytes > 0
            && self.size_bytes.is_none_or(|s| s <= self.max_bytes)
            && digest
            && self.read.checked("http-get").is_ok()
    }
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
/// `transfer_timeout`; protocol.md#transfer-errors).
#[derive(Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct TransferError {
    /// Its code.
    pub code: &'static str,
    /// What went wrong, without the grant's URL.
    pub message: String,
    /// Whether trying again may succeed: the code's default, but a timeout only while its
    /// grant lasts.
    pub retryable: bool,
}

impl TransferError {
    pub(super) fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: matches!(code, "transfer_unavailable" | "transfer_timeout"),
        }
    }

    /// Its HTTP status and whether trying again may succeed, as the framework maps the code.
    pub fn status(&self) -> (u16, bool) {
        let status = match self.code {
            "invalid_transfer" => 400,
            "grant_expired" => 410,
            "transfer_too_large" => 413,
            "integrity_mismatch" => 422,
            "transfer_timeout" => 504,
            _ => 502,
        };
        (status, self.retryable)
    }

    /// `{"error": {"code", "message", "retryable"}}`.
    pub fn body(&self) -> Value {
        json!({"error": {"code": self.code, "message": self.message, "retryable": self.retryable}})
    }
}

/// The reference's message for a store that cannot be reached or answers it is busy.
pub(super) const UNAVAILABLE: &str = "The object store is temporarily unavailable.";

/// The reference's message for an object over its limit.
pub(super) const TOO_LARGE: &str = "The transfer exceeds its configured size limit.";

pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    sha256_hex_of(Sha256::new_with_prefix(bytes))
}

/// The lowercase hex of what `digest` has hashed.
pub(super) fn sha256_hex_of(digest: Sha256) -> String {
    use std::fmt::Write as _;
    digest
        .finalize()
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

/// What one attempt's failure means, for a grant expiring at `expires`: a refusal of the
/// egress policy, a timeout (retryable while the grant lasts), or a store out of reach.
pub(super) fn failure(error: &reqwest::Error, expires: DateTime<Utc>) -> TransferError {
    if let Some(refused) = super::egress::Refused::find(error) {
        return TransferError::new("transfer_rejected", refused.to_string());
    }
    if error.is_timeout() {
        TransferError {
            retryable: Utc::now() < expires,
            ..TransferError::new("transfer_timeout", "The object transfer timed out.")
        }
    } else {
        TransferError::new("transfer_unavailable", UNAVAILABLE)
    }
}

/// The marker of a stalled upload that S3 answers with a 400 rather than a 408.
const STALLED_UPLOAD: &[u8] = b"<Code>RequestTimeout</Code>";

/// The failure a store's answer means, none for a success: 408, 429, 5xx and S3's stalled
/// upload are `transfer_unavailable`, anything else (a redirect too) `transfer_rejected`.
pub(super) async fn answer_failure(answer: reqwest::Response) -> Option<TransferError> {
    let status = answer.status();
    if status.is_success() {
        return None;
    }
    let stalled = status == reqwest::StatusCode::BAD_REQUEST
        && answer.bytes().await.is_ok_and(|b| {
            b[..b.len().min(1024)]
                .windows(STALLED_UPLOAD.len())
                .any(|w| w == STALLED_UPLOAD)
        });
    if status.is_server_error()
        || status == reqwest::StatusCode::REQUEST_TIMEOUT
        || status == reqwest::StatusCode::TOO_MANY_REQUESTS
        || stalled
    {
        Some(TransferError::new("transfer_unavailable", UNAVAILABLE))
    } else {
        Some(TransferError::new(
            "transfer_rejected",
            "The object store rejected the transfer.",
        ))
    }
}

/// Runs `attempt` as the reference does: the grant must be unexpired before each attempt
/// (`grant_expired`), and a retryable failure is tried again after a jittered backoff (half to
/// all of 1 s, then of 2 s) while the grant lasts, [`ATTEMPTS`] attempts at most. An attempt
/// still running when the grant expires stops there, `transfer_timeout` (the reference waits for
/// its idle timeout, 60 s, to say the same).
pub(super) async fn retrying<T, F, Fut>(
    expires: DateTime<Utc>,
    mut attempt: F,
) -> Result<T, TransferError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, TransferError>>,
{
    let mut attempts = 1;
    loop {
        if Utc::now() >= expires {
            return Err(TransferError::new(
                "grant_expired",
                "The object-transfer grant has expired.",
            ));
        }
        let left = (expires - Utc::now()).to_std().unwrap_or_default();
        let outcome = tokio::time::timeout(left, attempt())
            .await
            .unwrap_or_else(|_| {
                Err(TransferError {
                    retryable: false,
                    ..TransferError::new("transfer_timeout", "The object transfer timed out.")
                })
            });
        match outcome {
            Ok(done) => return Ok(done),
            Err(e) if attempts == ATTEMPTS || !e.retryable || Utc::now() >= expires => {
                return Err(e);
            }
            Err(_) => {}
        }
        let full = BACKOFF * 2u32.pow(attempts - 1);
        tokio::time::sleep(full.mul_f64(rand::random_range(0.5..=1.0))).await;
        attempts += 1;
    }
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
        return Err(TransferError::new("transfer_too_large", TOO_LARGE));
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
            let answer = put.send().await.map_err(|e| failure(&e, expires))?;
            answer_failure(answer).await.map_or(Ok(()), Err)
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
            let mut answer = get.send().await.map_err(|e| failure(&e, expires))?;
            if !answer.status().is_success() {
                return Err(answer_failure(answer)
                    .await
                    .unwrap_or_else(|| TransferError::new("transfer_unavailable", UNAVAILABLE)));
            }
            let mut bytes = Vec::new();
            while let Some(chunk) = answer.chunk().await.map_err(|e| failure(&e, expires))? {
                bytes.extend_from_slice(&chunk);
                if bytes.len() as u64 > max_bytes {
                    return Err(TransferError::new("transfer_too_large", TOO_LARGE));
                }
            }
            Ok(bytes)
        }
    })
    .await?;
    if source.size_bytes.is_some_and(|s| s != bytes.len() as u64) {
        return Err(TransferError::new(
            "integrity_mismatch",
            "The downloaded object size does not match its descriptor.",
        ));
    }
    if source
        .sha256
        .as_ref()
        .is_some_and(|d| *d != sha256_hex(&bytes))
    {
        return Err(TransferError::new(
            "integrity_mismatch",
            "The downloaded object checksum does not match its descriptor.",
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
