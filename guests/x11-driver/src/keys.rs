//! W3C key values as X keysyms, and keysyms as keycodes on the server's keyboard mapping,
//! taking a spare keycode for a keysym the mapping lacks (as the reference driver does).

use std::collections::HashMap;

/// X keysyms this driver presses by name.
const SHIFT_L: u32 = 0xffe1;

/// The keysym of canonical W3C key `key`, or `None` when this driver has none.
pub fn keysym(key: &str) -> Option<u32> {
    let mut chars = key.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(char_keysym(c));
    }
    let named = match key {
        "Enter" => 0xff0d,
        "Tab" => 0xff09,
        "Escape" => 0xff1b,
        "Backspace" => 0xff08,
        "Delete" => 0xffff,
        "ArrowUp" => 0xff52,
        "ArrowDown" => 0xff54,
        "ArrowLeft" => 0xff51,
        "ArrowRight" => 0xff53,
        "Home" => 0xff50,
        "End" => 0xff57,
        "PageUp" => 0xff55,
        "PageDown" => 0xff56,
        "Insert" => 0xff63,
        "Control" => 0xffe3,
        "Shift" => SHIFT_L,
        "Alt" => 0xffe9,
        "Meta" | "Super" => 0xffeb,
        "CapsLock" => 0xffe5,
        "ContextMenu" => 0xff67,
        "PrintScreen" => 0xff61,
        "Pause" => 0xff13,
        _ => {
            let n: u32 = key.strip_prefix('F')?.parse().ok()?;
            if !(1..=24).contains(&n) {
                return None;
            }
            0xffbe + n - 1
        }
    };
    Some(named)
}

/// The keysym of a typed character: `\n` is Return, `\t` Tab, Latin-1 itself, the rest
/// `0x01000000` plus the code point.
pub fn char_keysym(c: char) -> u32 {
    match c {
        '\n' => 0xff0d,
        '\t' => 0xff09,
        c if (c as u32) < 0x100 => c as u32,
        c => 0x0100_0000 + c as u32,
    }
}

/// How a keysym is pressed: a keycode, with Shift or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stroke {
    pub keycode: u8,
    pub shift: bool,
}

/// The keyboard mapping as read from the server, and the spare keycodes taken.
pub struct Keymap {
    first: u8,
    rows: Vec<Vec<u32>>,
    /// Keysyms put on spare keycodes, by keysym.
    remapped: HashMap<u32, u8>,
}

/// What must change on the server for a keysym to be typed.
pub enum Need {
    /// It is there.
    Ready(Stroke),
    /// Keycode `.0` must be mapped to the keysym first.
    Remap(u8),
}

impl Keymap {
    /// The mapping whose first keycode is `first`, a row of keysyms per keycode.
    pub fn new(first: u8, rows: Vec<Vec<u32>>) -> Self {
        Self {
            first,
            rows,
            remapped: HashMap::new(),
        }
    }

    fn keycode(&self, row: usize) -> u8 {
        self.first
            .saturating_add(u8::try_from(row).unwrap_or(u8::MAX))
    }

    /// How to press `keysym`, or the spare keycode to map it to; `None` when no spare is free.
    pub fn find(&self, keysym: u32, spares_taken: &[u8]) -> Option<Need> {
        if let Some(&keycode) = self.remapped.get(&keysym) {
            return Some(Need::Ready(Stroke {
                keycode,
                shift: false,
            }));
        }
        for (row, syms) in self.rows.iter().enumerate() {
            match syms.iter().position(|&s| s == keysym) {
                Some(0) => {
                    return Some(Need::Ready(Stroke {
                        keycode: self.keycode(row),
                        shift: false,
                    }));
                }
                Some(1) => {
                    return Some(Need::Ready(Stroke {
                        keycode: self.keycode(row),
                        shift: true,
                    }));
                }
                _ => {}
            }
        }
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, syms)| syms.iter().all(|&s| s == 0))
            .map(|(row, _)| self.keycode(row))
            .find(|k| !self.remapped.values().any(|v| v == k) && !spares_taken.contains(k))
            .map(Need::Remap)
    }

    /// Records that `keycode` now types `keysym` in every column.
    pub fn remap(&mut self, keycode: u8, keysym: u32) {
        if let Some(row) = usize::from(keycode).checked_sub(usize::from(self.first))
            && let Some(syms) = self.rows.get_mut(row)
        {
            syms.iter_mut().for_each(|s| *s = keysym);
        }
        self.remapped.insert(keysym, keycode);
    }

    /// The columns a keycode has.
    pub fn columns(&self) -> usize {
        self.rows.first().map_or(1, Vec::len).max(1)
    }

    /// The keycode of Shift_L.
    pub fn shift(&self) -> Option<u8> {
        match self.find(SHIFT_L, &[]) {
            Some(Need::Ready(stroke)) => Some(stroke.keycode),
            _ => None,
        }
    }
}
