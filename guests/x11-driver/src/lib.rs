//! `x11-driver`: the reference X11 computer driver as a component. It captures the root window
//! and sends input through XTEST, both through the host's `x11` capability (granted with
//! `--display :N`), with the reference driver's semantics: a 40 ms gap between the clicks of a
//! double click, drags moved every 20 px or so over their duration, wheel buttons 4–7, chords
//! pressed in order and released in reverse, typing by key events only (a spare keycode
//! remapped for a character the keyboard lacks; Shift released after the character's key; keys
//! already held left as they are), and a round trip to the server before each answer.

mod keys;

use std::cell::RefCell;
use std::collections::HashMap;

use keys::{Keymap, Need, Stroke, char_keysym, keysym};

wit_bindgen::generate!({
    inline: r#"
        package envhost:x11-driver;

        world x11-driver {
            include agentenv:computer/driver@0.1.0;
            export agentenv:computer/pointer@0.1.0;
            export agentenv:computer/keyboard@0.1.0;
        }
    "#,
    path: "../../wit/computer",
    generate_all,
});

use agentenv::computer::types::{
    Applied, Button, DisplayState, DriverError, ErrorCode, FeatureSet, Point, ReadyCheck,
    ScrollDirection,
};
use agentenv::computer::{timing, x11};
use exports::agentenv::computer::operations::{CaptureImage, Guest as Operations};
use exports::agentenv::computer::{keyboard, pointer};

/// The gap between the clicks of a double or triple click.
const CLICK_GAP_MS: u32 = 40;
/// About how far apart a drag's moves are, in pixels.
const DRAG_STEP_PX: f64 = 20.0;

/// What the driver keeps between operations: the keymap it read, and the keycodes each held
/// key pressed.
#[derive(Default)]
struct State {
    keymap: Option<Keymap>,
    held: HashMap<String, Vec<u8>>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn error(code: ErrorCode, message: impl Into<String>, applied: Applied) -> DriverError {
    DriverError {
        code,
        message: message.into(),
        hint: None,
        applied,
    }
}

/// An X failure of a read: the display is unavailable.
fn read_failed(e: x11::X11Error) -> DriverError {
    match e {
        x11::X11Error::Unavailable(m) => error(ErrorCode::DeviceUnavailable, m, Applied::No),
        x11::X11Error::RequestFailed(m) => error(ErrorCode::Internal, m, Applied::Unknown),
    }
}

/// An X failure while sending input: delivery failed, input may have arrived.
fn input_failed(e: x11::X11Error) -> DriverError {
    let message = match e {
        x11::X11Error::Unavailable(m) | x11::X11Error::RequestFailed(m) => m,
    };
    error(ErrorCode::DeliveryFailed, message, Applied::Unknown)
}

fn button_number(button: Button) -> u8 {
    match button {
        Button::Left => 1,
        Button::Middle => 2,
        Button::Right => 3,
        Button::Back => 8,
        Button::Forward => 9,
    }
}

/// Runs `f` with the keymap, read from the server the first time.
fn with_keymap<T>(f: impl FnOnce(&mut Keymap) -> Result<T, DriverError>) -> Result<T, DriverError> {
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        if state.keymap.is_none() {
            let (first, rows) = x11::keyboard_mapping().map_err(read_failed)?;
            state.keymap = Some(Keymap::new(first, rows));
        }
        match state.keymap.as_mut() {
            Some(keymap) => f(keymap),
            None => Err(error(ErrorCode::Internal, "no keymap", Applied::No)),
        }
    })
}

/// How to press each of `syms`, remapping spare keycodes where needed; refuses before
/// anything is sent when a keysym cannot be placed.
fn strokes(syms: &[(u32, String)]) -> Result<Vec<Stroke>, DriverError> {
    with_keymap(|keymap| {
        let mut plan = Vec::with_capacity(syms.len());
        let mut taken: Vec<u8> = Vec::new();
        let mut remaps: Vec<(u8, u32)> = Vec::new();
        for (sym, shown) in syms {
            if let Some(&(keycode, _)) = remaps.iter().find(|(_, s)| s == sym) {
                plan.push(Stroke {
                    keycode,
                    shift: false,
                });
                continue;
            }
            match keymap.find(*sym, &taken) {
                Some(Need::Ready(stroke)) => plan.push(stroke),
                Some(Need::Remap(keycode)) => {
                    taken.push(keycode);
                    remaps.push((keycode, *sym));
                    plan.push(Stroke {
                        keycode,
                        shift: false,
                    });
                }
                None => {
                    return Err(error(
                        ErrorCode::Unsupported,
                        format!("no spare keycode is free to type {shown}"),
                        Applied::No,
                    ));
                }
            }
        }
        let columns = keymap.columns();
        for (keycode, sym) in remaps {
            x11::change_keyboard_mapping(keycode, &vec![sym; columns]).map_err(input_failed)?;
            keymap.remap(keycode, sym);
        }
        Ok(plan)
    })
}

