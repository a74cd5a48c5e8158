//! The traits `#[computer_driver]` implements for the type it is given: [`Driver`] for the
//! required operations, and one trait per optional group. Implement them by hand only to do
//! without the macro (and then export them with bindings of your own).
//!
//! Every point is in screen pixels, checked by the host to be on the display; every key is a
//! canonical W3C key value; every count and duration is within the driver's features. An
//! operation answers once its input has been delivered.

use super::{
    Button, Capture, DisplayState, DriverError, FeatureSet, Key, Point, ReadyCheck, ScrollDirection,
};

/// A computer driver's required operations (computer.md#the-world).
///
/// One value of the type, created with `Default`, lives as long as the component instance; the
/// host calls one operation at a time.
pub trait Driver: Default + 'static {
    /// The card's name unless the operator names the driver.
    const NAME: &'static str;

    /// What the driver can do (the card's `computer/v1` params), checked by the host when the
    /// component is loaded.
    fn features(&mut self) -> FeatureSet {
        FeatureSet::default()
    }

    /// The display now.
    ///
    /// # Errors
    /// Typically `device-unavailable` when the display cannot be reached.
    fn display(&mut self) -> Result<DisplayState, DriverError>;

    /// The whole display at its native size.
    ///
    /// # Errors
    /// Typically `device-unavailable` when the display cannot be reached.
    fn capture(&mut self) -> Result<Capture, DriverError>;

    /// Checks of the driver's own for readiness, after the host's `display` and `capture`.
    fn ready_checks(&mut self) -> Vec<ReadyCheck> {
        Vec::new()
    }

    /// The desktop's state as JSON text, for a driver whose desktop is its own: `data/get`
    /// answers it as a `data` part. `None` (the default) for a driver whose state lives
    /// elsewhere; a driver answers always or never.
    fn export_state(&mut self) -> Option<String> {
        None
    }

    /// Seeds the desktop's state from JSON text, the `data` of a `data/add` part.
    ///
    /// # Errors
    /// `unsupported` by default; `invalid-argument` for a state the driver cannot take.
    fn seed(&mut self, json: String) -> Result<(), DriverError> {
        let _ = json;
        Err(DriverError::unsupported(
            "this driver keeps no state of its own to seed",
        ))
    }

    /// Holds `modifiers` in order, moves to `at`, clicks `button` `count` times, releases the
    /// modifiers in reverse order.
    ///
    /// # Errors
    /// Any [`DriverError`]; `unsupported` for a button the driver lacks.
    fn click(
        &mut self,
        at: Point,
        button: Button,
        count: u32,
        modifiers: Vec<Key>,
    ) -> Result<(), DriverError>;

    /// Holds `modifiers`, presses `button` at the first point of `path` (two points or more),
    /// moves through every point over about `duration_ms`, releases at the last.
    ///
    /// # Errors
    /// Any [`DriverError`].
    fn drag(
        &mut self,
        path: Vec<Point>,
        button: Button,
        duration_ms: u32,
        modifiers: Vec<Key>,
    ) -> Result<(), DriverError>;

    /// Holds `modifiers`, moves to `at`, turns the wheel `amount` notches in `direction`.
    ///
    /// # Errors
    /// Any [`DriverError`].
    fn scroll(
        &mut self,
        at: Point,
        direction: ScrollDirection,
        amount: u32,
        modifiers: Vec<Key>,
    ) -> Result<(), DriverError>;

    /// Types `text` through key events (`\n` is Enter, `\t` Tab), each character held
    /// `tap_hold_ms`, `type_delay_ms` between characters.
    ///
    /// # Errors
    /// `unsupported`, before anything is typed, for text that cannot be typed whole.
    fn type_text(
        &mut self,
        text: String,
        tap_hold_ms: u32,
        type_delay_ms: u32,
    ) -> Result<(), DriverError>;

    /// Presses the chord `keys` in order, holds it `tap_hold_ms`, releases what it pressed in
    /// reverse order.
    ///
    /// # Errors
    /// Any [`DriverError`]; `unsupported` for a key the driver lacks.
    fn press(&mut self, keys: Vec<Key>, tap_hold_ms: u32) -> Result<(), DriverError>;
}

/// The pointer group (computer.md#pointer): `#[pointer_move]`, `#[pointer_down]`,
/// `#[pointer_up]` and `#[pointer_position]`.
pub trait Pointer: Driver {
    /// Moves the pointer to `at`.
    ///
    /// # Errors
    /// Any [`DriverError`].
    fn pointer_move(&mut self, at: Point) -> Result<(), DriverError>;

    /// Presses `button` where the pointer is.
    ///
    /// # Errors
    /// Any [`DriverError`].
    fn pointer_down(&mut self, button: Button) -> Result<(), DriverError>;

    /// Releases `button` where the pointer is.
    ///
    /// # Errors
    /// Any [`DriverError`].
    fn pointer_up(&mut self, button: Button) -> Result<(), DriverError>;

    /// Where the pointer is, in screen pixels.
    ///
    /// # Errors
    /// Any [`DriverError`].
    fn pointer_position(&mut self) -> Result<Point, DriverError>;
}

/// The keyboard group (computer.md#keyboard): `#[key_down]` and `#[key_up]`.
pub trait Keyboard: Driver {
    /// Presses `keys` in order, leaving keys already down as they are, and keeps them down.
    ///
    /// # Errors
    /// Any [`DriverError`].
    fn key_down(&mut self, keys: Vec<Key>) -> Result<(), DriverError>;

    /// Releases `keys` in the order given.
    ///
    /// # Errors
    /// Any [`DriverError`].
    fn key_up(&mut self, keys: Vec<Key>) -> Result<(), DriverError>;
}

/// A settable display (computer.md#display): `#[display_modes]` and `#[set_display]`.
pub trait DisplayModes: Driver {
    /// The sizes the display can take, `(width, height)` in screen pixels; the host serves
    /// `set` only when there is one or more.
    fn display_modes(&mut self) -> Vec<(u32, u32)>;

    /// Sets the display to one of the modes at `scale`; answers the display now.
    ///
    /// # Errors
    /// Any [`DriverError`].
    fn set_display(
        &mut self,
        width: u32,
        height: u32,
        scale: f64,
    ) -> Result<DisplayState, DriverError>;
}
