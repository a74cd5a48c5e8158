//! The desktop: its widgets, what input does to them, and how they are drawn.
//!
//! The display is 1280×800, or 1024×768 when set to that mode: the widgets sit in the top-left
//! 1000×600 pixels, the same in both. Widgets (screen pixels):
//! - `save`, a button: each left click counts one save;
//! - `subscribe`, a checkbox: a left click toggles it;
//! - `name`, a text field: a click focuses it, typed characters are appended, `Backspace`
//!   removes the last one, `Escape` leaves it;
//! - `list`, a list of `Item 1` to `Item 100` showing 20 rows: a click selects a row, the wheel
//!   scrolls it a row a notch;
//! - `pad`, a canvas: a drag with the left button draws a stroke through its points.
//!
//! Everything is deterministic: the same input gives the same pixels.

use serde::{Deserialize, Serialize};

use crate::draw::{Colour, Frame, GLYPH, Rect};

/// The display's modes, `(width, height)` in pixels; the first is the one it starts in.
pub const MODES: [(i32, i32); 2] = [(1280, 800), (1024, 768)];

const SAVE: Rect = Rect::new(40, 60, 200, 40);
const SUBSCRIBE: Rect = Rect::new(280, 68, 24, 24);
const NAME: Rect = Rect::new(40, 130, 560, 36);
const LIST: Rect = Rect::new(40, 200, 320, 400);
const PAD: Rect = Rect::new(400, 200, 600, 400);

/// Rows the list shows at once, and its items.
const LIST_ROWS: i32 = 20;
const LIST_ITEMS: i32 = 100;
const ROW_HEIGHT: i32 = LIST.h / LIST_ROWS;
/// The most characters the name field holds.
const NAME_LIMIT: usize = 200;
/// The most strokes the pad keeps (the oldest go first).
const STROKE_LIMIT: usize = 64;

/// The widgets' state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Desk {
    pub saved: u32,
    pub subscribed: bool,
    pub name: String,
    pub name_focused: bool,
    pub scroll_top: i32,
    pub selected: Option<i32>,
    pub strokes: Vec<Vec<(i32, i32)>>,
    /// Where the pointer is.
    pub pointer: (i32, i32),
    /// The keys held down, in the order they were pressed.
    pub held: Vec<String>,
    /// The left button's press point while it is held (a drag through the pointer group).
    pressed_at: Option<Vec<(i32, i32)>>,
    /// The display's mode, an index into [`MODES`].
    pub mode: usize,
}

/// The widgets as data: what `data/get` exports and a `data/add` part seeds. A seed sets every
/// widget, a missing field to its fresh value.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Widgets {
    pub saved: u32,
    pub subscribed: bool,
    pub name: String,
    pub scroll_top: i32,
    pub selected: Option<i32>,
    pub strokes: Vec<Vec<(i32, i32)>>,
}

impl Desk {
    /// The widgets' state.
    pub fn widgets(&self) -> Widgets {
        Widgets {
            saved: self.saved,
            subscribed: self.subscribed,
            name: self.name.clone(),
            scroll_top: self.scroll_top,
            selected: self.selected,
            strokes: self.strokes.clone(),
        }
    }

    /// Sets the widgets to `widgets`, or says why they do not fit the desk (changing nothing).
    pub fn set_widgets(&mut self, widgets: Widgets) -> Result<(), String> {
        if widgets.name.chars().count() > NAME_LIMIT {
            return Err(format!("name holds at most {NAME_LIMIT} characters"));
        }
        if !(0..=LIST_ITEMS - LIST_ROWS).contains(&widgets.scroll_top) {
            return Err(format!(
                "scroll_top is from 0 to {}, got {}",
                LIST_ITEMS - LIST_ROWS,
                widgets.scroll_top
            ));
        }
        if let Some(row) = widgets.selected.filter(|r| !(0..LIST_ITEMS).contains(r)) {
            return Err(format!(
                "selected is a row from 0 to {}, got {row}",
                LIST_ITEMS - 1
            ));
        }
        if widgets.strokes.len() > STROKE_LIMIT {
            return Err(format!("the pad keeps at most {STROKE_LIMIT} strokes"));
        }
        if widgets
            .strokes
            .iter()
            .flatten()
            .any(|&(x, y)| !PAD.contains(x, y))
        {
            return Err("every stroke's points are on the pad".into());
        }
        self.saved = widgets.saved;
        self.subscribed = widgets.subscribed;
        self.name = widgets.name;
        self.scroll_top = widgets.scroll_top;
        self.selected = widgets.selected;
        self.strokes = widgets.strokes;
        Ok(())
    }

