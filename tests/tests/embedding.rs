//! The embedding API, in-process: episodes created, called and dropped with the protocol's
//! semantics and errors, isolated from each other, and never seeing a byte of an earlier
//! episode's memory.

use std::time::Duration;

use envhost::protocol::part::Part;
use envhost::protocol::role::Caller;
use envhost::runtime::Limits;
use envhost::{CreateError, DataError, EnvironmentConfig, Host, HostConfig, SeedError};
use envhost_tests::guest;
use serde_json::{Map, Value, json};

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn alice() -> Caller {
    Caller {
        role: Some("alice".into()),
        session: None,
    }
}

async fn host(max_episodes: usize, pooling: bool) -> Host {
    let mut config = HostConfig::new(vec![
        EnvironmentConfig::new("slack", guest("slack")),
        EnvironmentConfig::new("faulty", guest("faulty")),
    ]);
    config.max_episodes = max_episodes;
    config.pooling = pooling;
    Host::new(config).await.unwrap()
}

fn seed() -> Vec<Part> {
    let data = json!({"channels": [{"name": "general"}]});
    vec![serde_json::from_value(json!({"kind": "data", "data": data})).unwrap()]
}

#[tokio::test]
async fn episodes_are_isolated_and_answer_as_over_http() {
    let host = host(8, true).await;
    assert!(host.is_pooled());
    let a = host.create_episode("slack").await.unwrap();
    let b = host.create_episode("slack").await.unwrap();
    assert_ne!(a.id(), b.id());
    a.add_data(seed()).await.unwrap();

    let sent = a
        .call_tool(
            "slack_send_message",
            args(json!({"channel": "general", "text": "hi"})),
            alice(),
        )
        .await;
    assert!(!sent.is_error);
    let missing = b
        .call_tool(
            "slack_send_message",
            args(json!({"channel": "general", "text": "hi"})),
            alice(),
        )
        .await;
    assert_eq!(missing.structured().unwrap()["code"], "channel_not_found");
    let unknown = a.call_tool("nope", Map::new(), alice()).await;
    assert!(unknown.is_error);
    let listed: Vec<&str> = a
        .tools(&alice())
        .iter()
        .map(|t| t.tool.name.as_str())
        .collect();
    assert_eq!(
        listed,
        [
            "slack_list_channels",
            "slack_list_inbox",
            "slack_send_message"
        ]
    );

    let data = a.get_data().await.unwrap();
    let Part::Data { data, .. } = &data[0] else {
        panic!("{data:?}")
    };
    assert_eq!(data.to_map().unwrap()["messages"][0]["from"], "alice");
    assert!(matches!(
        a.add_data(Vec::new()).await,
        Err(DataError::Params(_))
    ));

    let route = a
        .catalog()
        .route("/agentenv/ext/example/slack-stats/get", &http::Method::GET)
        .unwrap();
    let stats = a
        .call_extension(route, Map::new(), Caller::default())
        .await
        .unwrap();
    assert_eq!(stats, json!({"channels": 1, "messages": 1}));

    assert!(host.drop_episode(a.id()));
    assert!(!host.drop_episode(a.id()));
    assert!(host.episode(a.id()).is_none());
    assert!(matches!(
        host.create_episode("nope").await,
        Err(CreateError::UnknownEnvironment { .. })
    ));
}

#[tokio::test]
async fn the_cap_refuses_and_frees() {
    let host = host(2, true).await;
    let a = host.create_episode("slack").await.unwrap();
    let _b = host.create_episode("slack").await.unwrap();
    assert!(matches!(
        host.create_episode("slack").await,
        Err(CreateError::Full { max: 2 })
    ));
    host.drop_episode(a.id());
    host.create_episode("slack").await.unwrap();
    let metrics = host.metrics().encode();
    assert!(
        metrics.contains("envhost_episodes_refused_total 1"),
        "{metrics}"
    );
    assert!(metrics.contains("envhost_episodes_live 2"), "{metrics}");
}

/// A canary: an episode writes a pattern across its memory; a new episode, in the slot it left
/// (the pool reuses the most recent slot of the same component), finds none of it.
async fn canary(pooling: bool) {
    const SECRET: u8 = 0xA5;
    let host = host(1, pooling).await;
    let first = host.create_episode("faulty").await.unwrap();
    let scan = || args(json!({"byte": SECRET}));
    let filled = first
        .call_tool(
            "fill",
            args(json!({"byte": SECRET, "mib": 8})),
            Caller::default(),
        )
        .await;
    assert!(!filled.is_error, "{filled:?}");
    let seen = first.call_tool("scan", scan(), Caller::default()).await;
    let pages = seen.structured().unwrap()["result"].as_u64().unwrap();
    assert!(
        pages >= 2000,
        "the writer sees its own pattern: {pages} pages"
    );
    assert!(host.drop_episode(first.id()));
    drop(first);

    let second = host.create_episode("faulty").await.unwrap();
    let seen = second.call_tool("scan", scan(), Caller::default()).await;
    assert_eq!(
        seen.structured().unwrap()["result"],
        0,
        "no page of the old episode"
    );
}

