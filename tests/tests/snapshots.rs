//! Snapshots, forks and restores through the embedding API: forks answer `data/get` byte for
//! byte like their original and then go their own way, replays are exact even for a guest that
//! reads clocks and random, a fault loses nothing accepted before it, and snapshots of another
//! component or with a tampered journal are refused with clear errors.

use std::sync::Arc;

use envhost::protocol::Content;
use envhost::protocol::part::Part;
use envhost::protocol::role::Caller;
use envhost::runtime::{AnswerHash, CallError, Journal, Snapshot};
use envhost::{CreateError, EnvironmentConfig, Episode, Host, HostConfig, SnapshotError};
use envhost_tests::guest;
use serde_json::{Map, Value, json};

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn alice() -> Caller {
    Caller {
        role: Some("alice".into()),
        session: Some("s1".into()),
    }
}

async fn host(environments: &[&str]) -> Host {
    let configs = environments
        .iter()
        .map(|name| EnvironmentConfig::new(*name, guest(name)))
        .collect();
    let mut config = HostConfig::new(configs);
    config.max_episodes = 32;
    Host::new(config).await.unwrap()
}

async fn seeded_slack(host: &Host) -> Arc<Episode> {
    let episode = host.create_episode("slack").await.unwrap();
    let data = json!({"channels": [{"name": "general"}, {"name": "random"}]});
    let part: Part = serde_json::from_value(json!({"kind": "data", "data": data})).unwrap();
    episode.add_data(vec![part]).await.unwrap();
    episode
}

async fn send(episode: &Episode, text: &str) {
    let result = episode
        .call_tool(
            "slack_send_message",
            args(json!({"channel": "general", "text": text, "to": "alice"})),
            alice(),
        )
        .await;
    assert!(!result.is_error, "{result:?}");
}

async fn state(episode: &Episode) -> String {
    serde_json::to_string(&episode.get_data().await.unwrap()).unwrap()
}

async fn observe(episode: &Episode) -> Value {
    let result = episode
        .call_tool("observe", Map::new(), Caller::default())
        .await;
    let Some(Content::Text(text)) = result.content.first() else {
        panic!("observe answers text: {result:?}");
    };
    serde_json::from_str(text).expect("observe answers JSON text")
}

#[tokio::test]
async fn a_fork_starts_identical_and_goes_its_own_way() {
    let host = host(&["slack"]).await;
    let original = seeded_slack(&host).await;
    for i in 0..50 {
        send(&original, &format!("message {i}")).await;
    }
    let (snapshot, fork) = host.fork(&original).await.unwrap();
    assert_eq!(state(&fork).await, state(&original).await);

    send(&fork, "only in the fork").await;
    send(&original, "only in the original").await;
    let (fork_state, original_state) = (state(&fork).await, state(&original).await);
    assert!(
        fork_state.contains("only in the fork") && !fork_state.contains("only in the original")
    );
    assert!(
        original_state.contains("only in the original")
            && !original_state.contains("only in the fork")
    );

    let restored = host.restore(&snapshot).await.unwrap();
    let restored_state = state(&restored).await;
    assert!(restored_state.contains("message 49") && !restored_state.contains("only in"));
}

#[tokio::test]
async fn replays_of_a_guest_that_reads_clocks_and_random_are_exact() {
    let host = host(&["faulty"]).await;
    let original = host.create_episode("faulty").await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(observe(&original).await);
    }
    assert_ne!(seen[0]["random"], seen[1]["random"], "each call draws anew");

    let (snapshot, fork) = host.fork(&original).await.unwrap();
    let (next_original, next_fork) = (observe(&original).await, observe(&fork).await);
    assert_eq!(
        next_fork["random"], next_original["random"],
        "the fork's random goes on from the same state"
    );
    assert_eq!(next_fork["calls"], 6);

    let file = host.snapshot_by_id(&snapshot).unwrap().to_file();
    let text = String::from_utf8(file).unwrap();
    for observed in &seen {
        let wall = observed["wall_ns"].as_str().unwrap();
        assert!(
            text.contains(wall),
            "the journal records the wall clock reading {wall}"
        );
    }
}