/// The keysyms of canonical keys, or `unsupported` for a key this driver has none for.
fn key_syms(keys: &[String]) -> Result<Vec<(u32, String)>, DriverError> {
    keys.iter()
        .map(|k| {
            keysym(k).map(|s| (s, format!("'{k}'"))).ok_or_else(|| {
                error(
                    ErrorCode::Unsupported,
                    format!("this driver has no X keysym for '{k}'"),
                    Applied::No,
                )
            })
        })
        .collect()
}

fn down_now() -> Result<Vec<u8>, DriverError> {
    x11::query_keymap().map_err(read_failed)
}

fn key(keycode: u8, down: bool) -> Result<(), DriverError> {
    x11::fake_key(keycode, down).map_err(input_failed)
}

fn sync() -> Result<(), DriverError> {
    x11::sync().map_err(input_failed)
}

/// Presses the keys of `keys` not already down, in order; answers the keycodes it pressed.
fn hold(keys: &[String]) -> Result<Vec<u8>, DriverError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let plan = strokes(&key_syms(keys)?)?;
    let down = down_now()?;
    let mut pressed = Vec::new();
    for stroke in plan {
        if !down.contains(&stroke.keycode) && !pressed.contains(&stroke.keycode) {
            key(stroke.keycode, true)?;
            pressed.push(stroke.keycode);
        }
    }
    Ok(pressed)
}

/// Releases `pressed` in reverse order.
fn release(pressed: &[u8]) -> Result<(), DriverError> {
    for &keycode in pressed.iter().rev() {
        key(keycode, false)?;
    }
    Ok(())
}

fn motion(at: Point) -> Result<(), DriverError> {
    x11::fake_motion(at).map_err(input_failed)
}

fn button(number: u8, down: bool) -> Result<(), DriverError> {
    x11::fake_button(number, down).map_err(input_failed)
}

/// Types one character's stroke: Shift first when it needs it and is not down, the key held
/// `hold_ms`, the key released, then Shift.
fn tap(stroke: Stroke, shift: Option<u8>, hold_ms: u32) -> Result<(), DriverError> {
    let down = down_now()?;
    let shift_pressed = match (stroke.shift, shift) {
        (true, Some(shift)) if !down.contains(&shift) => {
            key(shift, true)?;
            Some(shift)
        }
        _ => None,
    };
    key(stroke.keycode, true)?;
    sync()?;
    timing::sleep(hold_ms);
    key(stroke.keycode, false)?;
    if let Some(shift) = shift_pressed {
        key(shift, false)?;
    }
    Ok(())
}

struct Component;

impl Operations for Component {
    fn name() -> String {
        "x11".into()
    }

    fn features() -> FeatureSet {
        FeatureSet {
            buttons: vec![
                Button::Left,
                Button::Right,
                Button::Middle,
                Button::Back,
                Button::Forward,
            ],
            max_click_count: 3,
            keys: None,
            max_text_length: 10_000,
            max_wait_ms: 60_000,
            max_drag_points: 50,
            max_duration_ms: 10_000,
            max_key_repeat: 100,
            max_scroll_amount: 100,
            platform: None,
            supports:
                r#"[{"os": {"type": "linux", "display": ["x11"]}, "arch": ["amd64", "arm64"]}]"#
                    .into(),
        }
    }

    fn display() -> Result<DisplayState, DriverError> {
        let (width, height) = x11::screen_size().map_err(read_failed)?;
        Ok(DisplayState {
            width,
            height,
            scale: 1.0,
        })
    }

    fn capture() -> Result<CaptureImage, DriverError> {
        x11::capture_root()
            .map(CaptureImage::Held)
            .map_err(read_failed)
    }

    fn ready_checks() -> Vec<ReadyCheck> {
        let (ok, detail) = match x11::has_xtest() {
            Ok(true) => (true, "XTEST available".to_owned()),
            Ok(false) => (false, "XTEST missing".to_owned()),
            Err(x11::X11Error::Unavailable(m) | x11::X11Error::RequestFailed(m)) => (false, m),
        };
        vec![ReadyCheck {
            name: "xtest".into(),
            ok,
            detail,
        }]
    }

