//! `desk`: a desktop simulated in pure Wasm, served by envhost as a computer driver. It draws
//! its own 1280×800 framebuffer (a palette of eight colours, one byte a pixel) and takes its
//! own pointer and key input, deterministically, with no X server: many desktops per process,
//! each snapshot-able like any episode. The widgets are in [`desk`].

mod desk;
mod draw;

use std::cell::RefCell;

use crate::desk::{Desk, HEIGHT, WIDTH};
use crate::draw::PALETTE;

wit_bindgen::generate!({
    inline: r#"
        package envhost:desk;

        world desk {
            include agentenv:computer/driver@0.1.0;
            export agentenv:computer/pointer@0.1.0;
            export agentenv:computer/keyboard@0.1.0;
        }
    "#,
    path: "../../wit/computer",
    generate_all,
});

use agentenv::computer::types::{
    Applied, Button, DisplayState, DriverError, ErrorCode, FeatureSet, IndexedImage, Point,
    ReadyCheck, ScrollDirection,
};
use exports::agentenv::computer::operations::{CaptureImage, Guest as Operations};
use exports::agentenv::computer::{keyboard, pointer};

thread_local! {
    static DESK: RefCell<Desk> = RefCell::new(Desk::default());
}

fn with_desk<T>(f: impl FnOnce(&mut Desk) -> T) -> T {
    DESK.with(|desk| f(&mut desk.borrow_mut()))
}

/// The desk takes only the left button.
fn left_only(button: Button) -> Result<(), DriverError> {
    match button {
        Button::Left => Ok(()),
        _ => Err(DriverError {
            code: ErrorCode::Unsupported,
            message: "the desk has only a left button".into(),
            hint: None,
            applied: Applied::No,
        }),
    }
}

struct Component;

impl Operations for Component {
    fn name() -> String {
        "desk".into()
    }

    fn features() -> FeatureSet {
        FeatureSet {
            buttons: vec![Button::Left],
            max_click_count: 3,
            keys: None,
            max_text_length: 10_000,
            max_wait_ms: 60_000,
            max_drag_points: 50,
            max_duration_ms: 10_000,
            max_key_repeat: 100,
            max_scroll_amount: 100,
            platform: None,
            supports: "[]".into(),
        }
    }

    fn display() -> Result<DisplayState, DriverError> {
        Ok(DisplayState {
            width: WIDTH as u32,
            height: HEIGHT as u32,
            scale: 1.0,
        })
    }

    fn capture() -> Result<CaptureImage, DriverError> {
        let frame = with_desk(|desk| desk.render());
        Ok(CaptureImage::Indexed(IndexedImage {
            width: frame.width as u32,
            height: frame.height as u32,
            palette: PALETTE.concat(),
            indices: frame.pixels,
        }))
    }

    fn ready_checks() -> Vec<ReadyCheck> {
        Vec::new()
    }

    fn click(
        at: Point,
        button: Button,
        count: u32,
        _modifiers: Vec<String>,
    ) -> Result<(), DriverError> {
        left_only(button)?;
        with_desk(|desk| desk.click(at.x, at.y, count));
        Ok(())
    }

    fn drag(
        path: Vec<Point>,
        button: Button,
        _duration_ms: u32,
        _modifiers: Vec<String>,
    ) -> Result<(), DriverError> {
        left_only(button)?;
        let path: Vec<(i32, i32)> = path.iter().map(|p| (p.x, p.y)).collect();
        with_desk(|desk| desk.drag(&path));
        Ok(())
    }

    fn scroll(
        at: Point,
        direction: ScrollDirection,
        amount: u32,
        _modifiers: Vec<String>,
    ) -> Result<(), DriverError> {
        let notches = i32::try_from(amount).unwrap_or(i32::MAX);
        let notches = match direction {
            ScrollDirection::Down => notches,
            ScrollDirection::Up => -notches,
            ScrollDirection::Left | ScrollDirection::Right => 0,
        };
        with_desk(|desk| desk.scroll(at.x, at.y, notches));
        Ok(())
    }

    fn type_text(text: String, _tap_hold_ms: u32, _type_delay_ms: u32) -> Result<(), DriverError> {
        with_desk(|desk| text.chars().for_each(|c| desk.type_char(c)));
        Ok(())
    }

    fn press(keys: Vec<String>, _tap_hold_ms: u32) -> Result<(), DriverError> {
        with_desk(|desk| {
            if let [key] = keys.as_slice() {
                desk.tap(key);
            }
        });
        Ok(())
    }
}

impl pointer::Guest for Component {
    fn move_to(at: Point) -> Result<(), DriverError> {
        with_desk(|desk| desk.move_to(at.x, at.y));
        Ok(())
    }

    fn button_down(button: Button) -> Result<(), DriverError> {
        left_only(button)?;
        with_desk(Desk::left_down);
        Ok(())
    }

    fn button_up(button: Button) -> Result<(), DriverError> {
        left_only(button)?;
        with_desk(Desk::left_up);
        Ok(())
    }

    fn position() -> Result<Point, DriverError> {
        let (x, y) = with_desk(|desk| desk.pointer);
        Ok(Point { x, y })
    }
}

impl keyboard::Guest for Component {
    fn key_down(keys: Vec<String>) -> Result<(), DriverError> {
        with_desk(|desk| {
            for key in keys {
                if !desk.held.contains(&key) {
                    desk.held.push(key);
                }
            }
        });
        Ok(())
    }

    fn key_up(keys: Vec<String>) -> Result<(), DriverError> {
        with_desk(|desk| desk.held.retain(|held| !keys.contains(held)));
        Ok(())
    }
}

export!(Component);