    /// The display's size now, `(width, height)` in pixels.
    pub fn size(&self) -> (i32, i32) {
        MODES[self.mode]
    }

    /// Sets the display to the mode of size `width` × `height`; false when there is none.
    pub fn set_size(&mut self, width: i32, height: i32) -> bool {
        match MODES.iter().position(|&m| m == (width, height)) {
            Some(mode) => {
                self.mode = mode;
                true
            }
            None => false,
        }
    }

    /// A left click (or `count` of them) at (`x`, `y`).
    pub fn click(&mut self, x: i32, y: i32, count: u32) {
        self.pointer = (x, y);
        for _ in 0..count {
            self.left_click(x, y);
        }
    }

    fn left_click(&mut self, x: i32, y: i32) {
        self.name_focused = NAME.contains(x, y);
        if SAVE.contains(x, y) {
            self.saved += 1;
        } else if SUBSCRIBE.contains(x, y) {
            self.subscribed = !self.subscribed;
        } else if LIST.contains(x, y) {
            let row = self.scroll_top + (y - LIST.y) / ROW_HEIGHT;
            self.selected = (row < LIST_ITEMS).then_some(row);
        }
    }

    /// A drag with the left button through `path`.
    pub fn drag(&mut self, path: &[(i32, i32)]) {
        if let Some(&last) = path.last() {
            self.pointer = last;
        }
        if path.first().is_some_and(|&(x, y)| PAD.contains(x, y)) {
            if self.strokes.len() == STROKE_LIMIT {
                self.strokes.remove(0);
            }
            self.strokes.push(path.to_vec());
        }
    }

    /// `amount` wheel notches down (positive) or up (negative) at (`x`, `y`).
    pub fn scroll(&mut self, x: i32, y: i32, amount: i32) {
        self.pointer = (x, y);
        if LIST.contains(x, y) {
            self.scroll_top = (self.scroll_top + amount).clamp(0, LIST_ITEMS - LIST_ROWS);
        }
    }

    /// The left button pressed where the pointer is.
    pub fn left_down(&mut self) {
        self.pressed_at = Some(vec![self.pointer]);
    }

    /// The pointer moved to (`x`, `y`).
    pub fn move_to(&mut self, x: i32, y: i32) {
        self.pointer = (x, y);
        if let Some(path) = self.pressed_at.as_mut() {
            path.push((x, y));
        }
    }

    /// The left button released where the pointer is: a click where it was pressed, a drag
    /// otherwise.
    pub fn left_up(&mut self) {
        let Some(mut path) = self.pressed_at.take() else {
            return;
        };
        if path.iter().all(|&p| p == self.pointer) {
            self.left_click(self.pointer.0, self.pointer.1);
        } else {
            path.push(self.pointer);
            self.drag(&path);
        }
    }

    /// One typed character, Shift applied when held.
    pub fn type_char(&mut self, c: char) {
        if !self.name_focused || self.name.chars().count() >= NAME_LIMIT || c == '\n' || c == '\t' {
            return;
        }
        if self.held.iter().any(|k| k == "Shift") {
            self.name.extend(c.to_uppercase());
        } else {
            self.name.push(c);
        }
    }

