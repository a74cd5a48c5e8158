//! The chat model an agent is given (docs/agents.md#the-model): an OpenAI-compatible Chat
//! Completions endpoint (what vLLM, SGLang, LiteLLM and OpenAI serve), streamed. A request's
//! answer is read chunk by chunk: text, reasoning (`reasoning_content`), and tool calls, each
//! assembled from its streamed fragments. Dropping a [`ChatStream`] closes its connection, so a
//! caller that leaves aborts the request.

use std::collections::{BTreeMap, VecDeque};
use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::Eventsource as _;
use futures::{Stream, StreamExt as _};
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// Who a message is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The caller.
    User,
    /// The model.
    Assistant,
    /// A tool's answer.
    Tool,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
        }
    }
}

/// A tool call the model asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Its id, which the tool message answering it names.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments as JSON text (as the model wrote them; `{}` when it wrote none).
    pub args: String,
}

/// A message of the conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who it is from.
    pub role: Role,
    /// Its text.
    pub content: String,
    /// The tool calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
}

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSpec {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its input's JSON Schema, as JSON text.
    pub input_schema: String,
}

/// One completion request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatRequest {
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// The most tokens to generate; the endpoint's default when none.
    pub max_tokens: Option<u32>,
    /// The sampling temperature; the endpoint's default when none.
    pub temperature: Option<f32>,
}

/// A piece of the streamed answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chunk {
    /// Text of the answer.
    Text(String),
    /// Reasoning (`reasoning_content`).
    Thinking(String),
    /// A whole tool call.
    ToolCall(ToolCall),
}

/// Why the model could not answer (the `model-error` of `wit/agent`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// HTTP 429: try again after this many milliseconds (retryable).
    #[error("the model is rate limited; try again in {retry_after_ms} ms")]
    RateLimited {
        /// The endpoint's `Retry-After`, in ms (1,000 when it gave none).
        retry_after_ms: u64,
    },
    /// A 5xx answer, a failed connection or a broken stream (retryable).
    #[error("the model is unavailable: {0}")]
    Unavailable(String),
    /// Any other 4xx answer, or a request that cannot be made (not retryable).
    #[error("the model refused the request: {0}")]
    InvalidRequest(String),
}

impl ModelError {
    /// Whether trying again may succeed.
    pub fn retryable(&self) -> bool {
        !matches!(self, Self::InvalidRequest(_))
    }
}

/// The longest an error body is quoted in a [`ModelError`], in bytes.
const QUOTED_BYTES: usize = 300;

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request may wait for its answer's next bytes (the first token of a long prompt
/// included) before it is `unavailable`.
const READ_TIMEOUT: Duration = Duration::from_secs(300);

/// An OpenAI-compatible Chat Completions endpoint.
#[derive(Clone)]
pub struct ModelEndpoint {
    client: reqwest::Client,
    url: String,
    api_key: Option<String>,
}

impl std::fmt::Debug for ModelEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelEndpoint")
            .field("url", &self.url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl ModelEndpoint {
    /// The endpoint at `base_url` (its `/chat/completions` is called, e.g.
    /// `http://127.0.0.1:8000/v1`), with `api_key` as a bearer token when given.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when the HTTP client cannot be made.
    pub fn new(base_url: &str, api_key: Option<String>) -> Result<Self, ModelError> {
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .build()
            .map_err(|e| ModelError::InvalidRequest(format!("the HTTP client: {e}")))?;
        Ok(Self {
            client,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            api_key: api_key.filter(|k| !k.is_empty()),
        })
    }

    /// The endpoint the operator named: `url` (from `--model-url`), else `OPENAI_BASE_URL`,
    /// else `LITELLM_BASE_URL`, with the key of `OPENAI_API_KEY`, else `LITELLM_API_KEY`; none
    /// when no URL is set.
    ///
    /// # Errors
    /// As [`ModelEndpoint::new`].
    pub fn from_env(url: Option<String>) -> Result<Option<Self>, ModelError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let Some(base) = url
            .filter(|u| !u.is_empty())
            .or_else(|| var("OPENAI_BASE_URL"))
            .or_else(|| var("LITELLM_BASE_URL"))
        else {
            return Ok(None);
        };
        let key = var("OPENAI_API_KEY").or_else(|| var("LITELLM_API_KEY"));
        Self::new(&base, key).map(Some)
    }

    /// Starts a streamed completion of `request` by model `model`.
    ///
    /// # Errors
    /// [`ModelError::RateLimited`] for 429, [`ModelError::Unavailable`] for 5xx or a failed
    /// connection, [`ModelError::InvalidRequest`] for another 4xx or arguments that are not JSON.
    pub async fn complete(
        &self,
        model: &str,
        request: &ChatRequest,
    ) -> Result<ChatStream, ModelError> {
        let body = request_body(model, request)?;
        let mut post = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = &self.api_key {
            post = post.bearer_auth(key);
        }
        let response = post
            .send()
            .await
            .map_err(|e| ModelError::Unavailable(format!("{e}")))?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok());
            let text = response.text().await.unwrap_or_default();
            return Err(status_error(status, retry_after, &text));
        }
        Ok(ChatStream {
            events: Box::pin(response.bytes_stream().eventsource()),
            calls: BTreeMap::new(),
            ready: VecDeque::new(),
            ended: false,
        })
    }
}