#[tokio::test]
async fn restores_from_a_pre_initialised_image_go_on_exactly() {
    let host = host(&["faulty", "slack"]).await;
    let original = host.create_episode("faulty").await.unwrap();
    for _ in 0..5 {
        observe(&original).await;
    }
    let id = host.snapshot(&original).await.unwrap();
    let replayed = host.restore(&id).await.unwrap();
    assert!(
        host.prepare_image(&id).await.unwrap(),
        "faulty can be pre-initialised"
    );
    let first = host.restore(&id).await.unwrap();
    let second = host.restore(&id).await.unwrap();
    let metrics = host.metrics().encode();
    assert!(
        metrics.contains("envhost_snapshot_images_total{outcome=\"made\"} 1\n"),
        "one image made, by the first restore's background task or by prepare_image: {metrics}"
    );
    assert!(
        metrics.contains("envhost_restores_total{from=\"replay\"} 1\n")
            && metrics.contains("envhost_restores_total{from=\"image\"} 2\n"),
        "the first restore replayed, the later ones instantiated the image: {metrics}"
    );

    let expected = observe(&original).await;
    for restored in [&replayed, &first, &second] {
        let next = observe(restored).await;
        assert_eq!(next["calls"], 6, "the image holds the guest's memory");
        assert_eq!(
            next["random"], expected["random"],
            "random goes on as the original's"
        );
    }
    let trapped = second
        .call_tool("trap", Map::new(), Caller::default())
        .await;
    assert!(trapped.is_error);
    assert_eq!(
        observe(&second).await["calls"],
        7,
        "an episode restored from an image rebuilds from its journal after a fault"
    );

    let slack = seeded_slack(&host).await;
    for i in 0..30 {
        send(&slack, &format!("message {i}")).await;
    }
    let id = host.snapshot(&slack).await.unwrap();
    assert!(host.prepare_image(&id).await.unwrap());
    let restored = host.restore(&id).await.unwrap();
    assert_eq!(state(&restored).await, state(&slack).await);
    assert!(
        host.metrics()
            .encode()
            .contains("envhost_restores_total{from=\"image\"} 3\n")
    );
}

#[tokio::test]
async fn a_fault_loses_nothing_accepted_before_it() {
    let host = host(&["faulty"]).await;
    let episode = host.create_episode("faulty").await.unwrap();
    for _ in 0..3 {
        observe(&episode).await;
    }
    let trapped = episode
        .call_tool("trap", Map::new(), Caller::default())
        .await;
    assert!(trapped.is_error);
    let error = trapped.structured().unwrap();
    assert_eq!(error["code"], "guest_trapped");
    assert_eq!(error["applied"], "no");
    assert_eq!(
        observe(&episode).await["calls"],
        4,
        "the three earlier calls survived the trap"
    );
}

#[tokio::test]
async fn a_reset_starts_a_fresh_journal() {
    let host = host(&["slack"]).await;
    let episode = seeded_slack(&host).await;
    send(&episode, "before the reset").await;
    episode.reset().await.unwrap();
    let id = host.snapshot(&episode).await.unwrap();
    let snapshot = host.snapshot_by_id(&id).unwrap();
    assert_eq!(
        snapshot.journal.len(),
        1,
        "the journal holds the reset alone"
    );
    let restored = host.restore(&id).await.unwrap();
    assert_eq!(state(&restored).await, state(&episode).await);
}

#[tokio::test]
async fn snapshots_round_trip_through_their_file_into_another_host() {
    let first = host(&["slack"]).await;
    let original = seeded_slack(&first).await;
    for i in 0..20 {
        send(&original, &format!("message {i}")).await;
    }
    let id = first.snapshot(&original).await.unwrap();
    let file = first.snapshot_by_id(&id).unwrap().to_file();

    let second = host(&["slack"]).await;
    let imported = second.import_snapshot(&file).unwrap();
    let restored = second.restore(&imported).await.unwrap();
    assert_eq!(state(&restored).await, state(&original).await);
}

