//! The prebuilt bodies of a client's `tools/call` requests.

use std::fmt::Write as _;

use super::data_plane::CHANNEL;
use bytes::{BufMut as _, Bytes, BytesMut};
use serde_json::{Map, Value};

/// The `tools/call` bodies of one client, from a prebuilt template: only the request id and, for
/// the slack message, the message number change from call to call.
pub struct CallTemplate {
    /// The body up to the request id.
    head: &'static [u8],
    /// From after the id: the tool and the fixed arguments; for the slack message, up to the
    /// message number (`"bench <i> `).
    middle: Vec<u8>,
    /// The end of the body: after the message number, or nothing for fixed arguments.
    tail: &'static [u8],
    /// Whether the message number goes between `middle` and `tail`.
    numbered: bool,
    /// The buffer bodies are written into; a body's memory is reused once it has been sent.
    buffer: BytesMut,
}

impl CallTemplate {
    /// The template of client `client` calling `tool` with `arguments`, or without them with the
    /// slack message (`channel` bench, `to` sink, `text` numbered per call).
    pub fn new(tool: &str, client: usize, arguments: Option<&Map<String, Value>>) -> Self {
        let name = Value::from(tool).to_string();
        let call = format!(r#","method":"tools/call","params":{{"name":{name},"arguments":"#);
        let (middle, tail, numbered) = match arguments {
            Some(arguments) => {
                let arguments = Value::Object(arguments.clone());
                (format!("{call}{arguments}}}}}"), &b""[..], false)
            }
            None => {
                let channel = Value::from(CHANNEL).to_string();
                let middle =
                    format!(r#"{call}{{"channel":{channel},"to":"sink","text":"bench {client} "#);
                (middle, &br#""}}}"#[..], true)
            }
        };
        Self {
            head: br#"{"jsonrpc":"2.0","id":"#,
            middle: middle.into_bytes(),
            tail,
            numbered,
            buffer: BytesMut::new(),
        }
    }

    /// The body of request `id` sending message number `n` (unused with fixed arguments).
    pub fn body(&mut self, id: u64, n: u64) -> Bytes {
        self.buffer
            .reserve(self.head.len() + self.middle.len() + self.tail.len() + 40);
        self.buffer.put_slice(self.head);
        // Writing into a BytesMut with room reserved cannot fail.
        let _ = write!(self.buffer, "{id}");
        self.buffer.put_slice(&self.middle);
        if self.numbered {
            let _ = write!(self.buffer, "{n}");
        }
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
        let mut template = CallTemplate::new("slack_send_message", 3, None);
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

    #[test]
    fn fixed_arguments_are_sent_verbatim() {
        let arguments = json!({"by": 1}).as_object().cloned().unwrap();
        let mut template = CallTemplate::new("counter_add", 3, Some(&arguments));
        let value: Value = serde_json::from_slice(&template.body(7, 5)).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "counter_add", "arguments": {"by": 1}}})
        );
    }
}
