//! Support for the integration tests: building the guests, serving one on loopback with the real
//! server, and talking to it with real clients (reqwest for HTTP, rmcp's MCP client).

#![warn(missing_docs)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use envhost::runtime::Runtime;
use envhost::server::{self, ServeOptions};
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

/// A server on 127.0.0.1 (an ephemeral port) serving one environment, on its own runtime
/// thread; it stops when the process ends.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`
    pub url: String,
    /// The bound address.
    pub addr: SocketAddr,
}

impl TestServer {
    /// Serves `options` and waits until the port is open.
    pub fn start(options: ServeOptions) -> anyhow::Result<Self> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a tokio runtime");
            rt.block_on(async move {
                let started = async {
                    let runtime = Runtime::new()?;
                    let (router, _) = server::app(&runtime, &options).await?;
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                    anyhow::Ok((runtime, router, listener))
                };
                match started.await {
                    Ok((_runtime, router, listener)) => {
                        let addr = listener.local_addr().map_err(anyhow::Error::from);
                        let _ = tx.send(addr);
                        let _ = server::serve(listener, router, std::future::pending()).await;
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                    }
                }
            });
        });
        let addr = rx.recv()??;
        Ok(Self {
            url: format!("http://{addr}"),
            addr,
        })
    }

    /// Serves guest `name` with default options.
    pub fn guest(name: &str) -> Self {
        Self::start(ServeOptions::new(guest(name))).expect("serving the guest")
    }

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
        assert_eq!(response.status(), 200, "the data plane always answers 200");
        response.json().await.expect("a JSON answer")
    }

    /// An MCP client session (rmcp's client over streamable HTTP), sending `AgentEnv-Role: role`
    /// when a role is given.
    pub async fn mcp(&self, role: Option<&str>) -> RunningService<rmcp::RoleClient, ()> {
        let mut headers = HashMap::new();
        if let Some(role) = role {
            headers.insert(
                http_header("agentenv-role"),
                role.parse().expect("a header value"),
            );
        }
        let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", self.url))
            .custom_headers(headers);
        let transport = StreamableHttpClientTransport::from_config(config);
        ().serve(transport).await.expect("an MCP session")
    }
}

fn http_header(name: &'static str) -> reqwest::header::HeaderName {
    reqwest::header::HeaderName::from_static(name)
}
