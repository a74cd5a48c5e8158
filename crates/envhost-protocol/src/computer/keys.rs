//! Keys as W3C UI Events key values (computer.md#keys): one character, or a named key matched
//! case-insensitively and passed on in its W3C case. A refused name gets a hint, never a
//! remapping.

use difflib::sequencematcher::SequenceMatcher;

use super::errors::Code;
use crate::error::CodedError;

/// The named keys, in the reference's order.
pub const NAMED: &[&str] = &[
    "Alt",
    "AltGraph",
    "CapsLock",
    "Control",
    "Fn",
    "FnLock",
    "Hyper",
    "Meta",
    "NumLock",
    "ScrollLock",
    "Shift",
    "Super",
    "Symbol",
    "SymbolLock",
    "Enter",
    "Tab",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
    "ArrowUp",
    "End",
    "Home",
    "PageDown",
    "PageUp",
    "Backspace",
    "Clear",
    "Copy",
    "CrSel",
    "Cut",
    "Delete",
    "EraseEof",
    "ExSel",
    "Insert",
    "Paste",
    "Redo",
    "Undo",
    "Accept",
    "Again",
    "Attn",
    "Cancel",
    "ContextMenu",
    "Escape",
    "Execute",
    "Find",
    "Help",
    "Pause",
    "Play",
    "Props",
    "Select",
    "ZoomIn",
    "ZoomOut",
    "BrightnessDown",
    "BrightnessUp",
    "Eject",
    "LogOff",
    "Power",
    "PowerOff",
    "PrintScreen",
    "Hibernate",
    "Standby",
    "WakeUp",
    "F1",
    "F2",
    "F3",
    "F4",
    "F5",
    "F6",
    "F7",
    "F8",
    "F9",
    "F10",
    "F11",
    "F12",
    "F13",
    "F14",
    "F15",
    "F16",
    "F17",
    "F18",
    "F19",
    "F20",
    "F21",
    "F22",
    "F23",
    "F24",
    "AudioVolumeDown",
    "AudioVolumeMute",
    "AudioVolumeUp",
    "MediaPlayPause",
    "MediaStop",
    "MediaTrackNext",
    "MediaTrackPrevious",
    "BrowserBack",
    "BrowserFavorites",
    "BrowserForward",
    "BrowserHome",
    "BrowserRefresh",
    "BrowserSearch",
    "BrowserStop",
];

/// Spellings models use for keys, and the key each means (for the hint only).
const SPELLINGS: [(&str, &str); 23] = [
    ("ctrl", "Control"),
    ("control_l", "Control"),
    ("cmd", "Meta"),
    ("command", "Meta"),
    ("win", "Meta"),
    ("windows", "Meta"),
    ("super_l", "Meta"),
    ("option", "Alt"),
    ("opt", "Alt"),
    ("return", "Enter"),
    ("esc", "Escape"),
    ("del", "Delete"),
    ("space", "' '"),
    ("spacebar", "' '"),
    ("up", "ArrowUp"),
    ("down", "ArrowDown"),
    ("left", "ArrowLeft"),
    ("right", "ArrowRight"),
    ("pgup", "PageUp"),
    ("pgdn", "PageDown"),
    ("ins", "Insert"),
    ("menu", "ContextMenu"),
    ("print", "PrintScreen"),
];

/// Which keys a computer can press: every key, or the canonical keys its features list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Supported {
    /// `"all"`.
    All,
    /// The keys listed.
    Only(Vec<String>),
}

/// `key` as its canonical W3C value.
///
/// # Errors
/// `invalid_argument` ("'ctrl' is not a W3C key value") with a hint naming the closest valid
/// key, or for an empty key.
pub fn canonical(key: &str) -> Result<String, CodedError> {
    let mut chars = key.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Err(Code::InvalidArgument.error("a key is a W3C key value, got ''")),
        (Some(_), None) => Ok(key.to_owned()),
        _ => {
            let lower = key.to_lowercase();
            match NAMED.iter().find(|name| name.to_lowercase() == lower) {
                Some(name) => Ok((*name).to_owned()),
                None => {
                    let mut error = Code::InvalidArgument
                        .error(format!("{} is not a W3C key value", quoted(key)));
                    error.hint = Some(hint(key));
                    Err(error)
                }
            }
        }
    }
}

/// A chord's keys, canonical, refused whole when one is not a key or is not `supported`.
///
/// # Errors
/// `invalid_argument` for an empty chord or a key that is not a W3C key value; `unsupported`
/// for keys the computer lacks.
pub fn chord(keys: &[String], supported: &Supported) -> Result<Vec<String>, CodedError> {
    if keys.is_empty() {
        return Err(Code::InvalidArgument
            .error("keys is a non-empty list of W3C key values, such as ['Control', 's']"));
    }
    let names = keys
        .iter()
        .map(|k| canonical(k))
        .collect::<Result<Vec<_>, _>>()?;
    if let Supported::Only(supported) = supported {
        let lacking: Vec<&String> = names.iter().filter(|n| !supported.contains(n)).collect();
        if !lacking.is_empty() {
            let listed: Vec<String> = lacking.iter().map(|k| quoted(k)).collect();
            return Err(Code::Unsupported.error(format!(
                "this computer doesn't support the key(s) [{}]",
                listed.join(", ")
            )));
        }
    }
    Ok(names)
}

