//! Turns of `guests/tool-agent` bound to a slack episode, through the host's broker, with a
//! Chat Completions server on loopback as the model (a queue of scripted answers): the events
//! of a turn with a tool call, the episode changed by the call, the session carried to the next
//! turn. The Agent Handler contract itself is checked by `agent_spec`.

use std::sync::Arc;

use envhost::agent::model::ModelEndpoint;
use envhost::agent::{AgentEvents, Prompt, Scope};
use envhost::protocol::Part;
use envhost::{AgentConfig, EnvironmentConfig, Episode, Host, HostConfig};
use envhost_tests::guest;
use envhost_tests::model::{Answer, Model, serve, tool_call};
use serde_json::{Value, json};

/// A host serving slack and the agent `tool` bound to it; one seeded episode.
struct Rig {
    host: Host,
    episode: Arc<Episode>,
}

async fn model(answers: Vec<Answer>) -> (ModelEndpoint, Arc<Model>) {
    let (url, model) = serve(answers).await;
    (ModelEndpoint::new(&url, None).unwrap(), model)
}

async fn setup(endpoint: ModelEndpoint) -> Rig {
    let mut config = HostConfig::new(vec![EnvironmentConfig::new("slack", guest("slack"))]);
    let mut agent = AgentConfig::new("tool", guest("tool_agent"), "slack");
    agent.model = "scripted".into();
    config.agents.push(agent);
    config.model = Some(endpoint);
    let host = Host::new(config).await.unwrap();
    let episode = host.create_episode("slack").await.unwrap();
    let seed = json!({"channels": [{"name": "general", "topic": ""}], "messages": []});
    episode
        .add_data(vec![
            serde_json::from_value::<Part>(json!({"kind": "data", "data": seed})).unwrap(),
        ])
        .await
        .unwrap();
    Rig { host, episode }
}

impl Rig {
    fn invoke(&self, session: &str, text: &str) -> AgentEvents {
        let scope = Scope::new(session, self.episode.id());
        self.host.invoke("tool", scope, Prompt::text(text)).unwrap()
    }
}

async fn events(rig: &Rig, session: &str, text: &str) -> Vec<Value> {
    let mut reader = rig.invoke(session, text);
    let mut events = Vec::new();
    while let Some(event) = reader.recv().await {
        events.push(event.to_json());
    }
    events
}

#[tokio::test]
async fn a_turn_calls_an_episode_tool_between_tool_events_and_completes() {
    let args = json!({"channel": "general", "text": "hello from the agent"});
    let (endpoint, model) = model(vec![
        Answer::Stream(vec![
            json!({"reasoning_content": "Post it."}),
            tool_call("call_1", "slack_send_message", &args),
        ]),
        Answer::Stream(vec![json!({"content": "Posted."})]),
        Answer::Stream(vec![json!({"content": "Still here."})]),
    ])
    .await;
    let rig = setup(endpoint).await;
    let turn = events(&rig, "s1", "post hello").await;
    assert_eq!(turn[0], json!({"type": "thinking", "delta": "Post it."}));
    assert_eq!(
        turn[1],
        json!({"type": "tool_started", "id": "call_1", "name": "slack_send_message", "args": args})
    );
    assert_eq!(turn[2]["type"], "tool_ended");
    assert_eq!(turn[2]["id"], "call_1");
    assert_eq!(turn[2]["isError"], false);
    assert_eq!(turn[3], json!({"type": "text", "delta": "Posted."}));
    assert_eq!(turn[4], json!({"type": "completed"}));
    assert_eq!(turn.len(), 5);

    let data = rig.episode.get_data().await.unwrap();
    let shown = serde_json::to_string(&data).unwrap();
    assert!(shown.contains("hello from the agent"), "{shown}");

    let again = events(&rig, "s1", "still there?").await;
    assert_eq!(again.last().unwrap(), &json!({"type": "completed"}));
    let requests = model.requests.lock().unwrap();
    let third: Vec<&str> = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(third, ["user", "assistant", "tool", "assistant", "user"]);
    assert_eq!(requests[0]["model"], "scripted");
    assert!(
        requests[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "slack_send_message")
    );
}
