//! `x11-driver`: the reference X11 computer driver as a component. It captures the root window
//! and sends input through XTEST, both through the host's `x11` capability (granted with
//! `--display :N`), with the reference driver's semantics: a 40 ms gap between the clicks of a
//! double click, drags moved every 20 px or so over their duration, wheel buttons 4–7, chords
//! pressed in order and released in reverse, typing by key events only (a spare keycode
//! remapped for a character the keyboard lacks; Shift released after the character's key; keys
//! already held left as they are), and a round trip to the server before each answer.

mod keys;

use std::collections::HashMap;

use envhost_sdk::computer::{
    Applied, Button, Capture, DisplayState, DriverError, ErrorCode, FeatureSet, Key, Point,
    ReadyCheck, ScrollDirection, computer_driver, timing, x11,
};
use keys::{Keymap, Need, Stroke, char_keysym, keysym};

/// The gap between the clicks of a double or triple click.
const CLICK_GAP_MS: u32 = 40;
/// About how far apart a drag's moves are, in pixels.
const DRAG_STEP_PX: f64 = 20.0;

/// The driver: what it keeps between operations, the keymap it read and the keycodes each held
/// key pressed.
#[derive(Default)]
struct X11Driver {
    keymap: Option<Keymap>,
    held: HashMap<String, Vec<u8>>,
}

fn error(code: ErrorCode, message: impl Into<String>, applied: Applied) -> DriverError {
    DriverError::new(code, message).applied(applied)
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
    DriverError::delivery_failed(message)
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

/// The keysyms of canonical keys, or `unsupported` for a key this driver has none for.
fn key_syms(keys: &[String]) -> Result<Vec<(u32, String)>, DriverError> {
    keys.iter()
        .map(|k| {
            keysym(k).map(|s| (s, format!("'{k}'"))).ok_or_else(|| {
                DriverError::unsupported(format!("this driver has no X keysym for '{k}'"))
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

/// The keymap and what it takes to press keys on it.
impl X11Driver {
    /// The keymap, read from the server the first time.
    fn keymap(&mut self) -> Result<&mut Keymap, DriverError> {
        let keymap = match self.keymap.take() {
            Some(keymap) => keymap,
            None => {
                let (first, rows) = x11::keyboard_mapping().map_err(read_failed)?;
                Keymap::new(first, rows)
            }
        };
        Ok(self.keymap.insert(keymap))
    }

    /// How to press each of `syms`, remapping spare keycodes where needed; refuses before
    /// anything is sent when a keysym cannot be placed.
    fn strokes(&mut self, syms: &[(u32, String)]) -> Result<Vec<Stroke>, DriverError> {
        let keymap = self.keymap()?;
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
                    return Err(DriverError::unsupported(format!(
                        "no spare keycode is free to type {shown}"
                    )));
                }
            }
        }
        let columns = keymap.columns();
        for (keycode, sym) in remaps {
            x11::change_keyboard_mapping(keycode, &vec![sym; columns]).map_err(input_failed)?;
            keymap.remap(keycode, sym);
        }
        Ok(plan)
    }

    /// Presses the keys of `keys` not already down, in order; answers the keycodes it pressed.
    fn hold(&mut self, keys: &[String]) -> Result<Vec<u8>, DriverError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let plan = self.strokes(&key_syms(keys)?)?;
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
}

#[computer_driver(
    name = "x11",
    supports = r#"[{"os": {"type": "linux", "display": ["x11"]}, "arch": ["amd64", "arm64"]}]"#
)]
impl X11Driver {
    #[features]
    fn features(&self) -> FeatureSet {
        FeatureSet {
            buttons: vec![
                Button::Left,
                Button::Right,
                Button::Middle,
                Button::Back,
                Button::Forward,
            ],
            max_click_count: 3,
            max_drag_points: 50,
            ..FeatureSet::default()
        }
    }

    #[display]
    fn screen(&self) -> Result<DisplayState, DriverError> {
        let (width, height) = x11::screen_size().map_err(read_failed)?;
        Ok(DisplayState {
            width,
            height,
            scale: 1.0,
        })
    }

    #[capture]
    fn grab(&self) -> Result<Capture, DriverError> {
        x11::capture_root().map(Capture::Held).map_err(read_failed)
    }

    #[ready_checks]
    fn xtest(&self) -> Vec<ReadyCheck> {
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

    #[click]
    fn click_at(
        &mut self,
        at: Point,
        which: Button,
        count: u32,
        modifiers: Vec<Key>,
    ) -> Result<(), DriverError> {
        let held = self.hold(&modifiers)?;
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

    #[drag]
    fn drag_along(
        &mut self,
        path: Vec<Point>,
        which: Button,
        duration_ms: u32,
        modifiers: Vec<Key>,
    ) -> Result<(), DriverError> {
        let Some(&start) = path.first() else {
            return Ok(());
        };
        let held = self.hold(&modifiers)?;
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

    #[scroll]
    fn scroll_at(
        &mut self,
        at: Point,
        direction: ScrollDirection,
        amount: u32,
        modifiers: Vec<Key>,
    ) -> Result<(), DriverError> {
        let held = self.hold(&modifiers)?;
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

    #[type_text]
    fn type_in(
        &mut self,
        text: String,
        tap_hold_ms: u32,
        type_delay_ms: u32,
    ) -> Result<(), DriverError> {
        let syms: Vec<(u32, String)> = text
            .chars()
            .map(|c| (char_keysym(c), format!("{c:?}")))
            .collect();
        let plan = self.strokes(&syms)?;
        let shift = self.keymap()?.shift();
        for (i, stroke) in plan.into_iter().enumerate() {
            if i > 0 {
                timing::sleep(type_delay_ms);
            }
            tap(stroke, shift, tap_hold_ms)?;
        }
        sync()
    }

    #[press]
    fn press_keys(&mut self, keys: Vec<Key>, tap_hold_ms: u32) -> Result<(), DriverError> {
        let pressed = self.hold(&keys)?;
        sync()?;
        timing::sleep(tap_hold_ms);
        release(&pressed)?;
        sync()
    }

    #[pointer_move]
    fn move_pointer(&mut self, at: Point) -> Result<(), DriverError> {
        motion(at)?;
        sync()
    }

    #[pointer_down]
    fn down(&mut self, which: Button) -> Result<(), DriverError> {
        button(button_number(which), true)?;
        sync()
    }

    #[pointer_up]
    fn up(&mut self, which: Button) -> Result<(), DriverError> {
        button(button_number(which), false)?;
        sync()
    }

    #[pointer_position]
    fn where_is(&self) -> Result<Point, DriverError> {
        x11::query_pointer().map_err(read_failed)
    }

    #[key_down]
    fn keys_down(&mut self, keys: Vec<Key>) -> Result<(), DriverError> {
        let plan = self.strokes(&key_syms(&keys)?)?;
        let down = down_now()?;
        for (name, stroke) in keys.iter().zip(plan) {
            if down.contains(&stroke.keycode) {
                continue;
            }
            key(stroke.keycode, true)?;
            self.held
                .entry(name.clone())
                .or_default()
                .push(stroke.keycode);
        }
        sync()
    }

    #[key_up]
    fn keys_up(&mut self, keys: Vec<Key>) -> Result<(), DriverError> {
        for name in &keys {
            match self.held.remove(name) {
                Some(keycodes) => release(&keycodes)?,
                None => {
                    let strokes = self.strokes(&key_syms(std::slice::from_ref(name))?)?;
                    if let Some(stroke) = strokes.first() {
                        key(stroke.keycode, false)?;
                    }
                }
            }
        }
        sync()
    }
}
