//! Reading `data/add` parts into channels and messages, all or nothing.

use envhost_sdk::{EnvError, FileSource, Part};
use serde_json::{Map, Value};

use crate::{Channel, Message};

/// An add in progress: a copy of the channels with this add's upserts, and its new messages.
pub struct Staged {
    channels: Vec<Channel>,
    messages: Vec<Message>,
}

fn invalid(message: impl Into<String>) -> EnvError {
    EnvError::new("invalid_data", message)
}

fn optional_string(value: Option<&Value>, what: &str) -> Result<Option<String>, EnvError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(format!("{what} must be a string or null"))),
    }
}

fn list<'a>(payload: &'a Map<String, Value>, key: &str) -> Option<&'a [Value]> {
    match payload.get(key) {
        None => Some(&[]),
        Some(Value::Array(items)) => Some(items),
        Some(_) => None,
    }
}

impl Staged {
    /// Starts from the current channels.
    pub fn new(channels: &[Channel]) -> Self {
        Self {
            channels: channels.to_vec(),
            messages: Vec::new(),
        }
    }

    /// Stages one part: text is ignored, data and file parts carry `{"channels", "messages"}`.
    pub fn part(&mut self, part: Part) -> Result<(), EnvError> {
        let payload = match part {
            Part::Text(_) => return Ok(()),
            Part::Data(d) => Value::Object(d.data),
            Part::File(f) => match f.file {
                FileSource::Bytes(bytes) => serde_json::from_slice(&bytes)
                    .map_err(|e| invalid(format!("the file part is not JSON: {e}")))?,
                FileSource::Uri(uri) => {
                    return Err(invalid(format!("the file part {uri} was not fetched")));
                }
            },
        };
        self.payload(&payload)
    }

    fn payload(&mut self, payload: &Value) -> Result<(), EnvError> {
        let Value::Object(payload) = payload else {
            return Err(invalid(
                "the data must be a JSON object with 'channels' and/or 'messages'",
            ));
        };
        let (Some(channels), Some(messages)) =
            (list(payload, "channels"), list(payload, "messages"))
        else {
            return Err(invalid("'channels' and 'messages' must be lists"));
        };
        for (i, channel) in channels.iter().enumerate() {
            self.channel(i, channel)?;
        }
        for (i, message) in messages.iter().enumerate() {
            self.message(i, message)?;
        }
        Ok(())
    }

    fn channel(&mut self, i: usize, channel: &Value) -> Result<(), EnvError> {
        let name = match channel.get("name") {
            Some(Value::String(name)) if !name.is_empty() => name.clone(),
            _ => {
                return Err(invalid(format!(
                    "channels[{i}] must be an object with a non-empty string 'name'"
                )));
            }
        };
        let topic = optional_string(channel.get("topic"), &format!("channels[{i}].topic"))
            .map_err(|_| invalid(format!("channels[{i}].topic must be a string")))?
            .unwrap_or_default();
        match self.channels.iter_mut().find(|c| c.name == name) {
            Some(existing) => existing.topic = topic,
            None => self.channels.push(Channel { name, topic }),
        }
        Ok(())
    }

    fn message(&mut self, i: usize, message: &Value) -> Result<(), EnvError> {
        let (Some(Value::String(channel)), Some(Value::String(text))) =
            (message.get("channel"), message.get("text"))
        else {
            return Err(invalid(format!(
                "messages[{i}] must be an object with string 'channel' and 'text'"
            )));
        };
        if !self.channels.iter().any(|c| &c.name == channel) {
            return Err(invalid(format!(
                "messages[{i}] names unknown channel '{channel}'"
            )));
        }
        self.messages.push(Message {
            channel: channel.clone(),
            text: text.clone(),
            sender: optional_string(message.get("from"), &format!("messages[{i}].from"))?,
            to: optional_string(message.get("to"), &format!("messages[{i}].to"))?,
        });
        Ok(())
    }

    /// The channels and the new messages, to commit.
    pub fn into_parts(self) -> (Vec<Channel>, Vec<Message>) {
        (self.channels, self.messages)
    }
}
