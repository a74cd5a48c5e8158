//! A guest that traps, spins or exhausts its memory fails its own call only: the caller gets a
//! coded error within twice the CPU deadline, and the next call is served on a fresh instance.

use std::time::{Duration, Instant};

use envhost::runtime::Limits;
use envhost_tests::{TestServer, config};
use rmcp::model::CallToolRequestParams;
use serde_json::json;

const DEADLINE: Duration = Duration::from_millis(500);

fn faulty() -> TestServer {
    let mut config = config("faulty");
    config.environments[0].limits = Limits {
        memory_bytes: 64 << 20,
        cpu_deadline: DEADLINE,
        ..Limits::default()
    };
    TestServer::start(config).unwrap()
}

fn call(name: &str) -> CallToolRequestParams {
    let arguments = json!({"text": "hi"}).as_object().cloned().unwrap();
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

#[tokio::test]
async fn each_tool_fault_fails_only_its_call() {
    let server = faulty();
    let client = server.mcp(None).await;
    let first = client.call_tool(call("echo")).await.unwrap();
    assert_eq!(
        first.structured_content,
        Some(json!({"result": "hi (1 calls)"}))
    );
    for (tool, code) in [
        ("trap", "guest_trapped"),
        ("spin", "deadline_exceeded"),
        ("grow", "out_of_memory"),
    ] {
        let started = Instant::now();
        let failed = client.call_tool(call(tool)).await.unwrap();
        let took = started.elapsed();
        assert_eq!(failed.is_error, Some(true), "{tool}");
        let error = failed.structured_content.unwrap();
        assert_eq!(error["code"], code, "{tool}: {error}");
        assert_eq!(error["applied"], "no");
        assert!(took < 2 * DEADLINE, "{tool} answered after {took:?}");
        let next = client.call_tool(call("echo")).await.unwrap();
        assert_eq!(next.is_error, Some(false), "the call after {tool}");
    }
}

#[tokio::test]
async fn data_plane_faults_answer_32000() {
    let server = faulty();
    for fault in ["trap", "spin", "grow"] {
        let started = Instant::now();
        let answer = server
            .rpc(
                "data/add",
                json!({"parts": [{"kind": "data", "data": {"fault": fault}}]}),
            )
            .await;
        assert!(started.elapsed() < 2 * DEADLINE, "{fault}");
        assert_eq!(answer["error"]["code"], -32000, "{fault}");
        assert_eq!(answer["error"]["data"]["code"], "add_failed");
        let ok = server
            .rpc(
                "data/add",
                json!({"parts": [{"kind": "text", "text": "x"}]}),
            )
            .await;
        assert_eq!(ok["result"], json!({}), "the add after {fault}");
    }
}

#[tokio::test]
async fn a_spinning_call_does_not_stall_the_server() {
    let server = faulty();
    let client = server.mcp(None).await;
    let spin = client.call_tool(call("spin"));
    let card = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        let r = reqwest::get(format!("{}/.well-known/agent-env.json", server.url))
            .await
            .unwrap();
        (r.status(), started.elapsed())
    };
    let (spun, (status, took)) = tokio::join!(spin, card);
    assert_eq!(spun.unwrap().is_error, Some(true));
    assert_eq!(status, 200);
    assert!(
        took < Duration::from_millis(100),
        "the card took {took:?} while a guest spun"
    );
}

/// One MCP POST with plain reqwest (no client library between the test and the socket), so
/// that a timeout really closes the connection.
async fn mcp_post(
    server: &TestServer,
    session: Option<&str>,
    body: serde_json::Value,
    timeout: Duration,
) -> reqwest::Result<reqwest::Response> {
    let mut request = reqwest::Client::new()
        .post(format!("{}/mcp", server.url))
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .timeout(timeout);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await?.error_for_status()
}

#[tokio::test]
async fn a_caller_that_goes_away_does_not_cancel_the_call() {
    let server = faulty();
    let long = Duration::from_secs(5);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "test", "version": "1"}}});
    let opened = mcp_post(&server, None, init, long).await.unwrap();
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let call = |id: u32, name: &str, arguments: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    let slow = call(2, "slow", json!({"ms": 300}));
    let abandoned = mcp_post(&server, Some(&session), slow, Duration::from_millis(50)).await;
    assert!(
        abandoned.unwrap_err().is_timeout(),
        "the client gives up and closes its connection"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let echo = mcp_post(
        &server,
        Some(&session),
        call(3, "echo", json!({"text": "hi"})),
        long,
    );
    let body = echo.await.unwrap().text().await.unwrap();
    assert!(
        body.contains(r#""structuredContent":{"result":"hi (2 calls)"}"#),
        "the abandoned call ran to its end on the same instance: {body}"
    );
}
