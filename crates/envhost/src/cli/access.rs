//! Who may call a server `envhost serve` starts, and where it listens (docs/serve.md#access):
//! the operator token from `--control-token-file` or `ENVHOST_CONTROL_TOKEN`; without one,
//! loopback only unless `--insecure-no-auth`.

use std::net::{SocketAddr, ToSocketAddrs as _};
use std::path::Path;

use crate::server::Access;
use crate::server::access::ControlToken;
use anyhow::Context as _;

/// The environment variable that may hold the operator token.
pub const TOKEN_ENV: &str = "ENVHOST_CONTROL_TOKEN";

/// What the command line says of access.
pub struct AccessOptions<'a> {
    /// `--host` (or `MCP_HOST`).
    pub host: Option<&'a str>,
    /// `--port` (or `MCP_PORT`).
    pub port: u16,
    /// `--control-token-file`.
    pub token_file: Option<&'a Path>,
    /// `--insecure-no-auth`.
    pub insecure: bool,
}

/// Where to listen and who may call.
pub struct Binding {
    /// The address to bind, brackets removed.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The access every route is held to.
    pub access: Access,
    /// Whether a server without a token was let beyond loopback.
    insecure: bool,
}

/// The operator token: the file's, else the environment variable's; none when neither is
/// given.
fn token(file: Option<&Path>) -> anyhow::Result<Option<ControlToken>> {
    let from_env = std::env::var(TOKEN_ENV).ok();
    let (text, source) = match (file, from_env) {
        (Some(_), Some(_)) => anyhow::bail!(
            "the operator token is given twice, by --control-token-file and by {TOKEN_ENV}: give \
             one"
        ),
        (Some(path), None) => (
            std::fs::read_to_string(path)
                .with_context(|| format!("reading the operator token from {}", path.display()))?,
            path.display().to_string(),
        ),
        (None, Some(text)) => (text, TOKEN_ENV.to_owned()),
        (None, None) => return Ok(None),
    };
    ControlToken::new(&text)
        .map(Some)
        .with_context(|| format!("the operator token of {source}"))
}

/// Whether every address `host` names is a loopback address (`127.0.0.1`, `::1`,
/// `localhost`); false for a name that does not resolve.
fn is_loopback(host: &str, port: u16) -> bool {
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map(Iterator::collect)
        .unwrap_or_default();
    !addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback())
}

/// Decides the address and the access of a server.
///
/// # Errors
/// A token given twice, unreadable or too weak; a non-loopback address without a token or
/// `--insecure-no-auth`; `--insecure-no-auth` beside a token.
pub fn binding(options: &AccessOptions<'_>) -> anyhow::Result<Binding> {
    let token = token(options.token_file)?;
    let guarded = token.is_some();
    anyhow::ensure!(
        !(guarded && options.insecure),
        "--insecure-no-auth serves without the operator token, and a token is given: drop one"
    );
    let host = options
        .host
        .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned())
        .unwrap_or_else(|| if guarded { "0.0.0.0" } else { "127.0.0.1" }.to_owned());
    if !guarded && !options.insecure && !is_loopback(&host, options.port) {
        anyhow::bail!(
            "refusing to serve on {host} without an operator token: whoever reaches the port \
             would control every episode. Give a token (--control-token-file FILE, or \
             {TOKEN_ENV}; make one with `openssl rand -hex 32`), bind loopback (--host \
             127.0.0.1), or pass --insecure-no-auth to serve openly on purpose"
        );
    }
    Ok(Binding {
        host,
        port: options.port,
        access: token.map_or_else(Access::open, Access::guarded),
        insecure: options.insecure,
    })
}

impl Binding {
    /// Binds the listener.
    ///
    /// # Errors
    /// The bind's, a busy port naming `--port` and `MCP_PORT`.
    pub async fn listen(&self) -> anyhow::Result<tokio::net::TcpListener> {
        let (host, port) = (self.host.as_str(), self.port);
        tokio::net::TcpListener::bind((host, port))
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AddrInUse => anyhow::anyhow!(
                    "port {port} of {host} is taken by another program: serve on another with \
                     --port N (or MCP_PORT=N)"
                ),
                _ => anyhow::Error::new(e).context(format!("binding {host}:{port}")),
            })
    }

    /// Says at start who may call the server bound at `bound`.
    pub fn announce(&self, bound: SocketAddr) {
        if self.access.is_guarded() {
            tracing::info!(
                "the operator token guards every route but /ready and the agents' URLs \
                 (/agent/{{id}}/{{secret}}/: an episode's card and MCP)"
            );
        } else if self.insecure {
            tracing::warn!(
                "--insecure-no-auth: no operator token, so whoever reaches {bound} controls \
                 every episode"
            );
        } else {
            tracing::warn!(
                "no operator token: serving on loopback only ({bound}), every route open to this \
                 machine's programs; give --control-token-file FILE (or {TOKEN_ENV}) to guard \
                 the control routes and serve beyond loopback"
            );
        }
    }
}
