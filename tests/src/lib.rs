//! Support for the integration tests: building the guests, serving them on loopback with the real
//! server, and talking to it with real clients (reqwest for HTTP, rmcp's MCP client).
//! [`load`] holds what the load clients (`mcp_load`, `episodes_bench`) share.

#![warn(missing_docs)]

pub mod broker;
pub mod load;
pub mod model;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use envhost::server;
use envhost::{EnvironmentConfig, Host, HostConfig};
use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lives in the repository")
        .to_path_buf()
}

/// Builds every guest in `guests/` for wasm32-wasip2 (once per process; cargo serialises
/// concurrent builds) and answers the path of component `name`.
pub fn guest(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let root = repo_root();
    BUILT.get_or_init(|| {
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--release",
                "--target",
                "wasm32-wasip2",
                "--manifest-path",
            ])
            .arg(root.join("guests/Cargo.toml"))
            .status()
            .expect("running cargo to build the guests");
        assert!(status.success(), "building the guests failed");
    });
    root.join(format!("guests/target/wasm32-wasip2/release/{name}.wasm"))
}

/// A host of guest `name` (loaded under that name) with default settings and room for 64
/// episodes.
pub fn config(name: &str) -> HostConfig {
    let mut config = HostConfig::new(vec![EnvironmentConfig::new(name, guest(name))]);
    config.max_episodes = 64;
    config
}

/// One episode's base URL, and requests to it.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// `http://127.0.0.1:<port>` or `http://127.0.0.1:<port>/episodes/<id>`, without a trailing
    /// slash.
    pub url: String,
}

impl Endpoint {
    /// The card, `GET /.well-known/agent-env.json`.
    pub async fn card(&self) -> Value {
        reqwest::get(format!("{}/.well-known/agent-env.json", self.url))
            .await
            .expect("GET the card")
            .json()
            .await
            .expect("a JSON card")
    }

    /// `POST /agentenv` of `{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}`;
    /// answers the JSON-RPC answer object.
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = reqwest::Client::new()
            .post(format!("{}/agentenv", self.url))
            .json(&body)
            .send()
            .await
            .expect("POST /agentenv");
        assert_eq!(response.status(), 200, "the data plane answers 200");
        response.json().await.expect("a JSON answer")
    }

    /// An MCP client session (rmcp's client over streamable HTTP), sending `AgentEnv-Role: role`
    /// when a role is given.
    pub async fn mcp(&self, role: Option<&str>) -> RunningService<rmcp::RoleClient, ()> {
        let mut headers = HashMap::new();
        if let Some(role) = role {
            headers.insert(
                reqwest::header::HeaderName::from_static("agentenv-role"),
                role.parse().expect("a header value"),
            );
        }
        let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", self.url))
            .custom_headers(headers);
        let transport = StreamableHttpClientTransport::from_config(config);
        ().serve(transport).await.expect("an MCP session")
    }
}

/// A server on 127.0.0.1 (an ephemeral port), on its own runtime thread; it stops when the
/// process ends. It derefs to its root episode's [`Endpoint`].
pub struct TestServer {
    /// The root episode.
    pub root: Endpoint,
    /// `http://127.0.0.1:<port>`
    pub url: String,
    /// The bound address.
    pub addr: SocketAddr,
    /// The host behind it.
    pub host: Arc<Host>,
}

impl std::ops::Deref for TestServer {
    type Target = Endpoint;

    fn deref(&self) -> &Endpoint {
        &self.root
    }
}

impl TestServer {
    /// Serves `config` (bodies up to 64 MiB, open to every caller) and waits until the port is
    /// open.
    pub fn start(config: HostConfig) -> anyhow::Result<Self> {
        Self::start_with(config, server::ServeConfig::default())
    }

    /// Serves `config` with bodies up to `max_body_bytes`.
    pub fn start_with_body_limit(
        config: HostConfig,
        max_body_bytes: usize,
    ) -> anyhow::Result<Self> {
        let serving = server::ServeConfig {
            max_body_bytes,
            ..server::ServeConfig::default()
        };
        Self::start_with(config, serving)
    }

    /// Serves `config` as `serving` says.
    pub fn start_with(config: HostConfig, serving: server::ServeConfig) -> anyhow::Result<Self> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a tokio runtime");
            rt.block_on(async move {
                let started = async {
                    let host = Arc::new(Host::new(config).await?);
                    let (router, state) = server::app(host.clone(), serving).await?;
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                    anyhow::Ok((host, router, state, listener))
                };
                match started.await {
                    Ok((host, router, state, listener)) => {
                        let addr = listener.local_addr().map_err(anyhow::Error::from);
                        let _ = tx.send(addr.map(|a| (a, host)));
                        let _ =
                            server::serve(listener, router, state, std::future::pending()).await;
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                    }
                }
            });
        });
        let (addr, host) = rx.recv()??;
        let url = format!("http://{addr}");
        Ok(Self {
            root: Endpoint { url: url.clone() },
            url,
            addr,
            host,
        })
    }

    /// Serves guest `name` with default settings.
    pub fn guest(name: &str) -> Self {
        Self::start(config(name)).expect("serving the guest")
    }

    /// `POST /episodes {"environment": environment}`: the status and the answer.
    pub async fn create_episode(&self, environment: &str) -> (u16, Value) {
        let response = reqwest::Client::new()
            .post(format!("{}/episodes", self.url))
            .json(&json!({"environment": environment}))
            .send()
            .await
            .expect("POST /episodes");
        let status = response.status().as_u16();
        (status, response.json().await.expect("a JSON answer"))
    }

    /// `GET /episodes`: the answer's `episodes` list.
    pub async fn list_episodes(&self) -> Vec<Value> {
        let listed: Value = reqwest::get(format!("{}/episodes", self.url))
            .await
            .expect("GET /episodes")
            .json()
            .await
            .expect("a JSON answer");
        listed["episodes"].as_array().expect("a list").clone()
    }

    /// A new episode of `environment`, as an endpoint.
    pub async fn new_episode(&self, environment: &str) -> Endpoint {
        let (status, answer) = self.create_episode(environment).await;
        assert_eq!(status, 201, "{answer}");
        self.endpoint(&answer)
    }

    /// The episode a `POST /episodes` answer (`created`) names, as an endpoint.
    pub fn endpoint(&self, created: &Value) -> Endpoint {
        let url = created["url"].as_str().expect("the episode's url");
        Endpoint {
            url: format!("{}{}", self.url, url.trim_end_matches('/')),
        }
    }
}
