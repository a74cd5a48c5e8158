//! Who may call what on a computer's server guarded by an operator token (docs/serve.md#access),
//! over real HTTP on loopback: `guests/desk` served with commands granted; every route of the
//! server's route table refused without the token (commands and display changes among them),
//! and a computer's agent URL serving its card and MCP only, to its own secret only.

use std::sync::Arc;

use envhost::server::access::ControlToken;
use envhost::server::computers::{Computers, route_table, router};
use envhost::server::{self, Access};
use envhost::{ComputerConfig, Host, HostConfig};
use envhost_tests::guest;
use serde_json::{Value, json};

const TOKEN: &str = "computer-operator-token-0123456789";

/// The desk served with commands granted and the token guarding it: its base URL.
async fn serve_desk() -> String {
    let mut desk = ComputerConfig::new("desk", guest("desk"));
    desk.grants.exec = true;
    let mut config = HostConfig::new(Vec::new());
    config.computers = vec![desk];
    config.max_episodes = 16;
    config.pooling = false;
    let host = Arc::new(Host::new(config).await.unwrap());
    let computers = Computers::new(host, "desk").await.unwrap();
    let access = Access::guarded(ControlToken::new(TOKEN).unwrap());
    let router = router(computers, access);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server::run(listener, router, std::future::pending()));
    url
}

fn concrete(pattern: &str, id: &str, secret: &str) -> String {
    pattern.replace("{id}", id).replace("{secret}", secret)
}

#[tokio::test]
async fn a_guarded_computer_serves_its_agent_url_and_nothing_else_without_the_token() {
    let url = serve_desk().await;
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{url}/episodes"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let agent_url = created["agent_url"].as_str().expect("an agent_url");
    let parts: Vec<&str> = agent_url.split('/').collect();
    let (id, secret) = (parts[2], parts[3]);
    assert_eq!(created["mcp_url"], format!("{agent_url}mcp"));

    let mut tried = 0;
    for (pattern, methods) in route_table() {
        let path = concrete(&pattern, id, secret);
        if path.starts_with("/agent/") {
            continue;
        }
        for method in methods {
            for token in [None, Some("wrong-token-0123456789abcdef"), Some(secret)] {
                let mut request = http.request(method.clone(), format!("{url}{path}"));
                if let Some(token) = token {
                    request = request.bearer_auth(token);
                }
                let answer = request.json(&json!({"cmd": "true"})).send().await.unwrap();
                assert_eq!(answer.status(), 401, "{method} {path} with {token:?}");
                let body: Value = answer.json().await.unwrap();
                assert_eq!(body["error"]["code"], "unauthorized");
                tried += 1;
            }
        }
    }
    assert!(tried > 100, "{tried} requests");

    let card = http.get(format!("{url}{agent_url}.well-known/agent-env.json"));
    let card: Value = card.send().await.unwrap().json().await.unwrap();
    assert!(card["name"].is_string(), "{card}");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let opened = http
        .post(format!("{url}{agent_url}mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 200);

    let listed: Value = http
        .get(format!("{url}/episodes"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let root = &listed["episodes"][0];
    assert_eq!(root["root"], true);
    let root_agent_url = root["agent_url"].as_str().unwrap();
    let root_secret = root_agent_url.split('/').nth(3).unwrap();
    for (who, secret) in [
        (id, root_secret),
        (root["id"].as_str().unwrap(), secret),
        (id, &"0".repeat(32)),
    ] {
        let forged = format!("{url}/agent/{who}/{secret}/.well-known/agent-env.json");
        let refused = http.get(forged).send().await.unwrap();
        assert_eq!(refused.status(), 403);
    }
    for path in ["agentenv", "agentenv/ext/computer-exec/run", "tools/enable"] {
        let past = http
            .post(format!("{url}{agent_url}{path}"))
            .json(&json!({}));
        assert_eq!(past.send().await.unwrap().status(), 401, "{path}");
    }
}
