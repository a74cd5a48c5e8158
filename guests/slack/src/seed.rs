//! Reading `data/add` parts into channels and messages, all or nothing.
//!
//! A part is read into typed structs in one pass ([`SeedIn`]); one that does not fit them (a
//! field of another type, a key given twice, an array where an object belongs) is read again
//! through a [`Value`], which finds the same first error the reference reports, in its words.

use std::collections::HashSet;
use std::marker::PhantomData;

use envhost_sdk::{EnvError, FileSource, Part};
use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::{Channel, Message};

/// A `T` read only from a JSON object (serde's derive would also read a struct from an array).
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor(PhantomData))
    }
}

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = Object<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(Object)
    }
}

/// A part's payload as the typed reading sees it.
#[derive(Deserialize)]
struct SeedIn {
    #[serde(default)]
    channels: Vec<Object<ChannelIn>>,
    #[serde(default)]
    messages: Vec<Object<MessageIn>>,
}

/// A channel of a payload.
#[derive(Deserialize)]
struct ChannelIn {
    name: String,
    #[serde(default)]
    topic: Option<String>,
}

/// A message of a payload.
#[derive(Deserialize)]
struct MessageIn {
    channel: String,
    text: String,
    #[serde(default)]
    from: Option<String>,
    #[serde(default)]
    to: Option<String>,
}

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
            Part::Data(d) => match d.data.read::<Object<SeedIn>>() {
                Ok(Object(seed)) => return self.seed(seed),
                Err(_) => Value::Object(d.data.to_map()),
            },
            Part::File(f) => match f.file {
                FileSource::Bytes(bytes) => {
                    match serde_json::from_slice::<Object<SeedIn>>(&bytes) {
                        Ok(Object(seed)) => return self.seed(seed),
                        Err(_) => serde_json::from_slice(&bytes)
                            .map_err(|e| invalid(format!("the file part is not JSON: {e}")))?,
                    }
                }
                FileSource::Uri(uri) => {
                    return Err(invalid(format!("the file part {uri} was not fetched")));
                }
            },
        };
        self.payload(&payload)
    }

    /// Stages a payload read into typed structs: only the checks types cannot make are left.
    fn seed(&mut self, seed: SeedIn) -> Result<(), EnvError> {
        for (i, Object(channel)) in seed.channels.into_iter().enumerate() {
            if channel.name.is_empty() {
                return Err(invalid(format!(
                    "channels[{i}] must be an object with a non-empty string 'name'"
                )));
            }
            self.upsert(channel.name, channel.topic.unwrap_or_default());
        }
        let names: HashSet<&str> = self.channels.iter().map(|c| c.name.as_str()).collect();
        self.messages.reserve(seed.messages.len());
        for (i, Object(message)) in seed.messages.into_iter().enumerate() {
            if !names.contains(message.channel.as_str()) {
                return Err(invalid(format!(
                    "messages[{i}] names unknown channel '{}'",
                    message.channel
                )));
            }
            self.messages.push(Message {
                channel: message.channel,
                text: message.text,
                sender: message.from,
                to: message.to,
            });
        }
        Ok(())
    }

    /// Adds channel `name`, or sets its topic when it exists.
    fn upsert(&mut self, name: String, topic: String) {
        match self.channels.iter_mut().find(|c| c.name == name) {
            Some(existing) => existing.topic = topic,
            None => self.channels.push(Channel { name, topic }),
        }
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
        self.upsert(name, topic);
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