    /// A key tapped (pressed and released) on its own.
    pub fn tap(&mut self, key: &str) {
        match key {
            "Backspace" if self.name_focused => {
                self.name.pop();
            }
            "Escape" => self.name_focused = false,
            "Enter" | "Tab" => {}
            _ => {
                let mut chars = key.chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    self.type_char(c);
                }
            }
        }
    }

    /// Draws the desktop.
    pub fn render(&self) -> Frame {
        let (width, height) = self.size();
        let mut frame = Frame::new(width, height, Colour::Desktop);
        frame.fill(Rect::new(0, 0, width, 40), Colour::Blue);
        frame.text(12, 12, "Desk", 40, Colour::White);

        frame.fill(SAVE, Colour::Grey);
        frame.text(
            SAVE.x + 12,
            SAVE.y + 12,
            &format!("Save {}", self.saved),
            11,
            Colour::White,
        );

        frame.fill(SUBSCRIBE, Colour::White);
        frame.outline(SUBSCRIBE, Colour::Black);
        if self.subscribed {
            frame.fill(
                Rect::new(SUBSCRIBE.x + 5, SUBSCRIBE.y + 5, 14, 14),
                Colour::Green,
            );
        }
        frame.text(
            SUBSCRIBE.x + 36,
            SUBSCRIBE.y + 4,
            "Subscribe",
            9,
            Colour::Black,
        );

        frame.fill(NAME, Colour::White);
        let border = if self.name_focused {
            Colour::Blue
        } else {
            Colour::Grey
        };
        frame.outline(NAME, border);
        let fits = ((NAME.w - 16) / GLYPH) as usize;
        let shown: String = {
            let skip = self.name.chars().count().saturating_sub(fits);
            self.name.chars().skip(skip).collect()
        };
        frame.text(NAME.x + 8, NAME.y + 10, &shown, fits, Colour::Black);

        frame.fill(LIST, Colour::White);
        frame.outline(LIST, Colour::Grey);
        for row in 0..LIST_ROWS {
            let item = self.scroll_top + row;
            let top = LIST.y + row * ROW_HEIGHT;
            if self.selected == Some(item) {
                frame.fill(
                    Rect::new(LIST.x + 1, top, LIST.w - 2, ROW_HEIGHT),
                    Colour::Pale,
                );
            }
            frame.text(
                LIST.x + 8,
                top + 2,
                &format!("Item {}", item + 1),
                18,
                Colour::Black,
            );
        }

        frame.fill(PAD, Colour::White);
        frame.outline(PAD, Colour::Grey);
        for stroke in &self.strokes {
            for pair in stroke.windows(2) {
                frame.line(pair[0], pair[1], Colour::Red);
            }
        }
        frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_click_on_save_counts_and_shows() {
        let mut desk = Desk::default();
        let before = desk.render();
        desk.click(SAVE.x + 5, SAVE.y + 5, 2);
        assert_eq!(desk.saved, 2);
        assert_ne!(desk.render().pixels, before.pixels);
    }

    #[test]
    fn typing_goes_to_the_focused_field_and_shift_capitalises() {
        let mut desk = Desk::default();
        desk.type_char('a');
        assert_eq!(desk.name, "");
        desk.click(NAME.x + 5, NAME.y + 5, 1);
        desk.type_char('a');
        desk.held.push("Shift".into());
        desk.type_char('b');
        desk.held.clear();
        desk.tap("c");
        desk.tap("Backspace");
        assert_eq!(desk.name, "aB");
    }

    #[test]
    fn the_wheel_scrolls_the_list_within_its_items() {
        let mut desk = Desk::default();
        desk.scroll(LIST.x + 5, LIST.y + 5, 5);
        assert_eq!(desk.scroll_top, 5);
        desk.scroll(LIST.x + 5, LIST.y + 5, 1000);
        assert_eq!(desk.scroll_top, LIST_ITEMS - LIST_ROWS);
        desk.click(LIST.x + 5, LIST.y + ROW_HEIGHT + 1, 1);
        assert_eq!(desk.selected, Some(LIST_ITEMS - LIST_ROWS + 1));
    }

    #[test]
    fn a_drag_on_the_pad_draws_a_stroke_and_a_press_without_motion_clicks() {
        let mut desk = Desk::default();
        desk.drag(&[(PAD.x + 10, PAD.y + 10), (PAD.x + 100, PAD.y + 50)]);
        assert_eq!(desk.strokes.len(), 1);
        let frame = desk.render();
        let at = ((PAD.y + 10) * desk.size().0 + PAD.x + 10) as usize;
        assert_eq!(frame.pixels[at], Colour::Red as u8);
        desk.move_to(SAVE.x + 1, SAVE.y + 1);
        desk.left_down();
        desk.left_up();
        assert_eq!(desk.saved, 1);
    }

    #[test]
    fn the_display_takes_only_its_modes_and_draws_at_the_size_set() {
        let mut desk = Desk::default();
        assert_eq!(desk.render().pixels.len(), 1280 * 800);
        assert!(!desk.set_size(800, 600));
        assert_eq!(desk.size(), (1280, 800));
        assert!(desk.set_size(1024, 768));
        let frame = desk.render();
        assert_eq!((frame.width, frame.height), (1024, 768));
        assert_eq!(frame.pixels.len(), 1024 * 768);
    }

    #[test]
    fn widgets_export_and_seed_and_a_bad_seed_changes_nothing() {
        let mut desk = Desk::default();
        desk.click(SAVE.x + 1, SAVE.y + 1, 2);
        let exported = desk.widgets();
        assert_eq!(exported.saved, 2);
        let mut seeded = Desk::default();
        seeded.set_widgets(exported).unwrap();
        assert_eq!(seeded.render().pixels, desk.render().pixels);
        let bad = Widgets {
            selected: Some(100),
            ..Widgets::default()
        };
        assert!(seeded.set_widgets(bad).unwrap_err().contains("selected"));
        assert_eq!(seeded.saved, 2);
    }
}
