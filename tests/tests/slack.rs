//! The slack guest served by envhost over real loopback HTTP: card, data plane, MCP with rmcp's
//! client, roles, tool access, extensions, and the name override.

use envhost_tests::{TestServer, config};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

async fn seed(server: &TestServer) {
    let seed = json!({"parts": [{"kind": "data", "data": {
        "channels": [{"name": "general", "topic": "talk"}, {"name": "random"}],
        "messages": [{"channel": "general", "text": "hello", "to": "bob"}],
    }}]});
    assert_eq!(
        server.rpc("data/reset", json!({})).await["result"],
        json!({})
    );
    assert_eq!(server.rpc("data/add", seed).await["result"], json!({}));
}

async fn state(server: &TestServer) -> Value {
    server.rpc("data/get", json!({})).await["result"]["parts"][0]["data"].clone()
}

#[tokio::test]
async fn the_card_describes_tools_extensions_and_operations() {
    let server = TestServer::guest("slack");
    let card = server.card().await;
    assert_eq!(card["name"], "slack");
    assert_eq!(card["url"], "/agentenv");
    assert_eq!(
        card["additionalInterfaces"],
        json!([{"url": "/mcp", "transport": "mcp"}])
    );
    let tools: Vec<&str> = card["capabilities"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "slack_admin_purge",
            "slack_list_channels",
            "slack_list_inbox",
            "slack_send_message"
        ]
    );
    assert_eq!(
        card["capabilities"]["operations"],
        json!(["data/reset", "data/add", "data/get"])
    );
    let uris: Vec<&str> = card["capabilities"]["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "urn:example:slack-stats/v1",
            "urn:agentenv:disable-tool/v1",
            "urn:agentenv:enable-tool/v1"
        ]
    );
    assert_eq!(
        card["capabilities"]["extensions"][0]["params"]["methods"]["set-topic"]["endpoint"],
        "/agentenv/ext/example/slack-stats/set-topic"
    );
    assert_eq!(card["children_environments"], Value::Null);
}

#[tokio::test]
async fn data_add_is_additive_and_all_or_nothing() {
    let server = TestServer::guest("slack");
    seed(&server).await;
    let more = json!({"parts": [{"kind": "data", "data": {
        "channels": [{"name": "general", "topic": "new topic"}],
        "messages": [{"channel": "random", "text": "second"}]}}]});
    assert_eq!(server.rpc("data/add", more).await["result"], json!({}));
    let bad = json!({"parts": [
        {"kind": "data", "data": {"channels": [{"name": "extra"}]}},
        {"kind": "data", "data": {"messages": [{"channel": "nope", "text": "x"}]}}]});
    let answer = server.rpc("data/add", bad).await;
    assert_eq!(answer["error"]["code"], -32000);
    assert_eq!(answer["error"]["data"]["code"], "add_failed");
    assert_eq!(
        answer["error"]["message"],
        "messages[0] names unknown channel 'nope'"
    );
    assert_eq!(
        state(&server).await,
        json!({
            "channels": [{"name": "general", "topic": "new topic"}, {"name": "random", "topic": ""}],
            "messages": [
                {"channel": "general", "text": "hello", "from": null, "to": "bob"},
                {"channel": "random", "text": "second", "from": null, "to": null}]
        })
    );
    server.rpc("data/reset", json!({})).await;
    assert_eq!(
        state(&server).await,
        json!({"channels": [], "messages": []})
    );
}

#[tokio::test]
async fn the_envelope_errors_have_the_reference_codes() {
    let server = TestServer::guest("slack");
    let post = |body: &'static str| {
        let url = format!("{}/agentenv", server.url);
        async move {
            let r = reqwest::Client::new()
                .post(url)
                .body(body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            r.json::<Value>().await.unwrap()
        }
    };
    assert_eq!(post("{").await["error"]["code"], -32700);
    assert_eq!(post("[1]").await["error"]["code"], -32600);
    let unknown = post(r#"{"jsonrpc": "2.0", "id": 9, "method": "data/nope"}"#).await;
    assert_eq!(
        unknown["error"],
        json!({"code": -32601, "message": "method not found: data/nope"})
    );
    assert_eq!(unknown["id"], 9);
    let empty = server.rpc("data/add", json!({"parts": []})).await;
    assert_eq!(empty["error"]["code"], -32602);
    assert_eq!(empty["error"]["message"], "invalid_request");
}

#[tokio::test]
async fn mcp_tools_follow_the_caller_role() {
    let server = TestServer::guest("slack");
    seed(&server).await;
    let alice = server.mcp(Some("alice")).await;
    let names: Vec<String> = alice
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "slack_list_channels",
            "slack_list_inbox",
            "slack_send_message"
        ]
    );

    let sent = alice
        .call_tool(call(
            "slack_send_message",
            json!({"channel": "general", "text": "hi", "to": "bob"}),
        ))
        .await
        .unwrap();
    assert_eq!(sent.is_error, Some(false));
    assert_eq!(sent.structured_content, Some(json!({"result": "ok"})));

    let bob = server.mcp(Some("bob")).await;
    let inbox = bob
        .call_tool(call("slack_list_inbox", json!({})))
        .await
        .unwrap();
    let inbox = &inbox.structured_content.unwrap()["result"];
    assert_eq!(inbox.as_array().unwrap().len(), 2);
    assert_eq!(
        inbox[1],
        json!({"channel": "general", "text": "hi", "from": "alice", "to": "bob"})
    );

    let missing = alice
        .call_tool(call(
            "slack_send_message",
            json!({"channel": "nope", "text": "x"}),
        ))
        .await
        .unwrap();
    assert_eq!(missing.is_error, Some(true));
    assert_eq!(
        missing.structured_content.unwrap()["code"],
        "channel_not_found"
    );

    let invalid = alice
        .call_tool(call("slack_send_message", json!({"channel": 1})))
        .await
        .unwrap();
    assert_eq!(invalid.is_error, Some(true));
    assert!(invalid.structured_content.is_none());

    let unknown = alice.call_tool(call("nope", json!({}))).await.unwrap();
    assert_eq!(unknown.is_error, Some(true));
}

