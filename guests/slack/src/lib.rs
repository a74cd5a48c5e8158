//! The slack example environment, the same as `tests/reference-ports/slack/reference.py` on the
//! Python reference SDK: channels and messages, four tools (one hidden until granted), a stats
//! extension, and an additive, all-or-nothing data plane.

mod seed;

use envhost_sdk::{EnvError, Part, ToolContext, environment};
use schemars::JsonSchema;
use serde::Serialize;

use seed::Staged;

// A channel and its topic. (No doc comment: schemars would make it the schema's description,
// which the reference's TypedDict has none of.)
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Channel {
    name: String,
    topic: String,
}

// A message; `from` is the role that sent it, `to` the role it is addressed to.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[schemars(rename = "MessageOut")]
pub struct Message {
    channel: String,
    text: String,
    #[serde(rename = "from")]
    #[schemars(required, schema_with = "nullable_string")]
    sender: Option<String>,
    #[schemars(required, schema_with = "nullable_string")]
    to: Option<String>,
}

/// A string or null that is always present (schemars drops the null of a required `Option`).
fn nullable_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "null"]})
}

/// The whole state, as `data/get` answers it.
#[derive(Serialize)]
struct Export<'a> {
    channels: &'a [Channel],
    messages: &'a [Message],
}

/// Channel and message counts.
#[derive(Serialize)]
struct Stats {
    channels: usize,
    messages: usize,
}

/// The environment's state: channels in insertion order, messages in append order.
#[derive(Default)]
pub struct Slack {
    channels: Vec<Channel>,
    messages: Vec<Message>,
}

impl Slack {
    fn channel_mut(&mut self, name: &str) -> Option<&mut Channel> {
        self.channels.iter_mut().find(|c| c.name == name)
    }

    fn require_channel(&self, name: &str) -> Result<(), EnvError> {
        if self.channels.iter().any(|c| c.name == name) {
            Ok(())
        } else {
            Err(channel_not_found(name).hint("list the channels with the list_channels tool"))
        }
    }
}

fn channel_not_found(name: &str) -> EnvError {
    EnvError::new("channel_not_found", format!("no channel named '{name}'"))
}

#[environment(name = "slack", tool_access)]
impl Slack {
    #[reset]
    fn reset(&mut self) {
        self.channels.clear();
        self.messages.clear();
    }

    /// Loads every part or none: channels upsert by name, messages append and must name a
    /// channel that exists before or within this add.
    #[add_data]
    fn add(&mut self, parts: Vec<Part>) -> Result<(), EnvError> {
        let mut staged = Staged::new(&self.channels);
        for part in parts {
            staged.part(part)?;
        }
        let (channels, messages) = staged.into_parts();
        self.channels = channels;
        self.messages.extend(messages);
        Ok(())
    }

    #[get_data]
    fn get(&self) -> Result<Vec<Part>, EnvError> {
        Ok(vec![Part::data_of(&Export {
            channels: &self.channels,
            messages: &self.messages,
        })?])
    }

    /// Post a message to a channel, from the calling role, optionally addressed to another role.
    #[tool(name = "{environment_name}_send_message")]
    fn send_message(
        &mut self,
        ctx: ToolContext,
        #[arg(description = "The name of the channel to post in.")] channel: String,
        #[arg(description = "The message text.")] text: String,
        #[arg(description = "The role the message is addressed to, if any.")] to: Option<String>,
    ) -> Result<String, EnvError> {
        self.require_channel(&channel)?;
        self.messages.push(Message {
            channel,
            text,
            sender: ctx.caller.role,
            to,
        });
        Ok("ok".into())
    }

    /// List the messages addressed to the calling role, oldest first.
    #[tool(name = "{environment_name}_list_inbox")]
    fn list_inbox(&self, ctx: ToolContext) -> Vec<Message> {
        let Some(role) = ctx.caller.role else {
            return Vec::new();
        };
        self.messages
            .iter()
            .filter(|m| m.to.as_deref() == Some(role.as_str()))
            .cloned()
            .collect()
    }

    /// List every channel with its topic.
    #[tool(
        name = "{environment_name}_list_channels",
        annotations(read_only_hint = true)
    )]
    fn list_channels(&self) -> Vec<Channel> {
        self.channels.clone()
    }

    /// Delete every message of a channel; answers how many were deleted. Hidden until granted to a role.
    #[tool(name = "{environment_name}_admin_purge", hidden_by_default)]
    fn admin_purge(
        &mut self,
        #[arg(description = "The channel whose messages to delete.")] channel: String,
    ) -> Result<usize, EnvError> {
        self.require_channel(&channel)?;
        let before = self.messages.len();
        self.messages.retain(|m| m.channel != channel);
        Ok(before - self.messages.len())
    }

    #[extension(
        uri = "urn:example:slack-stats/v1",
        op = "get",
        method = "GET",
        description = "Channel and message counts, and channel topics."
    )]
    fn stats_get(&self) -> Stats {
        Stats {
            channels: self.channels.len(),
            messages: self.messages.len(),
        }
    }

    #[extension(
        uri = "urn:example:slack-stats/v1",
        op = "set-topic",
        method = "POST",
        description = "Channel and message counts, and channel topics."
    )]
    fn stats_set_topic(&mut self, channel: String, topic: String) -> Result<Channel, EnvError> {
        let found = self
            .channel_mut(&channel)
            .ok_or_else(|| channel_not_found(&channel).status(404))?;
        found.topic = topic;
        Ok(found.clone())
    }
}
