//! Who may call what on a server guarded by an operator token (docs/serve.md#access), over real
//! HTTP on loopback: every route of the server's route table tried without the token, with a
//! wrong one and with an episode's secret in its place; an episode's agent URL tried with the
//! secrets and ids of others; and an agent holding only its own `mcp_url` sent at every route,
//! under its own URL and past it.

use envhost::server::access::ControlToken;
use envhost::server::{Access, ServeConfig, route_table};
use envhost_tests::{TestServer, config};
use http::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const TOKEN: &str = "operator-token-0123456789abcdef";

fn guarded() -> TestServer {
    let serving = ServeConfig {
        access: Access::guarded(ControlToken::new(TOKEN).expect("a valid token")),
        ..ServeConfig::default()
    };
    TestServer::start_with(config("slack"), serving).expect("serving slack")
}

/// `POST /episodes` with the token: the new episode's summary.
async fn create(server: &TestServer) -> Value {
    let created = reqwest::Client::new()
        .post(format!("{}/episodes", server.url))
        .bearer_auth(TOKEN)
        .json(&json!({"environment": "slack"}))
        .send()
        .await
        .expect("POST /episodes");
    assert_eq!(created.status(), 201);
    created.json().await.expect("a JSON answer")
}

/// An episode as the tests address it: its id and the secret its agent URL carries.
struct Held {
    id: String,
    secret: String,
    agent_url: String,
}

impl Held {
    fn of(summary: &Value) -> Self {
        let agent_url = summary["agent_url"]
            .as_str()
            .expect("an agent_url")
            .to_owned();
        let parts: Vec<&str> = agent_url.split('/').collect();
        assert_eq!(parts.len(), 5, "{agent_url}");
        assert_eq!(
            summary["mcp_url"].as_str(),
            Some(&*format!("{agent_url}mcp"))
        );
        Self {
            id: parts[2].to_owned(),
            secret: parts[3].to_owned(),
            agent_url,
        }
    }
}

/// A raw HTTP/1.1 request of `method` at `path`, exactly as written (no client normalises its
/// dot segments or escapes), with `authorization` when given: the status and the body.
async fn raw(
    server: &TestServer,
    method: &str,
    path: &str,
    authorization: Option<&str>,
) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("a connection");
    let auth = authorization
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let body = if method == "GET" || method == "DELETE" {
        ""
    } else {
        "{}"
    };
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\n{auth}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        server.addr,
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("a write");
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    tokio::time::timeout(std::time::Duration::from_secs(10), read)
        .await
        .expect("an answer within 10 s")
        .expect("a read");
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// Every path of the route table as a concrete path, with `id` for `{id}`, `secret` for
/// `{secret}`, an extension path for `{*path}`; with each verb the route answers.
fn concrete_routes(id: &str, secret: &str) -> Vec<(String, &'static [Method])> {
    route_table()
        .into_iter()
        .map(|(pattern, methods)| {
            let path = pattern
                .replace("{id}", id)
                .replace("{secret}", secret)
                .replace("{name}", "tool")
                .replace("{*path}", "agentenv/ext/example/slack-stats/get")
                .replace("{*rest}", "ext/mcp-config");
            (path, methods)
        })
        .collect()
}

/// Whether `path` is an agent URL's route (`/agent/{id}/{secret}/...`).
fn is_agent_route(path: &str) -> bool {
    path.starts_with("/agent/")
}

/// Whether `path` is a deployment URL's route (`/deployments/{id}/{secret}/...`), which its
/// secret opens.
fn is_deployment_route(path: &str) -> bool {
    path.starts_with("/deployments/") && path.matches('/').count() > 3
}

fn assert_unauthorized(status: u16, body: &str, what: &str) {
    assert_eq!(status, 401, "{what}: {body}");
    let body: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{what}: {body}"));
    assert_eq!(body["ok"], false, "{what}");
    assert_eq!(body["error"]["code"], "unauthorized", "{what}");
    assert_eq!(body["error"]["applied"], "no", "{what}");
}

#[tokio::test]
async fn every_control_route_refuses_a_missing_or_wrong_token() {
    let server = guarded();
    let episode = Held::of(&create(&server).await);
    let routes = concrete_routes(&episode.id, &episode.secret);
    assert!(routes.len() >= 29, "the route table: {routes:?}");
    let wrong = [
        None,
        Some("Bearer not-the-operator-token-0123456789".to_owned()),
        Some(format!("Bearer {}", episode.secret)),
        Some(format!("Bearer {TOKEN}x")),
        Some(format!("Basic {}", base64_of("envhost:not-the-token"))),
        Some(format!("Token {TOKEN}")),
    ];
    let mut tried = 0;
    for (path, methods) in routes
        .iter()
        .filter(|(p, _)| !is_agent_route(p) && !is_deployment_route(p))
    {
        if path == "/ready" {
            continue;
        }
        for method in *methods {
            for authorization in &wrong {
                let (status, body) =
                    raw(&server, method.as_str(), path, authorization.as_deref()).await;
                assert_unauthorized(status, &body, &format!("{method} {path} {authorization:?}"));
                tried += 1;
            }
        }
    }
    // A path no route matches is an extension route of the root episode: guarded too.
    let (status, body) = raw(
        &server,
        "GET",
        "/agentenv/ext/example/slack-stats/get",
        None,
    )
    .await;
    assert_unauthorized(status, &body, "the root's extension route");
    assert!(tried > 150, "{tried} requests");

    // The token, as a bearer token or as Basic authentication's password, is let through.
    let bearer = format!("Bearer {TOKEN}");
    let (status, body) = raw(&server, "GET", "/episodes", Some(&bearer)).await;
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(listed["episodes"].as_array().unwrap().len(), 2);
    let basic = format!("Basic {}", base64_of(&format!("envhost:{TOKEN}")));
    let (status, _) = raw(&server, "GET", "/metrics", Some(&basic)).await;
    assert_eq!(status, 200);
    // Readiness is open, for probes.
    assert_eq!(raw(&server, "GET", "/ready", None).await.0, 200);
    // Nothing the refused requests asked for happened: both episodes are there.
    let (_, body) = raw(&server, "GET", "/episodes", Some(&bearer)).await;
    assert!(body.contains(&episode.id), "{body}");
}