/// The error of a non-2xx answer.
fn status_error(status: StatusCode, retry_after_s: Option<f64>, body: &str) -> ModelError {
    let quoted = quote(body);
    if status == StatusCode::TOO_MANY_REQUESTS {
        let retry_after_ms = retry_after_s
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(1_000, |s| (s * 1_000.0) as u64);
        ModelError::RateLimited { retry_after_ms }
    } else if status.is_server_error() {
        ModelError::Unavailable(format!("HTTP {}: {quoted}", status.as_u16()))
    } else {
        ModelError::InvalidRequest(format!("HTTP {}: {quoted}", status.as_u16()))
    }
}

fn quote(text: &str) -> String {
    let mut end = text.len().min(QUOTED_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].trim().to_owned()
}

/// A Chat Completions request body, borrowing from the [`ChatRequest`] it is made of.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    /// `null` for an assistant message made only of tool calls.
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireToolFunction<'a>,
}

#[derive(Serialize)]
struct WireToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a RawValue,
}

/// The Chat Completions body of `request`, as JSON bytes. The tools' schemas are checked to be
/// JSON and copied as they are.
fn request_body(model: &str, request: &ChatRequest) -> Result<Vec<u8>, ModelError> {
    let messages = request
        .messages
        .iter()
        .map(|m| WireMessage {
            role: m.role.as_str(),
            content: (!m.content.is_empty() || m.tool_calls.is_empty()).then_some(&*m.content),
            tool_calls: m
                .tool_calls
                .iter()
                .map(|c| WireCall {
                    id: &c.id,
                    kind: "function",
                    function: WireFunction {
                        name: &c.name,
                        arguments: &c.args,
                    },
                })
                .collect(),
            tool_call_id: m.tool_call_id.as_deref(),
        })
        .collect();
    let mut tools = Vec::with_capacity(request.tools.len());
    for tool in &request.tools {
        let parameters: &RawValue = serde_json::from_str(&tool.input_schema).map_err(|e| {
            ModelError::InvalidRequest(format!(
                "the input schema of {} is not JSON: {e}",
                tool.name
            ))
        })?;
        tools.push(WireTool {
            kind: "function",
            function: WireToolFunction {
                name: &tool.name,
                description: &tool.description,
                parameters,
            },
        });
    }
    let body = Body {
        model,
        messages,
        stream: true,
        tools,
        max_tokens: request.max_tokens,
        temperature: request.temperature,
    };
    serde_json::to_vec(&body)
        .map_err(|e| ModelError::InvalidRequest(format!("the request body: {e}")))
}

type Events = Pin<
    Box<
        dyn Stream<
                Item = Result<
                    eventsource_stream::Event,
                    eventsource_stream::EventStreamError<reqwest::Error>,
                >,
            > + Send,
    >,
>;

/// A tool call being streamed: its fragments so far.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    args: String,
}

/// A streaming answer.
pub struct ChatStream {
    events: Events,
    /// Tool calls being assembled, by their index in the answer.
    calls: BTreeMap<u64, PartialCall>,
    /// Chunks read but not handed out yet.
    ready: VecDeque<Chunk>,
    ended: bool,
}

impl ChatStream {
    /// The next chunk; `None` once the answer has ended (`[DONE]`, or the stream's end).
    ///
    /// # Errors
    /// [`ModelError::Unavailable`] for a broken stream, an `error` event, or data that is not
    /// a chunk.
    pub async fn next(&mut self) -> Result<Option<Chunk>, ModelError> {
        loop {
            if let Some(chunk) = self.ready.pop_front() {
                return Ok(Some(chunk));
            }
            if self.ended {
                return Ok(None);
            }
            match self.events.next().await {
                None => self.finish(),
                Some(Err(e)) => {
                    self.ended = true;
                    return Err(ModelError::Unavailable(format!("the stream broke: {e}")));
                }
                Some(Ok(event)) if event.data.trim() == "[DONE]" => self.finish(),
                Some(Ok(event)) => self.read(&event.data)?,
            }
        }
    }

