//! Write a computer driver in Rust: a component of the `agentenv:computer` package
//! (`wit/computer/computer.wit`) that envhost serves as the agentenv `computer/v1` contract.
//!
//! A driver is a `Default` type and one `impl` block under [`computer_driver`], its methods
//! marked with the operation each performs, as the reference SDK's decorators mark them:
//! `#[display]`, `#[capture]`, `#[click]`, `#[drag]`, `#[scroll]`, `#[type_text]` and `#[press]`
//! (required); `#[pointer_move]`, `#[pointer_down]`, `#[pointer_up]` and `#[pointer_position]`
//! (the pointer group, all or none); `#[key_down]` and `#[key_up]` (the keyboard group);
//! `#[display_modes]` and `#[set_display]` (a settable display); `#[ready_checks]` and
//! `#[features]` (optional). The attribute implements [`Driver`] and the groups' traits,
//! generates the bindings of the world that exports exactly those groups, and exports the
//! component.
//!
//! ```
//! use envhost_sdk::computer::{
//!     computer_driver, Button, Capture, DisplayState, DriverError, FeatureSet, Key, Point,
//!     RgbImage, ScrollDirection,
//! };
//!
//! #[derive(Default)]
//! struct Blank;
//!
//! #[computer_driver(name = "blank")]
//! impl Blank {
//!     #[features]
//!     fn features(&self) -> FeatureSet {
//!         FeatureSet { max_click_count: 3, ..FeatureSet::default() }
//!     }
//!     #[display]
//!     fn display(&self) -> DisplayState {
//!         DisplayState { width: 64, height: 48, scale: 1.0 }
//!     }
//!     #[capture]
//!     fn capture(&mut self) -> Capture {
//!         Capture::Drawn(RgbImage { width: 64, height: 48, rgb: vec![255; 64 * 48 * 3] })
//!     }
//!     #[click]
//!     fn click(&mut self, at: Point, button: Button, count: u32, modifiers: Vec<Key>) {}
//!     #[drag]
//!     fn drag(&mut self, path: Vec<Point>, button: Button, duration_ms: u32, modifiers: Vec<Key>) {}
//!     #[scroll]
//!     fn scroll(&mut self, at: Point, direction: ScrollDirection, amount: u32, modifiers: Vec<Key>) {}
//!     #[type_text]
//!     fn type_text(&mut self, text: String, tap_hold_ms: u32, type_delay_ms: u32) -> Result<(), DriverError> {
//!         Err(DriverError::unsupported("the blank screen has no keyboard"))
//!     }
//!     #[press]
//!     fn press(&mut self, keys: Vec<Key>, tap_hold_ms: u32) {}
//! }
//! # fn main() {}
//! ```

mod capture;
mod driver;
mod error;
mod export;
mod features;

/// Guest-side bindings of the driver's imports; the WIT documents every type.
#[doc(hidden)]
pub mod bindings;

pub use capture::Capture;
pub use driver::{DisplayModes, Driver, Keyboard, Pointer};
pub use envhost_sdk_macros::computer_driver;

pub use bindings::agentenv::computer::pixels::Captured;
pub use bindings::agentenv::computer::types::{
    Applied, Button, DisplayState, DriverError, ErrorCode, FeatureSet, IndexedImage, Key, Platform,
    Point, ReadyCheck, RgbImage, ScrollDirection,
};
pub use bindings::agentenv::computer::{timing, x11};
