//! The seed the bench adds: 20 channels and N messages of about 100 bytes each, every one
//! addressed to the role that lists its inbox, as one `data/add` request's bytes.

use serde_json::{Value, json};

/// The role every message is addressed to, whose inbox the bench lists.
pub const READER: &str = "reader";
/// The channels of every seed.
const CHANNELS: usize = 20;

/// The `data` object of a seed with `messages` messages.
pub fn data(messages: usize) -> Value {
    let channels: Vec<Value> = (0..CHANNELS)
        .map(|c| json!({"name": format!("c{c:02}"), "topic": format!("topic of channel {c}")}))
        .collect();
    let messages: Vec<Value> = (0..messages)
        .map(|i| {
            json!({
                "channel": format!("c{:02}", i % CHANNELS),
                "text": format!("message {i:06}: the quick brown fox jumps over it"),
                "from": "writer",
                "to": READER,
            })
        })
        .collect();
    json!({"channels": channels, "messages": messages})
}

/// The bytes of a `data/add` request (id 1) of the seed with `messages` messages.
pub fn add_request(messages: usize) -> Vec<u8> {
    let request = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "data/add",
        "params": {"parts": [{"kind": "data", "data": data(messages)}]},
    });
    serde_json::to_vec(&request).unwrap_or_default()
}

/// The bytes of a `data/get` request (id 1).
pub fn get_request() -> &'static [u8] {
    br#"{"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {}}"#
}
