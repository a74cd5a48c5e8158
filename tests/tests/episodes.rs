//! Episodes over HTTP: created, listed, shown and deleted through `/episodes`, each served with
//! every route of the root under `/episodes/{id}/`, isolated from each other, capped, and
//! reported in `/metrics`.

use std::time::{Duration, Instant};

use envhost::runtime::Limits;
use envhost::{EnvironmentConfig, HostConfig};
use envhost_tests::{TestServer, config, guest};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

fn seed() -> Value {
    json!({"parts": [{"kind": "data", "data": {"channels": [{"name": "general"}]}}]})
}

#[tokio::test]
async fn every_route_is_served_under_the_episode() {
    let server = TestServer::guest("slack");
    let episode = server.new_episode("slack").await;
    assert!(episode.url.contains("/episodes/"));

    assert_eq!(episode.card().await["name"], "slack");
    assert_eq!(episode.rpc("data/add", seed()).await["result"], json!({}));
    let ready = reqwest::get(format!("{}/ready", episode.url))
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);

    let client = episode.mcp(Some("alice")).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 3);
    let sent = client
        .call_tool(call(
            "slack_send_message",
            json!({"channel": "general", "text": "hi"}),
        ))
        .await
        .unwrap();
    assert_eq!(sent.is_error, Some(false));

    let http = reqwest::Client::new();
    let grant = http
        .post(format!("{}/tools/enable", episode.url))
        .json(&json!({"role": "alice", "tools": ["slack_admin_purge"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(grant.status(), 200);
    assert_eq!(client.list_all_tools().await.unwrap().len(), 4);

    let stats: Value = http
        .get(format!(
            "{}/agentenv/ext/example/slack-stats/get",
            episode.url
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats, json!({"channels": 1, "messages": 1}));

    let doubled = http
        .get(format!("{}//.well-known/agent-env.json", episode.url))
        .send()
        .await
        .unwrap();
    assert_eq!(
        doubled.status(),
        200,
        "a client joining url/ and /path reaches the card"
    );

    let root = server.rpc("data/get", json!({})).await;
    assert_eq!(
        root["result"]["parts"][0]["data"]["channels"],
        json!([]),
        "the root is untouched"
    );
}

#[tokio::test]
async fn episodes_are_listed_shown_and_deleted() {
    let server = TestServer::guest("slack");
    let (status, created) = server.create_episode("slack").await;
    assert_eq!(status, 201);
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["url"], format!("/episodes/{id}/"));
    assert_eq!(created["root"], false);

    let listed = server.list_episodes().await;
    let ids: Vec<&str> = listed.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&id.as_str()));
    assert_eq!(ids.len(), 2, "the root episode and the new one");
    let roots: Vec<bool> = listed
        .iter()
        .map(|e| e["root"] == (e["id"] != id.as_str()))
        .collect();
    assert_eq!(
        roots,
        [true, true],
        "only the root episode is marked root: {listed:?}"
    );

    let shown: Value = reqwest::get(format!("{}/episodes/{id}", server.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(shown["environment"], "slack");

    let http = reqwest::Client::new();
    let deleted = http
        .delete(format!("{}/episodes/{id}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    let gone = http
        .post(format!("{}/episodes/{id}/agentenv", server.url))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    assert_eq!(
        gone.json::<Value>().await.unwrap()["error"]["code"],
        "episode_not_found"
    );
    let again = http
        .delete(format!("{}/episodes/{id}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);

    let (status, unknown) = server.create_episode("nope").await;
    assert_eq!(
        (status, unknown["error"]["code"].as_str()),
        (404, Some("environment_not_found"))
    );
}

/// Sends `request` and checks that it gets 400 `invalid_params`; answers the error's message.
async fn invalid_params(request: reqwest::RequestBuilder, what: &str) -> String {
    let answer = request.send().await.unwrap();
    assert_eq!(answer.status(), 400, "{what}");
    let error: Value = answer.json().await.unwrap();
    assert_eq!(error["error"]["code"], "invalid_params", "{what}: {error}");
    error["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_path_that_is_not_utf8_gets_400_and_reaches_no_episode() {
    let server = TestServer::guest("slack");
    server.rpc("data/add", seed()).await;
    let http = reqwest::Client::new();
    let reset = r#"{"jsonrpc": "2.0", "id": 1, "method": "data/reset"}"#;
    for (method, path) in [
        ("POST", "/episodes/%ff/agentenv"),
        ("POST", "/episodes/a%ffb/agentenv"),
        ("GET", "/episodes/%ff/.well-known/agent-env.json"),
        ("POST", "/episodes/%ff/mcp"),
        ("POST", "/episodes/%ff/snapshot"),
        (
            "POST",
            "/episodes/%ff/agentenv/ext/example/slack-stats/set-topic",
        ),
        ("GET", "/episodes/%ff"),
        ("DELETE", "/episodes/%ff"),
        ("GET", "/snapshots/%ff"),
        ("POST", "/snapshots/%ff/episodes"),
    ] {
        let request = http.request(method.parse().unwrap(), format!("{}{path}", server.url));
        invalid_params(request.body(reset), &format!("{method} {path}")).await;
    }
    let data = server.rpc("data/get", json!({})).await;
    assert!(
        data["result"].to_string().contains("general"),
        "the root episode kept its data: {data}"
    );
    assert_eq!(server.list_episodes().await.len(), 1);
}

#[tokio::test]
async fn create_bodies_other_than_the_object_get_400_and_create_nothing() {
    let server = TestServer::guest("slack");
    let http = reqwest::Client::new();
    for body in [
        r#"{"environment": "slack", "extra": 1}"#,
        "[]",
        r#"["slack"]"#,
        r#""slack""#,
        r#"{"environment": 1}"#,
        "{",
    ] {
        let request = http.post(format!("{}/episodes", server.url)).body(body);
        let message = invalid_params(request, body).await;
        assert!(!message.contains("CreateRequest"), "{body}: {message}");
    }
    let listed = server.list_episodes().await;
    assert_eq!(listed.len(), 1, "{listed:?}");
}

#[tokio::test]
async fn creations_past_the_cap_get_503_then_succeed_once_room_is_made() {
    let mut config = config("slack");
    config.max_episodes = 3;
    let server = TestServer::start(config).unwrap();
    let (_, first) = server.create_episode("slack").await;
    server.create_episode("slack").await;
    let refused = reqwest::Client::new()
        .post(format!("{}/episodes", server.url))
        .json(&json!({"environment": "slack"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert_eq!(
        (
            body["error"]["code"].as_str(),
            body["error"]["retryable"].as_bool()
        ),
        (Some("too_many_episodes"), Some(true))
    );

    let id = first["id"].as_str().unwrap();
    reqwest::Client::new()
        .delete(format!("{}/episodes/{id}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(server.create_episode("slack").await.0, 201);
    let metrics = reqwest::get(format!("{}/metrics", server.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("envhost_episodes_refused_total 1"),
        "{metrics}"
    );
    assert!(metrics.contains("envhost_episodes_live 3"), "{metrics}");
}

#[tokio::test]
async fn environments_are_served_side_by_side() {
    let mut config = HostConfig::new(vec![
        EnvironmentConfig::new("slack", guest("slack")),
        EnvironmentConfig::new("counter", guest("counter")),
    ]);
    config.max_episodes = 8;
    let server = TestServer::start(config).unwrap();
    let counter = server.new_episode("counter").await;
    assert_eq!(counter.card().await["name"], "counter");
    assert_eq!(
        server.card().await["name"],
        "slack",
        "the root is the first environment"
    );
    let client = counter.mcp(None).await;
    let added = client
        .call_tool(call("counter_add", json!({"by": 3})))
        .await
        .unwrap();
    assert_eq!(added.structured_content, Some(json!({"result": 3})));
}

#[tokio::test]
async fn a_spinning_episode_does_not_hold_up_another() {
    let mut config = config("faulty");
    config.environments[0].limits = Limits {
        cpu_deadline: Duration::from_millis(500),
        ..Limits::default()
    };
    let server = TestServer::start(config).unwrap();
    let spinner = server.new_episode("faulty").await.mcp(None).await;
    let other = server.new_episode("faulty").await.mcp(None).await;
    let spin = spinner.call_tool(call("spin", json!({})));
    let meanwhile = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut slowest = Duration::ZERO;
        for _ in 0..20 {
            let started = Instant::now();
            let echo = other
                .call_tool(call("echo", json!({"text": "x"})))
                .await
                .unwrap();
            assert_eq!(echo.is_error, Some(false));
            slowest = slowest.max(started.elapsed());
        }
        slowest
    };
    let (spun, slowest) = tokio::join!(spin, meanwhile);
    assert_eq!(
        spun.unwrap().structured_content.unwrap()["code"],
        "deadline_exceeded"
    );
    assert!(
        slowest < Duration::from_millis(50),
        "a call on another episode took {slowest:?}"
    );
}

#[tokio::test]
async fn a_full_queue_answers_429_on_the_data_plane() {
    let mut config = config("faulty");
    config.environments[0].limits = Limits {
        max_queued_calls: 1,
        ..Limits::default()
    };
    let server = TestServer::start(config).unwrap();
    let client = server.mcp(None).await;
    let slow = async {
        let running = client.call_tool(call("slow", json!({"ms": 300})));
        let waiting = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            client.call_tool(call("slow", json!({"ms": 10}))).await
        };
        let (running, waiting) = tokio::join!(running, waiting);
        assert_eq!(waiting.unwrap().is_error, Some(false));
        running
    };
    let refused = async {
        tokio::time::sleep(Duration::from_millis(80)).await;
        reqwest::Client::new()
            .post(format!("{}/agentenv", server.url))
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "data/get"}))
            .send()
            .await
            .unwrap()
    };
    let (slow, refused) = tokio::join!(slow, refused);
    assert_eq!(slow.unwrap().is_error, Some(false));
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    assert_eq!(
        refused.json::<Value>().await.unwrap()["error"]["code"],
        "busy"
    );
}

/// `POST /episodes` with `body`: the status and the answer.
async fn create_with(server: &TestServer, body: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/episodes", server.url))
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn an_episode_is_created_seeded_with_parts_or_from_a_snapshot() {
    let server = TestServer::guest("slack");
    let parts = json!([{"kind": "data", "data": {
        "channels": [{"name": "general", "topic": "chat"}],
        "messages": [{"channel": "general", "text": "hi", "from": "a", "to": "b"}]}}]);
    let (status, created) =
        create_with(&server, json!({"environment": "slack", "parts": parts})).await;
    assert_eq!(status, 201, "{created}");
    let seeded = server.endpoint(&created);
    let data = seeded.rpc("data/get", json!({})).await;
    assert_eq!(data["result"]["parts"][0]["data"], parts[0]["data"]);
    let root = server.rpc("data/get", json!({})).await;
    assert_eq!(root["result"]["parts"][0]["data"]["messages"], json!([]));

    let taken: Value = reqwest::Client::new()
        .post(format!("{}/snapshot", seeded.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let snapshot = taken["snapshot"].as_str().unwrap();
    let (status, restored) = create_with(&server, json!({"snapshot": snapshot})).await;
    assert_eq!(status, 201, "{restored}");
    assert_eq!(restored["environment"], "slack");
    let restored = server.endpoint(&restored);
    assert_eq!(
        restored.rpc("data/get", json!({})).await["result"],
        data["result"]
    );
    assert_eq!(server.list_episodes().await.len(), 3);
}

#[tokio::test]
async fn a_seed_that_fails_answers_its_error_and_leaves_no_episode() {
    let server = TestServer::guest("slack");
    let unknown_channel = json!([{"kind": "data", "data": {
        "messages": [{"channel": "nowhere", "text": "hi"}]}}]);
    let (status, refused) = create_with(&server, json!({"parts": unknown_channel})).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error"]["code"], "add_failed");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown channel")
    );
    for (body, what) in [
        (json!({"parts": []}), "at least 1 item"),
        (json!({"parts": [{"kind": "video"}]}), "parts[0]"),
        (json!({"parts": {}}), "should be a list"),
        (json!({"parts": [], "snapshot": "x"}), "not both"),
        (json!({"environment": "slack", "snapshot": "nope"}), ""),
    ] {
        let (status, answer) = create_with(&server, body.clone()).await;
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        if what.is_empty() {
            assert_eq!(
                (status, &answer["error"]["code"]),
                (404, &json!("snapshot_not_found"))
            );
        } else {
            assert_eq!(status, 400, "{body}: {answer}");
            assert!(message.contains(what), "{body}: {message}");
        }
    }
    assert_eq!(server.list_episodes().await.len(), 1);
}

#[tokio::test]
async fn an_episode_with_a_lifetime_is_dropped_after_it_and_the_others_stay() {
    let server = TestServer::guest("slack");
    let (status, brief) = create_with(&server, json!({"ttl_s": 1})).await;
    assert_eq!(status, 201, "{brief}");
    let (_, kept) = create_with(&server, json!({})).await;
    let shown = |id: &str| reqwest::get(format!("{}/episodes/{id}", server.url));
    let brief_id = brief["id"].as_str().unwrap();
    assert_eq!(shown(brief_id).await.unwrap().status(), 200);
    let deadline = Instant::now() + Duration::from_secs(5);
    while shown(brief_id).await.unwrap().status() != 404 {
        assert!(
            Instant::now() < deadline,
            "the episode outlived its ttl_s by 4 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        shown(kept["id"].as_str().unwrap()).await.unwrap().status(),
        200
    );

    let http = reqwest::Client::new();
    let url = format!("{}/episodes", server.url);
    let message = invalid_params(http.post(&url).json(&json!({"ttl_s": 0})), "ttl_s 0").await;
    assert!(message.contains("ttl_s"), "{message}");
    let snapshot: Value = http
        .post(format!(
            "{}/episodes/{}/snapshot",
            server.url,
            kept["id"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let body = json!({"snapshot": snapshot["snapshot"], "ttl_s": 5});
    invalid_params(http.post(&url).json(&body), "ttl_s with a snapshot").await;
}
