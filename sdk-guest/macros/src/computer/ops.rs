//! The operations a driver marks, as the reference SDK's decorators name them, and the groups
//! they form.

/// One operation a method can be marked with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    Display,
    Capture,
    Click,
    Drag,
    Scroll,
    TypeText,
    Press,
    PointerMove,
    PointerDown,
    PointerUp,
    PointerPosition,
    KeyDown,
    KeyUp,
    DisplayModes,
    SetDisplay,
    ReadyChecks,
    Features,
    ExportState,
    Seed,
}

/// The required operations, in the reference's order.
pub const REQUIRED: [Op; 7] = [
    Op::Display,
    Op::Capture,
    Op::Click,
    Op::Drag,
    Op::Scroll,
    Op::TypeText,
    Op::Press,
];

/// An optional group: a driver marks all of its operations or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    /// The group's name in messages.
    pub name: &'static str,
    /// The name the export glue knows it by.
    pub key: &'static str,
    /// Its operations.
    pub ops: &'static [Op],
}

/// The optional groups, in the order their interfaces appear in the world names.
pub const GROUPS: [Group; 3] = [
    Group {
        name: "pointer",
        key: "pointer",
        ops: &[
            Op::PointerMove,
            Op::PointerDown,
            Op::PointerUp,
            Op::PointerPosition,
        ],
    },
    Group {
        name: "keyboard",
        key: "keyboard",
        ops: &[Op::KeyDown, Op::KeyUp],
    },
    Group {
        name: "display-modes",
        key: "display_modes",
        ops: &[Op::DisplayModes, Op::SetDisplay],
    },
];

const ALL: [Op; 19] = [
    Op::Display,
    Op::Capture,
    Op::Click,
    Op::Drag,
    Op::Scroll,
    Op::TypeText,
    Op::Press,
    Op::PointerMove,
    Op::PointerDown,
    Op::PointerUp,
    Op::PointerPosition,
    Op::KeyDown,
    Op::KeyUp,
    Op::DisplayModes,
    Op::SetDisplay,
    Op::ReadyChecks,
    Op::Features,
    Op::ExportState,
    Op::Seed,
];

impl Op {
    /// The operation an attribute name marks.
    pub fn from_marker(name: &str) -> Option<Op> {
        ALL.into_iter().find(|op| op.marker() == name)
    }

    /// The attribute that marks it, without `#[]`.
    pub fn marker(self) -> &'static str {
        match self {
            Op::Display => "display",
            Op::Capture => "capture",
            Op::Click => "click",
            Op::Drag => "drag",
            Op::Scroll => "scroll",
            Op::TypeText => "type_text",
            Op::Press => "press",
            Op::PointerMove => "pointer_move",
            Op::PointerDown => "pointer_down",
            Op::PointerUp => "pointer_up",
            Op::PointerPosition => "pointer_position",
            Op::KeyDown => "key_down",
            Op::KeyUp => "key_up",
            Op::DisplayModes => "display_modes",
            Op::SetDisplay => "set_display",
            Op::ReadyChecks => "ready_checks",
            Op::Features => "features",
            Op::ExportState => "export_state",
            Op::Seed => "seed",
        }
    }

    /// The parameters the method takes after its receiver, in order, as the error shows them.
    pub fn params(self) -> &'static [&'static str] {
        match self {
            Op::Click => &[
                "at: Point",
                "button: Button",
                "count: u32",
                "modifiers: Vec<Key>",
            ],
            Op::Drag => &[
                "path: Vec<Point>",
                "button: Button",
                "duration_ms: u32",
                "modifiers: Vec<Key>",
            ],
            Op::Scroll => &[
                "at: Point",
                "direction: ScrollDirection",
                "amount: u32",
                "modifiers: Vec<Key>",
            ],
            Op::TypeText => &["text: String", "tap_hold_ms: u32", "type_delay_ms: u32"],
            Op::Press => &["keys: Vec<Key>", "tap_hold_ms: u32"],
            Op::PointerMove => &["at: Point"],
            Op::PointerDown | Op::PointerUp => &["button: Button"],
            Op::KeyDown | Op::KeyUp => &["keys: Vec<Key>"],
            Op::SetDisplay => &["width: u32", "height: u32", "scale: f64"],
            Op::Seed => &["json: String"],
            Op::Display
            | Op::Capture
            | Op::PointerPosition
            | Op::DisplayModes
            | Op::ReadyChecks
            | Op::Features
            | Op::ExportState => &[],
        }
    }

    /// Whether the contract's operation answers a `result`, so that the method may return
    /// either `Result<T, DriverError>` or `T`.
    pub fn fallible(self) -> bool {
        !matches!(
            self,
            Op::DisplayModes | Op::ReadyChecks | Op::Features | Op::ExportState
        )
    }
}