#[tokio::test]
async fn an_episodes_agent_url_refuses_another_episodes_secret() {
    let server = guarded();
    let mine = Held::of(&create(&server).await);
    let other = Held::of(&create(&server).await);
    let card = "/.well-known/agent-env.json";
    let at = |id: &str, secret: &str, path: &str| format!("/agent/{id}/{secret}{path}");

    let (status, body) = raw(&server, "GET", &at(&mine.id, &mine.secret, card), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["name"],
        "slack"
    );
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let http = reqwest::Client::new();
    let opened = http
        .post(format!("{}{}mcp", server.url, mine.agent_url))
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 200);

    let zeros = "0".repeat(32);
    let flipped = format!(
        "{}{}",
        &mine.secret[..31],
        if mine.secret.ends_with('0') { '1' } else { '0' }
    );
    for (id, secret) in [
        (&mine.id, &other.secret),
        (&other.id, &mine.secret),
        (&mine.id, &zeros),
        (&mine.id, &flipped),
        (&mine.id, &mine.secret.to_uppercase()),
        (&mine.id, &mine.secret[..16].to_owned()),
        (&"0".repeat(32), &mine.secret),
    ] {
        for (path, methods) in [
            (card, &["GET"][..]),
            ("/mcp", &["POST", "GET", "DELETE"]),
            ("/mcp/", &["POST", "GET"]),
        ] {
            for method in methods {
                let (status, body) = raw(&server, method, &at(id, secret, path), None).await;
                assert_eq!(status, 403, "{method} {path} with {id} {secret}: {body}");
                let body: Value = serde_json::from_str(&body).unwrap();
                assert_eq!(body["error"]["code"], "agent_url_refused");
            }
        }
    }
    let refused = http
        .post(format!(
            "{}/agent/{}/{}/mcp",
            server.url, mine.id, other.secret
        ))
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
}

#[tokio::test]
async fn an_agent_holding_its_mcp_url_reaches_no_other_route_or_episode() {
    let server = guarded();
    let mine = Held::of(&create(&server).await);
    let other = Held::of(&create(&server).await);
    let mut reached = Vec::new();
    let mut tried = 0;
    // Every route of the table, for its own episode and for the other, with no credential and
    // with its secret as a bearer token; and each route's path under its own agent URL and
    // past it with dot segments, escapes and repeated slashes.
    for id in [&mine.id, &other.id] {
        for (path, methods) in concrete_routes(id, &mine.secret) {
            let own_agent_route = is_agent_route(&path) && id == &mine.id;
            let under = |p: &str| format!("/agent/{}/{}{p}", mine.id, mine.secret);
            let mut paths = vec![
                path.clone(),
                under(&path),
                format!("{}/..{path}", under("")),
                format!("{}/../..{path}", under("")),
                format!("{}/%2e%2e{path}", under("")),
                under(&format!("/{path}")),
            ];
            if own_agent_route {
                paths.remove(0);
            }
            for path in paths {
                for method in methods {
                    for authorization in [None, Some(format!("Bearer {}", mine.secret))] {
                        let (status, body) =
                            raw(&server, method.as_str(), &path, authorization.as_deref()).await;
                        tried += 1;
                        let refused = status == 401
                            || (status == 403 && body.contains("agent_url_refused"))
                            || (status == 403 && body.contains("deployment_url_refused"))
                            || (status == 404 && path != "/ready");
                        if !refused {
                            reached.push(format!("{method} {path} -> {status} {body}"));
                        }
                    }
                }
            }
        }
    }
    // What the agent may reach: its own card and MCP endpoint (whose route shapes a request
    // with a trailing extra slash may also match), and readiness.
    reached.retain(|line| {
        let own = format!(" /agent/{}/{}/", mine.id, mine.secret);
        let line = collapse_slashes(line);
        !(line.contains(&format!("{own}.well-known/agent-env.json -> 200"))
            || line.contains(&format!("{own}mcp -> "))
            || line.contains(&format!("{own}mcp/ -> 307"))
            || line.starts_with("GET /ready -> 200"))
    });
    assert!(reached.is_empty(), "reached: {reached:#?}");
    assert!(tried > 500, "{tried} requests");

    // Both episodes are still there, the other one untouched.
    let http = reqwest::Client::new();
    let shown = http
        .get(format!("{}/episodes/{}", server.url, other.id))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(shown.status(), 200);
}

/// `text` with every run of slashes made one, as the server reads a path.
fn collapse_slashes(text: &str) -> String {
    let mut collapsed = String::with_capacity(text.len());
    for c in text.chars() {
        if !(c == '/' && collapsed.ends_with('/')) {
            collapsed.push(c);
        }
    }
    collapsed
}

fn base64_of(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}