    /// Ends the answer: the tool calls assembled so far are handed out.
    fn finish(&mut self) {
        self.flush_calls();
        self.ended = true;
    }

    fn flush_calls(&mut self) {
        for (_, call) in std::mem::take(&mut self.calls) {
            let args = if call.args.trim().is_empty() {
                "{}".to_owned()
            } else {
                call.args
            };
            self.ready.push_back(Chunk::ToolCall(ToolCall {
                id: call.id,
                name: call.name,
                args,
            }));
        }
    }

    /// Reads one event's data: a chunk of the answer, or an error.
    fn read(&mut self, data: &str) -> Result<(), ModelError> {
        let value: Value = serde_json::from_str(data).map_err(|e| {
            self.ended = true;
            ModelError::Unavailable(format!("the stream sent data that is not JSON: {e}"))
        })?;
        if let Some(error) = value.get("error") {
            self.ended = true;
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(ModelError::Unavailable(quote(&message)));
        }
        let Some(choice) = value
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(());
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        let text = |key: &str| {
            delta
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
        };
        if let Some(thinking) = text("reasoning_content").or_else(|| text("reasoning")) {
            self.ready.push_back(Chunk::Thinking(thinking.to_owned()));
        }
        if let Some(content) = text("content") {
            self.ready.push_back(Chunk::Text(content.to_owned()));
        }
        for fragment in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = fragment.get("index").and_then(Value::as_u64).unwrap_or(0);
            let call = self.calls.entry(index).or_default();
            if let Some(id) = fragment.get("id").and_then(Value::as_str) {
                call.id = id.to_owned();
            }
            if let Some(function) = fragment.get("function") {
                if let Some(name) = function.get("name").and_then(Value::as_str) {
                    call.name.push_str(name);
                }
                if let Some(args) = function.get("arguments").and_then(Value::as_str) {
                    call.args.push_str(args);
                }
            }
        }
        if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
            self.flush_calls();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_the_chat_completions_body() {
        let request = ChatRequest {
            messages: vec![
                Message {
                    role: Role::User,
                    content: "hi".into(),
                    tool_calls: Vec::new(),
                    tool_call_id: None,
                },
                Message {
                    role: Role::Assistant,
                    content: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "look".into(),
                        args: "{}".into(),
                    }],
                    tool_call_id: None,
                },
                Message {
                    role: Role::Tool,
                    content: "seen".into(),
                    tool_calls: Vec::new(),
                    tool_call_id: Some("c1".into()),
                },
            ],
            tools: vec![ToolSpec {
                name: "look".into(),
                description: "Looks.".into(),
                input_schema: r#"{"type":"object"}"#.into(),
            }],
            max_tokens: Some(64),
            temperature: None,
        };
        let body: Value = serde_json::from_slice(&request_body("m", &request).unwrap()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"model": "m", "stream": true, "max_tokens": 64, "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}]},
                {"role": "tool", "content": "seen", "tool_call_id": "c1"}],
              "tools": [{"type": "function", "function": {"name": "look", "description": "Looks.",
                "parameters": {"type": "object"}}}]})
        );
        let bad = ChatRequest {
            tools: vec![ToolSpec {
                name: "x".into(),
                description: String::new(),
                input_schema: "{".into(),
            }],
            ..ChatRequest::default()
        };
        assert!(matches!(
            request_body("m", &bad),
            Err(ModelError::InvalidRequest(_))
        ));
    }

    #[test]
    fn statuses_map_to_the_error_kinds() {
        assert_eq!(
            status_error(StatusCode::TOO_MANY_REQUESTS, Some(2.5), ""),
            ModelError::RateLimited {
                retry_after_ms: 2_500
            }
        );
        assert_eq!(
            status_error(StatusCode::TOO_MANY_REQUESTS, None, ""),
            ModelError::RateLimited {
                retry_after_ms: 1_000
            }
        );
        assert!(matches!(
            status_error(StatusCode::BAD_GATEWAY, None, "down"),
            ModelError::Unavailable(m) if m == "HTTP 502: down"
        ));
        let refused = status_error(StatusCode::BAD_REQUEST, None, "no such model");
        assert!(!refused.retryable());
        assert_eq!(
            refused.to_string(),
            "the model refused the request: HTTP 400: no such model"
        );
    }
}
