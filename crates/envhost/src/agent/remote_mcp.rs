//! An MCP server a turn's tools come from, reached over streamable HTTP with rmcp's client
//! (docs/agents.md#tools): connected on first use with the headers it was registered with,
//! through the host's egress-policed HTTP client, and connected again after it fails. Messages
//! name the server's origin only.

use std::collections::HashMap;

use http::{HeaderName, HeaderValue};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};
use tokio::sync::Mutex;

use super::toolbox::{Called, OfferedTool};

/// One MCP server over streamable HTTP.
pub struct RemoteMcp {
    url: String,
    headers: HashMap<HeaderName, HeaderValue>,
    http: reqwest::Client,
    session: Mutex<Option<RunningService<RoleClient, ()>>>,
}

/// `url`'s origin alone (`http://host:port`), for messages and logs: its path may hold a
/// secret (an agent URL's), its query a signature, its user-info a password.
fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) => parsed.origin().ascii_serialization(),
        Err(_) => "the server's URL".into(),
    }
}

impl RemoteMcp {
    /// `text` (an error's, which may quote the URL whole) with the URL put as its origin.
    fn redacted(&self, text: &str) -> String {
        let origin = shown(&self.url);
        let parsed = url::Url::parse(&self.url)
            .map(String::from)
            .unwrap_or_default();
        let mut text = text.replace(&self.url, &origin);
        if !parsed.is_empty() {
            text = text.replace(&parsed, &origin);
        }
        text
    }

    /// The server at `url`, sent `headers` with every request through `http`.
    pub fn new(
        url: String,
        headers: HashMap<HeaderName, HeaderValue>,
        http: reqwest::Client,
    ) -> Self {
        Self {
            url,
            headers,
            http,
            session: Mutex::new(None),
        }
    }

    /// Runs `call` on the session, opening one first when there is none or it has closed; a
    /// session whose call fails is dropped, so the next use connects again.
    async fn with_session<T, F>(&self, call: F) -> Result<T, String>
    where
        F: AsyncFnOnce(&RunningService<RoleClient, ()>) -> Result<T, rmcp::ServiceError>,
    {
        let mut session = self.session.lock().await;
        if session.as_ref().is_none_or(RunningService::is_closed) {
            let config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str())
                .custom_headers(self.headers.clone());
            let transport = StreamableHttpClientTransport::with_client(self.http.clone(), config);
            let opened = ()
                .serve(transport)
                .await
                .map_err(|e| self.redacted(&format!("connecting to {}: {e}", shown(&self.url))))?;
            *session = Some(opened);
        }
        let Some(open) = session.as_ref() else {
            return Err("no session".into());
        };
        match call(open).await {
            Ok(answer) => Ok(answer),
            Err(e) => {
                *session = None;
                Err(self.redacted(&format!("{}: {e}", shown(&self.url))))
            }
        }
    }

    /// Its tools (`tools/list`, every page).
    ///
    /// # Errors
    /// What went wrong, as text.
    pub async fn list(&self) -> Result<Vec<OfferedTool>, String> {
        let tools = self
            .with_session(async |s| s.peer().list_all_tools().await)
            .await?;
        Ok(tools
            .into_iter()
            .map(|t| OfferedTool {
                name: t.name.into_owned(),
                description: t.description.map(|d| d.into_owned()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()).to_string(),
            })
            .collect())
    }

    /// `tools/call` of `name` with `arguments`.
    ///
    /// # Errors
    /// What went wrong, as text, when the server gives no result.
    pub async fn call(&self, name: &str, arguments: Map<String, Value>) -> Result<Called, String> {
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        let result = self
            .with_session(async |s| s.peer().call_tool(params).await)
            .await?;
        Ok(Called {
            is_error: result.is_error.unwrap_or(false),
            content: serde_json::to_value(&result.content).unwrap_or(Value::Array(Vec::new())),
        })
    }
}