/// An episode of a version-2 file digests its answers with SHA-256, as the file's entries
/// are; its snapshots are version 2 again, and they replay (answers checked) in another host.
#[tokio::test]
async fn version_2_files_still_restore_and_are_saved_as_version_2() {
    let first = host(&["slack"]).await;
    let template = first.snapshot(&*seeded_slack(&first).await).await.unwrap();
    let template = first.snapshot_by_id(&template).unwrap();
    let empty = Snapshot {
        journal: Journal::with_hash(template.journal.start.clone(), AnswerHash::Sha256),
        ..(*template).clone()
    };
    let file = empty.to_file();
    assert_eq!(
        serde_json::from_slice::<Value>(&file).unwrap()["version"],
        2
    );
    let episode = first
        .restore(&first.import_snapshot(&file).unwrap())
        .await
        .unwrap();
    let data = json!({"channels": [{"name": "general"}]});
    let part: Part = serde_json::from_value(json!({"kind": "data", "data": data})).unwrap();
    episode.add_data(vec![part]).await.unwrap();
    for i in 0..5 {
        send(&episode, &format!("message {i}")).await;
    }
    let saved = first.snapshot(&episode).await.unwrap();
    let file = first.snapshot_by_id(&saved).unwrap().to_file();
    let mut parsed: Value = serde_json::from_slice(&file).unwrap();
    assert_eq!(parsed["version"], 2);

    let second = host(&["slack"]).await;
    let restored = second
        .restore(&second.import_snapshot(&file).unwrap())
        .await
        .unwrap();
    assert_eq!(state(&restored).await, state(&episode).await);

    // Read as BLAKE3 digests, the same entries diverge at the first answer.
    parsed["version"] = json!(3);
    let relabelled = serde_json::to_vec(&parsed).unwrap();
    let id = second.import_snapshot(&relabelled).unwrap();
    let Err(diverged) = second.restore(&id).await else {
        panic!("SHA-256 answers passed as BLAKE3 ones");
    };
    assert!(
        diverged.to_string().contains("journal entry 0"),
        "{diverged}"
    );
}

#[tokio::test]
async fn snapshots_of_another_component_or_a_tampered_journal_are_refused() {
    let slack = host(&["slack"]).await;
    let original = seeded_slack(&slack).await;
    send(&original, "hello").await;
    let id = slack.snapshot(&original).await.unwrap();
    let snapshot = slack.snapshot_by_id(&id).unwrap();

    let faulty = host(&["faulty"]).await;
    let refused = faulty.import_snapshot(&snapshot.to_file()).unwrap_err();
    assert!(
        matches!(refused, SnapshotError::OtherComponent { .. }),
        "{refused}"
    );
    assert!(refused.to_string().contains(&snapshot.digest));

    let mut tampered: Value = serde_json::from_slice(&snapshot.to_file()).unwrap();
    tampered["journal"][1]["answer"] = json!("00".repeat(32));
    let tampered = serde_json::to_vec(&tampered).unwrap();
    let id = slack.import_snapshot(&tampered).unwrap();
    let Err(diverged) = slack.restore(&id).await else {
        panic!("a tampered journal restored");
    };
    assert!(
        matches!(
            &diverged,
            SnapshotError::Restore(CreateError::Instantiate(CallError::Replay(_)))
        ),
        "{diverged}"
    );
    let message = diverged.to_string();
    assert!(
        message.contains("journal entry 1") && message.contains("send_message"),
        "{message}"
    );

    assert!(matches!(
        Snapshot::from_file(b"{\"format\": \"envhost-snapshot\", \"version\": 99}"),
        Err(envhost::runtime::SnapshotFileError::Version { version: 99, .. })
    ));
}