/// The hint for a key that is not a W3C key value.
fn hint(key: &str) -> String {
    let lower = key.to_lowercase();
    if key.contains('+') || key.trim().contains(' ') {
        return "one key per entry: keys is a list, such as ['Control', 's']".to_owned();
    }
    if let Some((_, meant)) = SPELLINGS.iter().find(|(spelling, _)| *spelling == lower) {
        return format!("did you mean {meant}?");
    }
    match closest(&lower) {
        Some(name) => format!("did you mean {name}?"),
        None => "named keys are W3C UI Events key values, such as Enter".to_owned(),
    }
}

/// The named key whose lowercase spelling is most like `lower` (Ratcliff/Obershelp ratio at
/// least 0.6, ties to the greater spelling, as Python's `difflib.get_close_matches`).
fn closest(lower: &str) -> Option<&'static str> {
    let mut best: Option<(f32, String, &'static str)> = None;
    for name in NAMED {
        let spelling = name.to_lowercase();
        let ratio = SequenceMatcher::new(spelling.as_str(), lower).ratio();
        if ratio < 0.6 {
            continue;
        }
        let better = best
            .as_ref()
            .is_none_or(|(r, s, _)| ratio > *r || (ratio == *r && spelling.as_str() > s.as_str()));
        if better {
            best = Some((ratio, spelling, name));
        }
    }
    best.map(|(_, _, name)| name)
}

/// `text` as Python's `repr` writes a string: single quotes unless it holds one and no double
/// quote.
pub(crate) fn quoted(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_canonicalised_case_insensitively() {
        assert_eq!(canonical("control").unwrap(), "Control");
        assert_eq!(canonical("PAGEUP").unwrap(), "PageUp");
        assert_eq!(canonical("f12").unwrap(), "F12");
        assert_eq!(canonical("a").unwrap(), "a");
        assert_eq!(canonical("東").unwrap(), "東");
    }

    #[test]
    fn a_refused_key_gets_the_references_message_and_hint() {
        let refused = canonical("ctrl").unwrap_err();
        assert_eq!(refused.code, "invalid_argument");
        assert_eq!(refused.message, "'ctrl' is not a W3C key value");
        assert_eq!(refused.hint.as_deref(), Some("did you mean Control?"));
        let hint = |key: &str| canonical(key).unwrap_err().hint.unwrap();
        assert_eq!(
            hint("ctrl+s"),
            "one key per entry: keys is a list, such as ['Control', 's']"
        );
        assert_eq!(hint("space"), "did you mean ' '?");
        assert_eq!(hint("Escap"), "did you mean Escape?");
        assert_eq!(hint("PageDwn"), "did you mean PageDown?");
        assert_eq!(
            hint("qqqq"),
            "named keys are W3C UI Events key values, such as Enter"
        );
        // As the reference answers them (ties go to the greater spelling: f5 over f2).
        let closest = [
            ("Contrl", "Control"),
            ("shft", "Shift"),
            ("F25", "F5"),
            ("arrowup2", "ArrowUp"),
            ("Bckspace", "Backspace"),
            ("tabb", "Tab"),
            ("entr", "Enter"),
            ("pagedow", "PageDown"),
        ];
        for (key, meant) in closest {
            assert_eq!(hint(key), format!("did you mean {meant}?"), "{key}");
        }
        assert_eq!(
            canonical("").unwrap_err().message,
            "a key is a W3C key value, got ''"
        );
    }

    #[test]
    fn a_chord_is_refused_whole() {
        let keys = |k: &[&str]| k.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            chord(&keys(&["control", "s"]), &Supported::All).unwrap(),
            ["Control", "s"]
        );
        assert_eq!(
            chord(&[], &Supported::All).unwrap_err().code,
            "invalid_argument"
        );
        let only = Supported::Only(keys(&["Control", "a"]));
        let refused = chord(&keys(&["Control", "s", "Alt"]), &only).unwrap_err();
        assert_eq!(
            (refused.code.as_str(), refused.message.as_str()),
            (
                "unsupported",
                "this computer doesn't support the key(s) ['s', 'Alt']"
            )
        );
    }

    #[test]
    fn quoting_follows_python_repr() {
        assert_eq!(quoted("ctrl"), "'ctrl'");
        assert_eq!(quoted("it's"), "\"it's\"");
        assert_eq!(quoted("a\u{1b}b"), "'a\\x1bb'");
    }
}
