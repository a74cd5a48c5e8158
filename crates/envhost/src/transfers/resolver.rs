//! The [`Resolver`]: file parts into bytes.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use futures::StreamExt;

use envhost_protocol::part::{FileContent, Part};
use envhost_runtime::bindings::agentenv::environment::types as wit;
use envhost_runtime::part_to_guest;

use super::egress::{self, Refused};
use super::objects::{self, ReadObject};
use super::policy::FetchPolicy;
use envhost_protocol::card::DATA_OBJECTS_URI;
use envhost_protocol::description::Object;

/// Where files may come from and how large they may be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferConfig {
    /// Directories `file://` URIs may name files under.
    pub data_roots: Vec<PathBuf>,
    /// The most bytes one file part may resolve to.
    pub max_file_bytes: u64,
    /// The whole-request timeout of an `http(s)://` fetch.
    pub http_timeout: Duration,
    /// Which hosts and addresses `http(s)://` fetches may reach.
    pub policy: FetchPolicy,
    /// PEM files of certificate authorities `https` requests trust besides the system's.
    pub ca_files: Vec<PathBuf>,
}

impl Default for TransferConfig {
    /// Roots `/data` and the OS temp dir, 64 MiB per file, 60 s per fetch, the built-in egress
    /// policy.
    fn default() -> Self {
        Self {
            data_roots: vec![PathBuf::from("/data"), std::env::temp_dir()],
            max_file_bytes: 64 << 20,
            http_timeout: Duration::from_secs(60),
            policy: FetchPolicy::default(),
            ca_files: Vec::new(),
        }
    }
}

/// Why a file part could not be resolved. Messages never carry a URL's query (signed URLs hold
/// credentials).
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// Inline bytes that are not base64.
    #[error("the file part's bytes are not base64")]
    NotBase64,
    /// A URI scheme this host does not fetch (the reference's message).
    #[error("unsupported file uri scheme '{0}': use file://, http:// or https://")]
    Scheme(String),
    /// A `file://` path outside every data root.
    #[error(
        "{path} is outside the allowed data roots ({roots}); add its directory with --data-root"
    )]
    OutsideRoots {
        /// The path.
        path: String,
        /// The roots, comma-separated.
        roots: String,
    },
    /// Reading a file failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A file or download over the size cap.
    #[error("{what} is over the {max}-byte limit")]
    TooLarge {
        /// The file or URL.
        what: String,
        /// The cap, in bytes.
        max: u64,
    },
    /// A fetch the egress policy refuses (serve.md#egress-policy).
    #[error("cannot fetch {url}: {refused}; the operator may allow it with --fetch-allow")]
    Refused {
        /// The URL without its query.
        url: String,
        /// The host and the rule that refused it.
        refused: Refused,
    },
    /// A read grant that is not one, or its transfer failed: `<code>: <message>`.
    #[error("{0}")]
    Grant(String),
    /// A fetch that failed or answered a non-2xx status.
    #[error("cannot fetch {url}: {detail}")]
    Http {
        /// The URL without its query.
        url: String,
        /// Why.
        detail: String,
    },
}

/// The read grant a file part names under the data-objects marker, `metadata[
/// "urn:agentenv:data-objects/v1"].read` (protocol.md#read-grants); none without one.
///
/// # Errors
/// [`TransferError::Grant`] for a grant that is not a `ReadObject`.
fn read_grant(metadata: Option<&Object>) -> Result<Option<ReadObject>, TransferError> {
    let Some(read) = metadata
        .and_then(|m| m.get(DATA_OBJECTS_URI))
        .and_then(|marker| marker.get("read"))
    else {
        return Ok(None);
    };
    serde_json::from_value(read.clone())
        .ok()
        .filter(ReadObject::is_valid)
        .map(Some)
        .ok_or_else(|| {
            TransferError::Grant("the part's read grant is not a valid ReadObject".into())
        })
}

/// An open data root, known by the path it was given as and by its canonical path (they differ
/// when the root is reached through a symlink, as the temp dir is on some systems).
struct Root {
    paths: [PathBuf; 2],
    dir: Dir,
}

impl Root {
    /// `path` relative to this root, when it lies under it.
    fn relative<'a>(&self, path: &'a Path) -> Option<&'a Path> {
        self.paths
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())
    }
}

/// Resolves file parts to bytes. Cheap to clone.
#[derive(Clone)]
pub struct Resolver {
    roots: Arc<Vec<Root>>,
    root_names: Arc<String>,
    max_file_bytes: u64,
    policy: Arc<FetchPolicy>,
    http: reqwest::Client,
    grants: reqwest::Client,
}

/// A URL for messages: scheme, host and path only.
fn redact(url: &url::Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    let _ = shown.set_password(None);
    let _ = shown.set_username("");
    shown.to_string()
}

impl Resolver {
    /// The HTTP client of `http(s)://` fetches, held to the egress policy.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The HTTP client of transfers through grants: held to the egress policy, following no
    /// redirect.
    pub fn grants(&self) -> &reqwest::Client {
        &self.grants
    }

