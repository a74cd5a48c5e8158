//! `desk`: a desktop simulated in pure Wasm, served by envhost as a computer driver. It draws
//! its own 1280×800 framebuffer (or 1024×768, its other display mode) (a palette of eight colours, one byte a pixel) and takes its
//! own pointer and key input, deterministically, with no X server: many desktops per process,
//! each snapshot-able like any episode. The widgets are in [`desk`].

mod desk;
mod draw;

use envhost_sdk::computer::{
    Button, Capture, DisplayState, DriverError, ErrorCode, FeatureSet, IndexedImage, Key, Point,
    ScrollDirection, computer_driver,
};

use crate::desk::{Desk, MODES, Widgets};
use crate::draw::PALETTE;

/// The desk takes only the left button.
fn left_only(button: Button) -> Result<(), DriverError> {
    match button {
        Button::Left => Ok(()),
        _ => Err(DriverError::unsupported("the desk has only a left button")),
    }
}

#[computer_driver(name = "desk")]
impl Desk {
    #[features]
    fn features(&self) -> FeatureSet {
        FeatureSet {
            max_click_count: 3,
            max_drag_points: 50,
            ..FeatureSet::default()
        }
    }

    #[display]
    fn screen(&self) -> DisplayState {
        let (width, height) = self.size();
        DisplayState {
            width: width as u32,
            height: height as u32,
            scale: 1.0,
        }
    }

    #[export_state]
    fn state(&self) -> Option<String> {
        serde_json::to_string(&self.widgets()).ok()
    }

    #[seed]
    fn seed_widgets(&mut self, json: String) -> Result<(), DriverError> {
        let invalid = |message: String| DriverError::new(ErrorCode::InvalidArgument, message);
        let widgets: Widgets = serde_json::from_str(&json)
            .map_err(|e| invalid(format!("the desk's state does not fit: {e}")))?;
        self.set_widgets(widgets).map_err(invalid)
    }

    #[display_modes]
    fn modes(&self) -> Vec<(u32, u32)> {
        MODES.iter().map(|&(w, h)| (w as u32, h as u32)).collect()
    }

    #[set_display]
    fn set_mode(
        &mut self,
        width: u32,
        height: u32,
        scale: f64,
    ) -> Result<DisplayState, DriverError> {
        if scale != 1.0 {
            return Err(DriverError::unsupported("the desk draws at scale 1 only"));
        }
        let fits = i32::try_from(width)
            .ok()
            .zip(i32::try_from(height).ok())
            .is_some_and(|(w, h)| self.set_size(w, h));
        if !fits {
            return Err(DriverError::new(
                ErrorCode::InvalidArgument,
                format!("{width}×{height} is not one of the desk's modes"),
            ));
        }
        Ok(self.screen())
    }

    #[capture]
    fn grab(&self) -> Capture {
        let frame = self.render();
        Capture::Indexed(IndexedImage {
            width: frame.width as u32,
            height: frame.height as u32,
            palette: PALETTE.concat(),
            indices: frame.pixels,
        })
    }

    #[click]
    fn click_at(
        &mut self,
        at: Point,
        button: Button,
        count: u32,
        _modifiers: Vec<Key>,
    ) -> Result<(), DriverError> {
        left_only(button)?;
        self.click(at.x, at.y, count);
        Ok(())
    }

    #[drag]
    fn drag_along(
        &mut self,
        path: Vec<Point>,
        button: Button,
        _duration_ms: u32,
        _modifiers: Vec<Key>,
    ) -> Result<(), DriverError> {
        left_only(button)?;
        let path: Vec<(i32, i32)> = path.iter().map(|p| (p.x, p.y)).collect();
        self.drag(&path);
        Ok(())
    }

    #[scroll]
    fn scroll_at(
        &mut self,
        at: Point,
        direction: ScrollDirection,
        amount: u32,
        _modifiers: Vec<Key>,
    ) {
        let notches = i32::try_from(amount).unwrap_or(i32::MAX);
        let notches = match direction {
            ScrollDirection::Down => notches,
            ScrollDirection::Up => -notches,
            ScrollDirection::Left | ScrollDirection::Right => 0,
        };
        self.scroll(at.x, at.y, notches);
    }

    #[type_text]
    fn type_in(&mut self, text: String, _tap_hold_ms: u32, _type_delay_ms: u32) {
        text.chars().for_each(|c| self.type_char(c));
    }

    #[press]
    fn press_keys(&mut self, keys: Vec<Key>, _tap_hold_ms: u32) {
        if let [key] = keys.as_slice() {
            self.tap(key);
        }
    }

    #[pointer_move]
    fn move_pointer(&mut self, at: Point) {
        self.move_to(at.x, at.y);
    }

    #[pointer_down]
    fn down(&mut self, button: Button) -> Result<(), DriverError> {
        left_only(button)?;
        self.left_down();
        Ok(())
    }

    #[pointer_up]
    fn up(&mut self, button: Button) -> Result<(), DriverError> {
        left_only(button)?;
        self.left_up();
        Ok(())
    }

    #[pointer_position]
    fn where_is(&self) -> Point {
        let (x, y) = self.pointer;
        Point { x, y }
    }

    #[key_down]
    fn keys_down(&mut self, keys: Vec<Key>) {
        for key in keys {
            if !self.held.contains(&key) {
                self.held.push(key);
            }
        }
    }

    #[key_up]
    fn keys_up(&mut self, keys: Vec<Key>) {
        self.held.retain(|held| !keys.contains(held));
    }
}
