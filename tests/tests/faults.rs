//! A guest that traps, spins or exhausts its memory fails its own call only: the caller gets a
//! coded error within twice the CPU deadline, and the next call is served on a fresh instance.

use std::time::{Duration, Instant};

use envhost::runtime::Limits;
use envhost::server::ServeOptions;
use envhost_tests::{TestServer, guest};
use rmcp::model::CallToolRequestParams;
use serde_json::json;

const DEADLINE: Duration = Duration::from_millis(500);

fn faulty() -> TestServer {
    let mut options = ServeOptions::new(guest("faulty"));
    options.limits = Limits {
        memory_bytes: 64 << 20,
        cpu_deadline: DEADLINE,
    };
    TestServer::start(options).unwrap()
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
        assert_eq!(error["applied"], "unknown");
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
