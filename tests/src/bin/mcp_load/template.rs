//! The prebuilt bodies of a client's `tools/call` requests.

use std::fmt::Write as _;

use bytes::{BufMut as _, Bytes, BytesMut};
use envhost_tests::load::data_plane::CHANNEL;
use serde_json::Value;

/// The `tools/call` bodies of one client, from a prebuilt template: only the request id and the
/// message number change from call to call.
pub(crate) struct CallTemplate {
    /// The body up to the request id.
    head: &'static [u8],
    /// From after the id to the message number: the tool, the fixed arguments, `"bench <i> `.
    middle: Vec<u8>,
    /// The end of the body.
    tail: &'static [u8],
    /// The buffer bodies are written into; a body's memory is reused once it has been sent.
    buffer: BytesMut,
}

impl CallTemplate {
    /// The template of client `client` calling `tool`.
    pub(crate) fn new(tool: &str, client: usize) -> Self {
        let name = Value::from(tool).to_string();
        let channel = Value::from(CHANNEL).to_string();
        let middle = format!(
            r#","method":"tools/call","params":{{"name":{name},"arguments":{{"channel":{channel},"to":"sink","text":"bench {client} "#
        );
        Self {
            head: br#"{"jsonrpc":"2.0","id":"#,
            middle: middle.into_bytes(),
            tail: br#""}}}"#,
            buffer: BytesMut::new(),
        }
    }

    /// The body of request `id` sending message number `n`.
    pub(crate) fn body(&mut self, id: u64, n: u64) -> Bytes {
        self.buffer
            .reserve(self.head.len() + self.middle.len() + self.tail.len() + 40);
        self.buffer.put_slice(self.head);
        // Writing into a BytesMut with room reserved cannot fail.
        let _ = write!(self.buffer, "{id}");
        self.buffer.put_slice(&self.middle);
        let _ = write!(self.buffer, "{n}");
        self.buffer.put_slice(self.tail);
        self.buffer.split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_bodies_are_json() {
        let mut template = CallTemplate::new("slack_send_message", 3);
        let first = template.body(2, 0);
        let second = template.body(3, 1);
        let value: Value = serde_json::from_slice(&second).unwrap();
        assert_eq!(value["id"], 3);
        assert_eq!(value["params"]["name"], "slack_send_message");
        assert_eq!(
            value["params"]["arguments"],
            json!({"channel": "bench", "to": "sink", "text": "bench 3 1"})
        );
        assert_eq!(serde_json::from_slice::<Value>(&first).unwrap()["id"], 2);
    }
}