    /// Opens the data roots that exist (each one once, as a capability) and builds the HTTP
    /// client.
    ///
    /// # Errors
    /// A message when the HTTP client cannot be built.
    pub fn new(config: &TransferConfig) -> Result<Self, String> {
        let mut roots = Vec::new();
        for path in &config.data_roots {
            let Ok(canonical) = path.canonicalize() else {
                tracing::debug!(root = %path.display(), "data root does not exist; skipped");
                continue;
            };
            match Dir::open_ambient_dir(&canonical, ambient_authority()) {
                Ok(dir) => roots.push(Root {
                    paths: [
                        std::path::absolute(path).unwrap_or_else(|_| path.clone()),
                        canonical,
                    ],
                    dir,
                }),
                Err(e) => {
                    tracing::warn!(root = %path.display(), error = %e, "cannot open data root")
                }
            }
        }
        let root_names = config
            .data_roots
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let policy = Arc::new(config.policy.clone());
        let mut authorities = Vec::new();
        for file in &config.ca_files {
            let pem = std::fs::read(file)
                .map_err(|e| format!("reading the CA file {}: {e}", file.display()))?;
            authorities.extend(reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                format!(
                    "the CA file {} holds no PEM certificate: {e}",
                    file.display()
                )
            })?);
        }
        let grants = egress::grant_client(policy.clone(), authorities.clone())
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let http = egress::client(policy.clone(), config.http_timeout, authorities)
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Self {
            roots: Arc::new(roots),
            root_names: Arc::new(root_names),
            max_file_bytes: config.max_file_bytes,
            policy,
            http,
            grants,
        })
    }

    /// The parts as the guest gets them: every file's content fetched into bytes.
    ///
    /// # Errors
    /// The first [`TransferError`]; nothing is handed to the guest then.
    pub async fn resolve_parts(&self, parts: Vec<Part>) -> Result<Vec<wit::Part>, TransferError> {
        let mut out = Vec::with_capacity(parts.len());
        for part in parts {
            let bytes = match &part {
                Part::File { file, metadata } => Some(match read_grant(metadata.as_ref())? {
                    Some(grant) => self.read_object(&grant).await?,
                    None => self.fetch(&file.content).await?,
                }),
                _ => None,
            };
            out.push(part_to_guest(part, bytes));
        }
        Ok(out)
    }

    /// The bytes of the object a read grant names, checked against its size and SHA-256 and
    /// held to the host's file-size cap too (protocol.md#read-grants).
    ///
    /// # Errors
    /// [`TransferError::Grant`] with the transfer's code and message.
    pub async fn read_object(&self, grant: &ReadObject) -> Result<Vec<u8>, TransferError> {
        let mut capped = grant.clone();
        capped.max_bytes = capped.max_bytes.min(self.max_file_bytes);
        objects::download(&self.grants, &capped)
            .await
            .map_err(|e| TransferError::Grant(e.to_string()))
    }

    /// The bytes of one file.
    ///
    /// # Errors
    /// [`TransferError`] as the source failed.
    pub async fn fetch(&self, content: &FileContent) -> Result<Vec<u8>, TransferError> {
        let uri = match content {
            FileContent::Bytes { bytes } => {
                let decoded = BASE64.decode(bytes).map_err(|_| TransferError::NotBase64)?;
                if decoded.len() as u64 > self.max_file_bytes {
                    return Err(TransferError::TooLarge {
                        what: "the file part's bytes".into(),
                        max: self.max_file_bytes,
                    });
                }
                return Ok(decoded);
            }
            FileContent::Uri { uri } => uri,
        };
        let url = url::Url::parse(uri).map_err(|_| TransferError::Scheme(String::new()))?;
        match url.scheme() {
            "file" => {
                let path = url.to_file_path().map_err(|()| TransferError::Io {
                    path: redact(&url),
                    source: std::io::Error::other("not a local file path"),
                })?;
                let this = self.clone();
                tokio::task::spawn_blocking(move || this.read_file(&path))
                    .await
                    .map_err(|e| TransferError::Io {
                        path: redact(&url),
                        source: std::io::Error::other(e.to_string()),
                    })?
            }
            "http" | "https" => self.download(&url).await,
            scheme => Err(TransferError::Scheme(scheme.to_owned())),
        }
    }

    /// Reads `path` through the first data root it lies under.
    fn read_file(&self, path: &Path) -> Result<Vec<u8>, TransferError> {
        let shown = path.display().to_string();
        let Some((root, relative)) = self
            .roots
            .iter()
            .find_map(|r| r.relative(path).map(|rel| (r, rel)))
        else {
            return Err(TransferError::OutsideRoots {
                path: shown,
                roots: self.root_names.to_string(),
            });
        };
        let io = |source| TransferError::Io {
            path: shown.clone(),
            source,
        };
        let file = root.dir.open(relative).map_err(io)?;
        let mut bytes = Vec::new();
        file.take(self.max_file_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > self.max_file_bytes {
            return Err(TransferError::TooLarge {
                what: shown,
                max: self.max_file_bytes,
            });
        }
        Ok(bytes)
    }

    async fn download(&self, url: &url::Url) -> Result<Vec<u8>, TransferError> {
        let shown = redact(url);
        let refused = |refused: Refused| TransferError::Refused {
            url: shown.clone(),
            refused,
        };
        egress::check_url(&self.policy, url).map_err(refused)?;
        let http = |detail: String| TransferError::Http {
            url: shown.clone(),
            detail,
        };
        let response =
            self.http
                .get(url.clone())
                .send()
                .await
                .map_err(|e| match Refused::find(&e) {
                    Some(refusal) => refused(refusal.clone()),
                    None => http(failure(e)),
                })?;
        let status = response.status();
        if !status.is_success() {
            return Err(http(format!("the server answered {status}")));
        }
        let mut bytes = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| http(failure(e)))?;
            bytes.extend_from_slice(&chunk);
            if bytes.len() as u64 > self.max_file_bytes {
                return Err(TransferError::TooLarge {
                    what: shown,
                    max: self.max_file_bytes,
                });
            }
        }
        Ok(bytes)
    }
}