#[tokio::test]
async fn hidden_tools_need_a_grant() {
    let server = TestServer::guest("slack");
    seed(&server).await;
    let admin = server.mcp(Some("admin")).await;
    let refused = admin
        .call_tool(call("slack_admin_purge", json!({"channel": "general"})))
        .await
        .unwrap();
    assert_eq!(
        refused.structured_content.unwrap()["code"],
        "permission_denied"
    );

    let grant = reqwest::Client::new()
        .post(format!("{}/tools/enable", server.url))
        .json(&json!({"role": "admin", "tools": ["slack_admin_purge"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        grant.json::<Value>().await.unwrap(),
        json!({"role": "admin", "disabled": [], "allowed": ["slack_admin_purge"]})
    );
    let purged = admin
        .call_tool(call("slack_admin_purge", json!({"channel": "general"})))
        .await
        .unwrap();
    assert_eq!(purged.structured_content, Some(json!({"result": 1})));
    let others = server.mcp(None).await.list_all_tools().await.unwrap();
    assert!(others.iter().all(|t| t.name != "slack_admin_purge"));

    let bad = reqwest::Client::new()
        .post(format!("{}/tools/disable", server.url))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert_eq!(
        bad.json::<Value>().await.unwrap()["error"]["code"],
        "invalid_params"
    );
}

#[tokio::test]
async fn one_session_answers_concurrent_calls() {
    let server = TestServer::guest("slack");
    seed(&server).await;
    let client = server.mcp(Some("alice")).await;
    let calls = (0..32).map(|i| {
        client.call_tool(call(
            "slack_send_message",
            json!({"channel": "random", "text": format!("m{i}")}),
        ))
    });
    let results = futures::future::join_all(calls).await;
    assert!(
        results
            .iter()
            .all(|r| r.as_ref().is_ok_and(|r| r.is_error == Some(false)))
    );
    assert_eq!(
        state(&server).await["messages"].as_array().unwrap().len(),
        33
    );
}

#[tokio::test]
async fn extensions_answer_with_their_statuses() {
    let server = TestServer::guest("slack");
    seed(&server).await;
    let http = reqwest::Client::new();
    let base = format!("{}/agentenv/ext/example/slack-stats", server.url);
    let stats: Value = http
        .get(format!("{base}/get"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats, json!({"channels": 2, "messages": 1}));

    let set = http
        .post(format!("{base}/set-topic"))
        .header("AgentEnv-Role", "alice")
        .json(&json!({"channel": "random", "topic": "cats"}))
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), 200);
    assert_eq!(
        set.json::<Value>().await.unwrap(),
        json!({"name": "random", "topic": "cats"})
    );

    let missing = http
        .post(format!("{base}/set-topic"))
        .json(&json!({"channel": "zz", "topic": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.json::<Value>().await.unwrap(),
        json!({"ok": false, "error": {"code": "channel_not_found", "message": "no channel named 'zz'",
               "retryable": false, "applied": "no"}})
    );
    let unbound = http
        .post(format!("{base}/set-topic"))
        .json(&json!({"channel": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unbound.status(), 400);
    assert_eq!(
        unbound.json::<Value>().await.unwrap()["error"]["message"],
        "missing a required argument: 'topic'"
    );
    assert_eq!(
        http.post(format!("{base}/get"))
            .send()
            .await
            .unwrap()
            .status(),
        405
    );
    assert_eq!(
        http.get(format!("{}/nowhere", server.url))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
}

#[tokio::test]
async fn the_name_override_renames_the_card_and_every_tool() {
    let mut config = config("slack");
    config.environments[0].card_name = Some("chat".into());
    let server = TestServer::start(config).unwrap();
    let card = server.card().await;
    assert_eq!(card["name"], "chat");
    let tools = server.mcp(None).await.list_all_tools().await.unwrap();
    assert!(
        tools.iter().all(|t| t.name.starts_with("chat_")),
        "{tools:?}"
    );
    assert_eq!(tools.len(), 3);
}

#[tokio::test]
async fn bodies_over_the_cap_get_413() {
    let server = TestServer::start_with_body_limit(config("slack"), 1024).unwrap();
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "data/add",
                     "params": {"parts": [{"kind": "text", "text": "x".repeat(4096)}]}});
    let r = reqwest::Client::new()
        .post(format!("{}/agentenv", server.url))
        .json(&big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    assert_eq!(
        server.rpc("data/get", json!({})).await["result"]["parts"][0]["data"]["channels"],
        json!([])
    );
}
