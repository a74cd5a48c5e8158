//! The egress policy of fetched file parts (docs/serve.md#egress-policy), on loopback only: a
//! denied address is refused before any connection (each denied listener must see none), after
//! name resolution, and again on every redirect; the refusal is `add_failed` naming the rule and
//! never the address a name resolved to.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::serve::ListenerExt as _;
use envhost::transfers::FetchPolicy;
use envhost_tests::{TestServer, config};
use serde_json::{Value, json};

const SEED: &str = r#"{"channels": [{"name": "fetched"}]}"#;

/// A listener on `ip` serving `router`, counting the connections it accepts.
struct Listener {
    url: String,
    connections: Arc<AtomicUsize>,
}

impl Listener {
    async fn serve(ip: &str, router: Router) -> Self {
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        let listener = listener.tap_io(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
        });
        tokio::spawn(async move { axum::serve(listener, router).await });
        Self { url, connections }
    }

    /// A listener on `ip` that answers the seed at `/seed.json`.
    async fn seed(ip: &str) -> Self {
        Self::serve(
            ip,
            Router::new().route("/seed.json", get(|| async { SEED })),
        )
        .await
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// A listener on `ip` whose `/go` redirects to `to`.
async fn redirector(ip: &str, to: String) -> Listener {
    let go = move || {
        let to = to.clone();
        async move { (StatusCode::FOUND, [(header::LOCATION, to)]).into_response() }
    };
    Listener::serve(ip, Router::new().route("/go", get(go))).await
}

fn server(allow: &[&str], deny: &[&str]) -> TestServer {
    let owned = |rules: &[&str]| rules.iter().map(|r| (*r).to_owned()).collect::<Vec<_>>();
    let mut config = config("slack");
    config.transfers.policy = FetchPolicy::new(&owned(allow), &owned(deny)).unwrap();
    TestServer::start(config).unwrap()
}

fn file_part(uri: &str) -> Value {
    json!({"parts": [{"kind": "file", "file": {"uri": uri, "mimeType": "application/json"}}]})
}

/// `data/add` of `uri`: the error's message when it failed (-32000 `add_failed`), none when it
/// loaded.
async fn add(server: &TestServer, uri: &str) -> Option<String> {
    let answer = server.rpc("data/add", file_part(uri)).await;
    if answer.get("result").is_some() {
        return None;
    }
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    assert_eq!(answer["error"]["data"]["code"], "add_failed", "{answer}");
    Some(answer["error"]["message"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn a_denied_address_is_never_connected_to() {
    let denied = Listener::seed("127.0.0.1").await;
    let port = denied.url.rsplit(':').next().unwrap().to_owned();
    let server = server(&[], &["127.0.0.0/8", "::1"]);

    let by_address = add(&server, &format!("{}/seed.json", denied.url)).await;
    let message = by_address.expect("the fetch is refused");
    assert!(message.contains("--fetch-deny 127.0.0.0/8"), "{message}");
    assert!(message.contains("--fetch-allow"), "{message}");

    // A name is resolved by the host and refused for the addresses it resolves to, which the
    // refusal does not show.
    let by_name = add(&server, &format!("http://localhost:{port}/seed.json?sig=x")).await;
    let message = by_name.expect("the fetch is refused");
    assert!(message.contains("refuses localhost"), "{message}");
    assert!(message.contains("--fetch-deny"), "{message}");
    assert!(
        !message.contains("127.0.0.1") && !message.contains("sig="),
        "{message}"
    );

    // An IPv4-mapped IPv6 address is its IPv4 address.
    let mapped = add(
        &server,
        &format!("http://[::ffff:127.0.0.1]:{port}/seed.json"),
    )
    .await;
    assert!(mapped.expect("refused").contains("127.0.0.0/8"));

    assert_eq!(
        denied.connections(),
        0,
        "the denied listener was connected to"
    );
    let state = server.rpc("data/get", json!({})).await;
    assert_eq!(state["result"]["parts"][0]["data"]["channels"], json!([]));
}

#[tokio::test]
async fn an_allowed_address_loads_and_a_more_specific_rule_wins() {
    let allowed = Listener::seed("127.0.0.2").await;
    let excepted = Listener::seed("127.0.0.3").await;
    let server = server(&["127.0.0.2"], &["127.0.0.0/8"]);

    assert_eq!(
        add(&server, &format!("{}/seed.json", allowed.url)).await,
        None
    );
    let refused = add(&server, &format!("{}/seed.json", excepted.url)).await;
    assert!(
        refused
            .expect("refused")
            .contains("--fetch-deny 127.0.0.0/8")
    );
    assert_eq!(allowed.connections(), 1);
    assert_eq!(excepted.connections(), 0);
}

#[tokio::test]
async fn every_redirect_is_checked_again() {
    let denied = Listener::seed("127.0.0.1").await;
    let port = denied.url.rsplit(':').next().unwrap().to_owned();
    let to_address = redirector("127.0.0.2", format!("{}/seed.json", denied.url)).await;
    let to_name = redirector("127.0.0.2", format!("http://localhost:{port}/seed.json")).await;
    let server = server(&["127.0.0.2"], &["127.0.0.0/8", "::1"]);

    let refused = add(&server, &format!("{}/go", to_address.url)).await;
    let message = refused.expect("the redirect is refused");
    assert!(message.contains("refuses 127.0.0.1"), "{message}");
    assert!(message.contains("--fetch-deny 127.0.0.0/8"), "{message}");

    let refused = add(&server, &format!("{}/go", to_name.url)).await;
    let message = refused.expect("the redirect is refused");
    assert!(message.contains("refuses localhost"), "{message}");
    assert!(!message.contains("127.0.0.1"), "{message}");

    assert_eq!(to_address.connections(), 1);
    assert_eq!(to_name.connections(), 1);
    assert_eq!(
        denied.connections(),
        0,
        "the redirect's target was connected to"
    );
}

#[tokio::test]
async fn a_denied_host_name_is_refused_before_resolution() {
    let denied = Listener::seed("127.0.0.1").await;
    let port = denied.url.rsplit(':').next().unwrap().to_owned();
    let server = server(&[], &["localhost"]);
    let refused = add(&server, &format!("http://LocalHost.:{port}/seed.json")).await;
    assert!(refused.expect("refused").contains("--fetch-deny localhost"));
    assert_eq!(denied.connections(), 0);
}
