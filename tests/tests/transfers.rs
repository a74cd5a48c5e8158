//! `data/add` file parts: inline bytes, `file://` under the data roots only, and `http://`.

use axum::Router;
use axum::routing::get;
use envhost_tests::{TestServer, config};
use serde_json::{Value, json};

const SEED: &str = r#"{"channels": [{"name": "from-file"}]}"#;

fn server_with_root(root: &std::path::Path) -> TestServer {
    let mut config = config("slack");
    config.transfers.data_roots = vec![root.to_path_buf()];
    TestServer::start(config).unwrap()
}

fn file_part(uri: String) -> Value {
    json!({"parts": [{"kind": "file", "file": {"uri": uri, "mimeType": "application/json"}}]})
}

async fn channels(server: &TestServer) -> Value {
    server.rpc("data/get", json!({})).await["result"]["parts"][0]["data"]["channels"].clone()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("envhost-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn files_load_from_the_data_roots_only() {
    let dir = temp_dir("transfers");
    let root = dir.join("data");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("seed.json"), SEED).unwrap();
    std::fs::write(dir.join("outside.json"), SEED).unwrap();
    let server = server_with_root(&root);

    let inside = format!("file://{}", root.join("seed.json").display());
    assert_eq!(
        server.rpc("data/add", file_part(inside)).await["result"],
        json!({})
    );
    assert_eq!(
        channels(&server).await,
        json!([{"name": "from-file", "topic": ""}])
    );

    server.rpc("data/reset", json!({})).await;
    let outside = format!("file://{}", dir.join("outside.json").display());
    let refused = server.rpc("data/add", file_part(outside)).await;
    assert_eq!(refused["error"]["code"], -32000);
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("outside the allowed data roots"),
        "{message}"
    );
    assert_eq!(channels(&server).await, json!([]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn inline_bytes_and_http_urls_load() {
    let files = Router::new()
        .route("/seed.json", get(|| async { SEED }))
        .route(
            "/broken",
            get(|| async { (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "no") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let files_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, files).await });
    let server = server_with_root(&temp_dir("transfers-http"));

    let part = file_part(format!("{files_url}/seed.json?signature=secret"));
    assert_eq!(server.rpc("data/add", part).await["result"], json!({}));
    let broken = server
        .rpc(
            "data/add",
            file_part(format!("{files_url}/broken?signature=secret")),
        )
        .await;
    let message = broken["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("500") && !message.contains("secret"),
        "{message}"
    );

    let bytes = json!({"parts": [{"kind": "file", "file": {"bytes": "eyJjaGFubmVscyI6IFt7Im5hbWUiOiAiYiJ9XX0="}}]});
    assert_eq!(server.rpc("data/add", bytes).await["result"], json!({}));
    assert_eq!(
        channels(&server).await,
        json!([{"name": "from-file", "topic": ""}, {"name": "b", "topic": ""}])
    );
    let ftp = server
        .rpc("data/add", file_part("ftp://example.com/seed.json".into()))
        .await;
    assert_eq!(ftp["error"]["data"]["code"], "add_failed");
}