    fn click(
        at: Point,
        which: Button,
        count: u32,
        modifiers: Vec<String>,
    ) -> Result<(), DriverError> {
        let held = hold(&modifiers)?;
        motion(at)?;
        let number = button_number(which);
        for i in 0..count {
            button(number, true)?;
            button(number, false)?;
            sync()?;
            if i + 1 < count {
                timing::sleep(CLICK_GAP_MS);
            }
        }
        release(&held)?;
        sync()
    }

    fn drag(
        path: Vec<Point>,
        which: Button,
        duration_ms: u32,
        modifiers: Vec<String>,
    ) -> Result<(), DriverError> {
        let Some(&start) = path.first() else {
            return Ok(());
        };
        let held = hold(&modifiers)?;
        let number = button_number(which);
        motion(start)?;
        button(number, true)?;
        sync()?;
        let steps: Vec<usize> = path
            .windows(2)
            .map(|pair| {
                let (dx, dy) = (
                    f64::from(pair[1].x - pair[0].x),
                    f64::from(pair[1].y - pair[0].y),
                );
                ((dx.hypot(dy) / DRAG_STEP_PX) as usize).max(2)
            })
            .collect();
        let total: usize = steps.iter().sum::<usize>().max(1);
        let pause = duration_ms / u32::try_from(total).unwrap_or(u32::MAX).max(1);
        for (pair, n) in path.windows(2).zip(steps) {
            for i in 1..=n {
                let t = i as f64 / n as f64;
                let x = f64::from(pair[0].x) + f64::from(pair[1].x - pair[0].x) * t;
                let y = f64::from(pair[0].y) + f64::from(pair[1].y - pair[0].y) * t;
                motion(Point {
                    x: x.round() as i32,
                    y: y.round() as i32,
                })?;
                sync()?;
                timing::sleep(pause);
            }
        }
        button(number, false)?;
        release(&held)?;
        sync()
    }

    fn scroll(
        at: Point,
        direction: ScrollDirection,
        amount: u32,
        modifiers: Vec<String>,
    ) -> Result<(), DriverError> {
        let held = hold(&modifiers)?;
        motion(at)?;
        let number = match direction {
            ScrollDirection::Up => 4,
            ScrollDirection::Down => 5,
            ScrollDirection::Left => 6,
            ScrollDirection::Right => 7,
        };
        for _ in 0..amount {
            button(number, true)?;
            button(number, false)?;
        }
        release(&held)?;
        sync()
    }

    fn type_text(text: String, tap_hold_ms: u32, type_delay_ms: u32) -> Result<(), DriverError> {
        let syms: Vec<(u32, String)> = text
            .chars()
            .map(|c| (char_keysym(c), format!("{c:?}")))
            .collect();
        let plan = strokes(&syms)?;
        let shift = with_keymap(|keymap| Ok(keymap.shift()))?;
        for (i, stroke) in plan.into_iter().enumerate() {
            if i > 0 {
                timing::sleep(type_delay_ms);
            }
            tap(stroke, shift, tap_hold_ms)?;
        }
        sync()
    }

    fn press(keys: Vec<String>, tap_hold_ms: u32) -> Result<(), DriverError> {
        let pressed = hold(&keys)?;
        sync()?;
        timing::sleep(tap_hold_ms);
        release(&pressed)?;
        sync()
    }
}

impl pointer::Guest for Component {
    fn move_to(at: Point) -> Result<(), DriverError> {
        motion(at)?;
        sync()
    }

    fn button_down(which: Button) -> Result<(), DriverError> {
        button(button_number(which), true)?;
        sync()
    }

    fn button_up(which: Button) -> Result<(), DriverError> {
        button(button_number(which), false)?;
        sync()
    }

    fn position() -> Result<Point, DriverError> {
        x11::query_pointer().map_err(read_failed)
    }
}

impl keyboard::Guest for Component {
    fn key_down(keys: Vec<String>) -> Result<(), DriverError> {
        let plan = strokes(&key_syms(&keys)?)?;
        let down = down_now()?;
        for (name, stroke) in keys.iter().zip(plan) {
            if down.contains(&stroke.keycode) {
                continue;
            }
            key(stroke.keycode, true)?;
            STATE.with(|s| {
                s.borrow_mut()
                    .held
                    .entry(name.clone())
                    .or_default()
                    .push(stroke.keycode)
            });
        }
        sync()
    }

    fn key_up(keys: Vec<String>) -> Result<(), DriverError> {
        for name in &keys {
            let pressed = STATE.with(|s| s.borrow_mut().held.remove(name));
            match pressed {
                Some(keycodes) => release(&keycodes)?,
                None => {
                    if let Some(stroke) = strokes(&key_syms(std::slice::from_ref(name))?)?.first() {
                        key(stroke.keycode, false)?;
                    }
                }
            }
        }
        sync()
    }
}

export!(Component);