#[tokio::test]
async fn a_reused_pool_slot_shows_nothing_of_its_previous_episode() {
    canary(true).await;
}

#[tokio::test]
async fn an_on_demand_instance_shows_nothing_of_a_previous_one() {
    canary(false).await;
}

#[tokio::test]
async fn a_full_queue_refuses_and_a_slow_call_times_out() {
    let mut config = HostConfig::new(vec![EnvironmentConfig {
        limits: Limits {
            max_queued_calls: 1,
            call_timeout: Duration::from_millis(200),
            ..Limits::default()
        },
        ..EnvironmentConfig::new("faulty", guest("faulty"))
    }]);
    config.max_episodes = 4;
    let host = host_from(config).await;
    let episode = host.create_episode("faulty").await.unwrap();
    let after = |ms, tool: &'static str, arguments: Value| {
        let episode = &episode;
        async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            episode
                .call_tool(tool, args(arguments), Caller::default())
                .await
        }
    };
    let (first, second, third) = tokio::join!(
        after(0, "slow", json!({"ms": 400})),
        after(20, "slow", json!({"ms": 400})),
        after(50, "echo", json!({"text": "x"})),
    );
    assert_eq!(first.structured().unwrap()["code"], "timeout");
    assert_eq!(second.structured().unwrap()["code"], "timeout");
    let busy = third.structured().unwrap();
    assert_eq!(
        (busy["code"].as_str(), busy["retryable"].as_bool()),
        (Some("busy"), Some(true))
    );
}

#[tokio::test]
async fn a_call_whose_caller_goes_away_still_runs_to_its_end() {
    let host = host(4, true).await;
    let episode = host.create_episode("faulty").await.unwrap();
    let slow = episode.call_tool("slow", args(json!({"ms": 300})), Caller::default());
    let abandoned = tokio::time::timeout(Duration::from_millis(50), slow).await;
    assert!(abandoned.is_err(), "the caller gave up before the answer");
    let echoed = episode
        .call_tool("echo", args(json!({"text": "x"})), Caller::default())
        .await;
    assert_eq!(
        echoed.structured().unwrap()["result"],
        "x (2 calls)",
        "the abandoned call ran to its end before the next one"
    );
}

async fn host_from(config: HostConfig) -> Host {
    Host::new(config).await.unwrap()
}

#[tokio::test]
async fn idle_episodes_are_evicted() {
    let mut config = HostConfig::new(vec![EnvironmentConfig {
        idle_timeout: Some(Duration::from_millis(100)),
        ..EnvironmentConfig::new("slack", guest("slack"))
    }]);
    config.max_episodes = 4;
    let host = host_from(config).await;
    let kept = host.create_episode("slack").await.unwrap();
    let idle = host.create_episode("slack").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    kept.get_data().await.unwrap();
    assert_eq!(host.evict_idle(None), 1);
    assert!(host.episode(idle.id()).is_none());
    assert!(host.episode(kept.id()).is_some());
}

#[tokio::test]
async fn a_seeded_episode_is_made_in_one_call_or_not_at_all() {
    let host = host(10, true).await;
    let episode = host.create_seeded_episode("slack", seed()).await.unwrap();
    let Part::Data { data, .. } = &episode.get_data().await.unwrap()[0] else {
        panic!("a data part");
    };
    assert_eq!(data.to_map().unwrap()["channels"][0]["name"], "general");
    let refused = json!({"messages": [{"channel": "nowhere", "text": "hi"}]});
    let refused = vec![serde_json::from_value(json!({"kind": "data", "data": refused})).unwrap()];
    let Err(e) = host.create_seeded_episode("slack", refused).await else {
        panic!("a seed naming an unknown channel is refused");
    };
    assert!(
        matches!(e, SeedError::Data(DataError::Failed(ref m)) if m.contains("unknown channel")),
        "{e}"
    );
    assert!(matches!(
        host.create_seeded_episode("nope", seed()).await,
        Err(SeedError::Create(CreateError::UnknownEnvironment { .. }))
    ));
    assert_eq!(host.episodes().len(), 1);
}
