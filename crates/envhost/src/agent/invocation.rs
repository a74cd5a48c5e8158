//! What a turn is asked to do (docs/agents.md#turns): the Agent Handler's `scope` and `prompt`,
//! with envhost's `episode` extension naming the episode the agent acts on.

use envhost_runtime::agent::bindings::agentenv::agent::types as wit;

/// The conversation a turn belongs to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    /// The session: one turn runs in it at a time; its history carries over between turns.
    pub session: String,
    /// The session this one branches from, read at its creation (fastagent's `parentSession`).
    pub parent_session: Option<String>,
    /// Hints for a branch (fastagent's `branchHints`).
    pub branch_hints: Vec<String>,
    /// The episode of the agent's environment its tool calls act on; over HTTP the served
    /// environment's root episode when `None`. In process it must be given.
    pub episode: Option<String>,
}

impl Scope {
    /// The session `session`, acting on the episode `episode`.
    pub fn new(session: impl Into<String>, episode: impl Into<String>) -> Self {
        Self {
            session: session.into(),
            episode: Some(episode.into()),
            ..Self::default()
        }
    }

    pub(crate) fn to_wit(&self) -> wit::Scope {
        wit::Scope {
            session: self.session.clone(),
            parent_session: self.parent_session.clone(),
            branch_hints: self.branch_hints.clone(),
        }
    }
}

/// An image of a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Its media type, e.g. `image/png`.
    pub mime_type: String,
    /// Its bytes, base64.
    pub data: String,
}

/// What the caller asks of a turn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prompt {
    /// The text.
    pub text: String,
    /// Images, in order.
    pub images: Vec<Image>,
}

impl Prompt {
    /// A prompt of `text` alone.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            images: Vec::new(),
        }
    }

    pub(crate) fn into_wit(self) -> wit::Prompt {
        wit::Prompt {
            text: self.text,
            images: self
                .images
                .into_iter()
                .map(|i| wit::ImageRef {
                    mime_type: i.mime_type,
                    data: i.data,
                })
                .collect(),
        }
    }
}
