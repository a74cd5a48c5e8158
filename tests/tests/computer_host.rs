//! Computers in a `Host`, in process (docs/computer.md): `guests/desk` loaded as a computer
//! driver beside an environment, its computers created, called, forked, snapshotted, restored,
//! reset and dropped under the host's one episode cap, with the errors' codes.

use envhost::computer::image;
use envhost::protocol::Caller;
use envhost::protocol::tool_access::Change;
use envhost::{ComputerConfig, ComputerEpisode, EnvironmentConfig, Host, HostConfig};
use envhost_tests::guest;
use serde_json::{Map, Value, json};

/// A host of counter and the desk, with room for `max` episodes of both.
async fn host(max: usize) -> Host {
    let mut config = HostConfig::new(vec![EnvironmentConfig::new("counter", guest("counter"))]);
    config.computers = vec![ComputerConfig::new("desk", guest("desk"))];
    config.max_episodes = max;
    Host::new(config).await.unwrap()
}

fn object(value: Value) -> Map<String, Value> {
    let Value::Object(map) = value else {
        panic!("not an object: {value}")
    };
    map
}

/// The RGB pixels of a fresh screenshot.
async fn pixels(computer: &ComputerEpisode) -> (u32, u32, Vec<u8>) {
    image::rgb(&computer.screenshot().await.unwrap()).unwrap()
}

#[tokio::test]
async fn a_computer_answers_its_card_tools_and_screenshots_in_process() {
    let host = host(8).await;
    assert_eq!(host.drivers()[0].name, "desk");
    let desk = host.create_computer("desk").await.unwrap();
    let card = desk.card();
    assert_eq!(card["name"], "desk");
    assert_eq!(
        card["capabilities"]["operations"],
        json!(["data/add", "data/get"])
    );
    let listed: Vec<String> = desk
        .list_tools(&Caller::default())
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(listed.contains(&"computer_click".to_owned()), "{listed:?}");

    let (width, height, blank) = pixels(&desk).await;
    assert_eq!((width, height), (1280, 800));
    let shot = desk
        .call_tool("computer_screenshot", Map::new(), &Caller::default())
        .await;
    assert!(!shot.is_error, "{:?}", shot.structured());
    let click = json!({"x": 140, "y": 80, "count": 2});
    let clicked = desk
        .call_tool("computer_click", object(click), &Caller::default())
        .await;
    assert!(!clicked.is_error, "{:?}", clicked.structured());
    assert_ne!(pixels(&desk).await.2, blank, "the click changed nothing");
    let state = desk.get_data().await.unwrap();
    assert_eq!(state[0]["data"]["saved"], 2, "{state:?}");

    let display = desk
        .call_extension("urn:agentenv:computer-display/v1", "get", &Map::new())
        .await
        .unwrap();
    assert_eq!(
        (display["width"].clone(), display["height"].clone()),
        (json!(1280), json!(800))
    );
    let spaces = object(json!({"default_space": "norm"}));
    desk.call_extension("urn:agentenv:computer-spaces/v1", "set", &spaces)
        .await
        .unwrap();
    assert_eq!(desk.computer().settings().default_space.as_str(), "norm");
    let unknown = desk
        .call_extension("urn:agentenv:computer-exec/v1", "run", &Map::new())
        .await
        .unwrap_err();
    assert_eq!(
        (unknown.code.as_str(), unknown.status),
        ("extension_not_found", 404)
    );
}

#[tokio::test]
async fn tool_access_the_data_plane_and_reset_act_on_one_computer() {
    let host = host(8).await;
    let desk = host.create_computer("desk").await.unwrap();
    let change = Change::parse(br#"{"role": "bob", "tools": ["computer_click"]}"#).unwrap();
    desk.change_tool_access(&change, true);
    let bob = Caller {
        role: Some("bob".into()),
        session: None,
    };
    assert!(
        desk.list_tools(&bob)
            .iter()
            .all(|t| t["name"] != "computer_click")
    );
    let refused = desk
        .call_tool("computer_click", object(json!({"x": 1, "y": 1})), &bob)
        .await;
    assert_eq!(refused.structured().unwrap()["code"], "permission_denied");

    let seed = json!({"kind": "data", "data": {"saved": 7, "name": "seeded"}});
    desk.add_data(&[seed]).await.unwrap();
    let state = desk.get_data().await.unwrap();
    assert_eq!(state[0]["data"]["saved"], 7);
    let refused = desk
        .add_data(&[json!({"kind": "data", "data": {"selected": 300}})])
        .await
        .unwrap_err();
    assert!(
        refused.to_string().starts_with("invalid_argument: "),
        "{refused}"
    );

    desk.reset().await.unwrap();
    let fresh = desk.get_data().await.unwrap();
    assert_eq!(fresh[0]["data"]["saved"], 0, "{fresh:?}");
    assert!(
        desk.is_disabled(&bob, "computer_click"),
        "reset kept no tool access"
    );
}

#[tokio::test]
async fn forks_and_restores_draw_their_origins_pixels_and_go_their_own_way() {
    let host = host(8).await;
    let desk = host.create_computer("desk").await.unwrap();
    for (tool, arguments) in [
        ("computer_screenshot", json!({})),
        ("computer_click", json!({"x": 300, "y": 148})),
        ("computer_type", json!({"text": "forked"})),
    ] {
        let result = desk
            .call_tool(tool, object(arguments), &Caller::default())
            .await;
        assert!(!result.is_error, "{tool}: {:?}", result.structured());
    }
    let original = pixels(&desk).await;
    let fork = host.fork_computer(&desk).await.unwrap();
    assert_ne!(fork.id(), desk.id());
    assert!(pixels(&fork).await == original, "the fork draws otherwise");

    let kept = host.snapshot_computer(&desk).await.unwrap();
    assert_eq!(kept.inputs(), 2);
    let typed = object(json!({"text": " more"}));
    desk.call_tool("computer_type", typed, &Caller::default())
        .await;
    let restored = host.restore_computer(kept.id()).await.unwrap();
    assert!(
        pixels(&restored).await == original,
        "the restore draws otherwise"
    );
    assert!(pixels(&desk).await != original, "typing changed nothing");

    assert!(host.delete_computer_snapshot(kept.id()));
    let gone = host.restore_computer(kept.id()).await.unwrap_err();
    assert_eq!(gone.to_coded().code, "snapshot_not_found");
}

#[tokio::test]
async fn computers_and_episodes_share_the_hosts_cap() {
    let host = host(2).await;
    let episode = host.create_episode("counter").await.unwrap();
    let desk = host.create_computer("desk").await.unwrap();
    let full = host.create_computer("desk").await.unwrap_err().to_coded();
    assert_eq!(
        (full.code.as_str(), full.status, full.retryable),
        ("too_many_episodes", 503, true)
    );
    let fork = host.fork_computer(&desk).await.unwrap_err().to_coded();
    assert_eq!(fork.code, "too_many_episodes");
    assert!(host.create_episode("counter").await.is_err());

    assert!(host.drop_computer(desk.id()));
    assert!(!host.drop_computer(desk.id()));
    assert!(host.computer(desk.id()).is_none());
    let again = host.create_computer("desk").await.unwrap();
    assert_eq!(host.computers().len(), 1);
    assert!(host.drop_episode(episode.id()));
    let unknown = host.create_computer("laptop").await.unwrap_err().to_coded();
    assert_eq!(
        (unknown.code.as_str(), unknown.status),
        ("computer_not_found", 404)
    );
    assert!(unknown.message.contains("desk"), "{}", unknown.message);
    drop(again);
}
