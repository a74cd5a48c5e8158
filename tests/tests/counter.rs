//! The README's example environment builds, serves, and counts per role.

use envhost_tests::TestServer;
use rmcp::model::CallToolRequestParams;
use serde_json::json;

#[tokio::test]
async fn the_readme_example_counts_per_role() {
    let server = TestServer::guest("counter");
    let add = |by: i64| {
        let arguments = json!({"by": by}).as_object().cloned().unwrap();
        CallToolRequestParams::new("counter_add").with_arguments(arguments)
    };
    let alice = server.mcp(Some("alice")).await;
    alice.call_tool(add(2)).await.unwrap();
    let three = alice.call_tool(add(1)).await.unwrap();
    assert_eq!(three.structured_content, Some(json!({"result": 3})));
    let anonymous = server.mcp(None).await;
    anonymous.call_tool(add(-1)).await.unwrap();
    let counts = anonymous
        .call_tool(CallToolRequestParams::new("counter_counts"))
        .await
        .unwrap();
    assert_eq!(
        counts.structured_content,
        Some(json!({"alice": 3, "default": -1}))
    );
    let overflow = alice.call_tool(add(i64::MAX)).await.unwrap();
    assert_eq!(overflow.structured_content.unwrap()["code"], "overflow");
    server.rpc("data/reset", json!({})).await;
    let data = server.rpc("data/get", json!({})).await;
    assert_eq!(data["result"]["parts"][0]["data"], json!({"counts": {}}));
}

#[test]
fn the_readme_shows_the_example_whole() {
    let root = envhost_tests::repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let shown = readme
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("a rust code block in the README");
    let source = std::fs::read_to_string(root.join("guests/counter/src/lib.rs")).unwrap();
    assert_eq!(shown.trim_end(), source.trim_end());
}