/// A failed fetch's error and its causes on one line, without the URL, e.g. `error sending
/// request: client error (Connect): tcp connect error: Connection refused (os error 111)`: the
/// innermost cause is the one that says what went wrong.
fn failure(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut line = error.to_string();
    let mut cause = std::error::Error::source(&error);
    while let Some(next) = cause {
        let text = next.to_string();
        if !line.ends_with(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = next.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolver(root: &Path) -> Resolver {
        Resolver::new(&TransferConfig {
            data_roots: vec![root.to_path_buf()],
            max_file_bytes: 16,
            http_timeout: Duration::from_secs(1),
            policy: FetchPolicy::default(),
            ca_files: Vec::new(),
        })
        .unwrap()
    }

    fn uri(path: &Path) -> FileContent {
        FileContent::Uri {
            uri: url::Url::from_file_path(path).unwrap().to_string(),
        }
    }

    #[tokio::test]
    async fn files_are_read_only_under_the_roots() {
        let base = std::env::temp_dir().join(format!("envhost-resolver-{}", std::process::id()));
        let root = base.join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("seed.json"), b"{}").unwrap();
        std::fs::write(base.join("secret"), b"no").unwrap();
        std::fs::write(root.join("big"), [0u8; 17]).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(base.join("secret"), root.join("link")).unwrap();
        let r = resolver(&root);

        assert_eq!(r.fetch(&uri(&root.join("seed.json"))).await.unwrap(), b"{}");
        let outside = r.fetch(&uri(&base.join("secret"))).await.unwrap_err();
        assert!(
            matches!(outside, TransferError::OutsideRoots { .. }),
            "{outside}"
        );
        let dotdot = FileContent::Uri {
            uri: format!("file://{}/../secret", root.display()),
        };
        assert!(matches!(
            r.fetch(&dotdot).await,
            Err(TransferError::OutsideRoots { .. })
        ));
        #[cfg(unix)]
        assert!(matches!(
            r.fetch(&uri(&root.join("link"))).await,
            Err(TransferError::Io { .. })
        ));
        assert!(matches!(
            r.fetch(&uri(&root.join("big"))).await,
            Err(TransferError::TooLarge { .. })
        ));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_root_reached_through_a_symlink_serves_its_files() {
        let base = std::env::temp_dir().join(format!("envhost-rootlink-{}", std::process::id()));
        std::fs::create_dir_all(base.join("real")).unwrap();
        std::fs::write(base.join("real/seed.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let r = resolver(&base.join("link"));
        assert_eq!(
            r.fetch(&uri(&base.join("link/seed.json"))).await.unwrap(),
            b"{}"
        );
        assert_eq!(
            r.fetch(&uri(&base.join("real/seed.json"))).await.unwrap(),
            b"{}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[tokio::test]
    async fn inline_bytes_and_schemes() {
        let r = resolver(Path::new("/nonexistent"));
        let bytes = FileContent::Bytes {
            bytes: "e30=".into(),
        };
        assert_eq!(r.fetch(&bytes).await.unwrap(), b"{}");
        let bad = FileContent::Bytes {
            bytes: "not base64!".into(),
        };
        assert!(matches!(r.fetch(&bad).await, Err(TransferError::NotBase64)));
        let ftp = FileContent::Uri {
            uri: "ftp://example.com/x?sig=secret".into(),
        };
        let e = r.fetch(&ftp).await.unwrap_err().to_string();
        assert!(e.contains("unsupported") && !e.contains("secret"), "{e}");
    }

    #[tokio::test]
    async fn a_failed_connection_says_why() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let r = resolver(Path::new("/nonexistent"));
        let url = FileContent::Uri {
            uri: format!("http://127.0.0.1:{port}/seed.json?sig=secret"),
        };
        let e = r.fetch(&url).await.unwrap_err().to_string();
        assert!(e.contains("Connection refused"), "{e}");
        assert!(!e.contains("secret"), "{e}");
    }
}
