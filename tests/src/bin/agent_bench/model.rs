//! The bench's model: an OpenAI-compatible Chat Completions server on loopback that answers at
//! once, in a process of its own so that its CPU time is not the host's. A request whose
//! messages since the last user message hold fewer than `tools` tool answers gets a reasoning
//! delta and one `slack_send_message` call; otherwise a reasoning delta and the text `Done.`.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

fn frame(delta: &Value) -> String {
    let chunk = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
    format!("data: {chunk}\n\n")
}

/// The number of tool answers after the last user message of a request body.
fn tool_answers(body: &Value) -> usize {
    let Some(messages) = body["messages"].as_array() else {
        return 0;
    };
    messages
        .iter()
        .rev()
        .take_while(|m| m["role"] != "user")
        .filter(|m| m["role"] == "tool")
        .count()
}

async fn completions(State(tools): State<usize>, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let done = tool_answers(&body);
    let mut text = frame(&json!({"reasoning_content": "Looking."}));
    if done < tools {
        let args = json!({"channel": "general", "text": format!("note {done}")}).to_string();
        text.push_str(&frame(&json!({"tool_calls": [{
            "index": 0,
            "id": format!("call_{done}"),
            "type": "function",
            "function": {"name": "slack_send_message", "arguments": args},
        }]})));
    } else {
        text.push_str(&frame(&json!({"content": "Done."})));
    }
    text.push_str("data: [DONE]\n\n");
    ([("content-type", "text/event-stream")], text).into_response()
}

/// Serves the model on 127.0.0.1 until killed, printing its port on the first line of stdout.
pub fn serve(tools: usize) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        println!("{}", listener.local_addr()?.port());
        let app = Router::new()
            .route("/v1/chat/completions", post(completions))
            .with_state(tools);
        axum::serve(listener, app).await?;
        Ok(())
    })
}
