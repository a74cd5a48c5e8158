//! A driver instance's journal: every input operation it was given, in order, with its
//! arguments. Replaying the journal into a fresh instance of a deterministic driver (one that
//! draws its own desktop, like `guests/desk`) rebuilds the same state: that is a fork.

use super::bindings::agentenv::computer::types::{Button, Point, ScrollDirection};

/// One input operation, as the driver was called with it.
#[derive(Clone, Debug)]
pub enum Input {
    /// `click`.
    Click {
        /// Where, in display pixels.
        at: Point,
        /// Which button.
        button: Button,
        /// How many presses.
        count: u32,
        /// Keys held around it.
        modifiers: Vec<String>,
    },
    /// `drag`.
    Drag {
        /// The points passed through, in display pixels.
        path: Vec<Point>,
        /// Which button.
        button: Button,
        /// About how long, in ms.
        duration_ms: u32,
        /// Keys held around it.
        modifiers: Vec<String>,
    },
    /// `scroll`.
    Scroll {
        /// Where, in display pixels.
        at: Point,
        /// Which way.
        direction: ScrollDirection,
        /// How many notches.
        amount: u32,
        /// Keys held around it.
        modifiers: Vec<String>,
    },
    /// `type-text`.
    Type {
        /// The text.
        text: String,
        /// How long each key is held, in ms.
        tap_hold_ms: u32,
        /// The pause after each character, in ms.
        type_delay_ms: u32,
    },
    /// `press`.
    Press {
        /// The chord's keys.
        keys: Vec<String>,
        /// How long the chord is held, in ms.
        tap_hold_ms: u32,
    },
    /// The pointer group's `move-to`.
    Move {
        /// Where, in display pixels.
        at: Point,
    },
    /// The pointer group's `button-down` (`down`) or `button-up`.
    Button {
        /// Which button.
        button: Button,
        /// Pressed, or released.
        down: bool,
    },
    /// The keyboard group's `key-down` (`down`) or `key-up`.
    Keys {
        /// The keys.
        keys: Vec<String>,
        /// Pressed, or released.
        down: bool,
    },
    /// `seed`: the desktop's state set from JSON text.
    Seed {
        /// The state.
        json: String,
    },
    /// The display-modes group's `set-display`.
    SetDisplay {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// Scale.
        scale: f64,
    },
}

impl Input {
    /// The group the operation belongs to, when it is not a required one.
    pub(super) fn group(&self) -> Option<&'static str> {
        match self {
            Self::Move { .. } | Self::Button { .. } => Some("pointer"),
            Self::Keys { .. } => Some("keyboard"),
            Self::SetDisplay { .. } => Some("display-modes"),
            _ => None,
        }
    }
}
