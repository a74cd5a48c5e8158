//! Frames (computer.md#frames): every screenshot and crop, kept by a global id so any caller
//! can point into it later, and the mapping from its pixels to the screen's.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::errors::Code;
use super::pyfmt::g;
use crate::error::CodedError;

/// Frames kept, captures and crops together; the oldest goes first.
pub const KEEP: usize = 64;

/// A display: its size in screen pixels and its scale (image pixels per screen pixel).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Display {
    /// Width in screen pixels.
    pub width: u32,
    /// Height in screen pixels.
    pub height: u32,
    /// Image pixels per screen pixel.
    pub scale: f64,
}

impl Display {
    /// The size of a capture of this display, `(round(width × scale), round(height × scale))`.
    pub fn native_size(&self) -> (u32, u32) {
        let side = |n: u32| (f64::from(n) * self.scale).round() as u32;
        (side(self.width), side(self.height))
    }

    /// `1280×800 at scale 1`, as messages write it.
    pub fn describe(&self) -> String {
        format!("{}×{} at scale {}", self.width, self.height, g(self.scale))
    }
}

/// A capture, or a crop of one, with `T` its image (the host keeps the PNG).
#[derive(Debug)]
pub struct Frame<T> {
    /// `f<n>`.
    pub id: String,
    /// Width and height of its image, in pixels.
    pub size: (u32, u32),
    /// The display when its root was captured.
    pub display: Display,
    /// Where its pixel (0, 0) is in the root capture.
    pub origin: (u32, u32),
    /// The root capture's size.
    pub root_size: (u32, u32),
    /// The frame it was cropped from.
    pub parent_id: Option<String>,
    /// When its root was captured, ISO-8601 UTC with microseconds and `Z`.
    pub captured_at: String,
    /// Its image, and what else the host keeps with it (a crop's is its own).
    pub image: T,
}

impl<T> Frame<T> {
    /// Width of its image.
    pub fn width(&self) -> u32 {
        self.size.0
    }

    /// Height of its image.
    pub fn height(&self) -> u32 {
        self.size.1
    }

    /// Whether frame pixel (`fx`, `fy`) is inside it.
    pub fn contains(&self, fx: f64, fy: f64) -> bool {
        (0.0..f64::from(self.width())).contains(&fx)
            && (0.0..f64::from(self.height())).contains(&fy)
    }

    /// The screen pixel under frame pixel (`fx`, `fy`); exact at scale 1.
    pub fn to_screen(&self, fx: f64, fy: f64) -> (i64, i64) {
        let rx = f64::from(self.origin.0) + fx;
        let ry = f64::from(self.origin.1) + fy;
        (
            (rx * f64::from(self.display.width) / f64::from(self.root_size.0)).floor() as i64,
            (ry * f64::from(self.display.height) / f64::from(self.root_size.1)).floor() as i64,
        )
    }

    /// The frame pixel over screen pixel (`sx`, `sy`), which may be outside the frame.
    pub fn from_screen(&self, sx: f64, sy: f64) -> (i64, i64) {
        let rx = sx * f64::from(self.root_size.0) / f64::from(self.display.width);
        let ry = sy * f64::from(self.root_size.1) / f64::from(self.display.height);
        (
            (rx - f64::from(self.origin.0)).floor() as i64,
            (ry - f64::from(self.origin.1)).floor() as i64,
        )
    }

    /// Refuses the frame when the display is no longer the one it was captured on.
    ///
    /// # Errors
    /// `stale_frame`, naming both displays.
    pub fn check_current(&self, now: &Display) -> Result<(), CodedError> {
        if self.display == *now {
            return Ok(());
        }
        Err(Code::StaleFrame.error(format!(
            "frame {} was captured at {} and the display is now {}: take a new screenshot",
            self.id,
            self.display.describe(),
            now.describe()
        )))
    }
}

/// What a new frame is: a capture of the whole display, or a crop of a kept frame.
pub enum Source<'a, T> {
    /// A capture of `display`, taken at `captured_at`.
    Capture {
        /// The display it shows.
        display: Display,
        /// ISO-8601 UTC with microseconds and `Z`.
        captured_at: String,
    },
    /// A crop of `parent` whose pixel (0, 0) is `parent`'s pixel `origin`.
    Crop {
        /// The frame cropped.
        parent: &'a Frame<T>,
        /// Where the crop starts in the parent.
        origin: (u32, u32),
    },
}

/// The last [`KEEP`] frames by id, and each caller's latest.
#[derive(Debug)]
pub struct FrameStore<T> {
    frames: VecDeque<Arc<Frame<T>>>,
    next: u64,
    latest: HashMap<String, String>,
}

impl<T> Default for FrameStore<T> {
    fn default() -> Self {
        Self {
            frames: VecDeque::with_capacity(KEEP + 1),
            next: 1,
            latest: HashMap::new(),
        }
    }
}

impl<T> FrameStore<T> {
    /// Keeps a new frame of `size` showing `image`, as caller `identity`'s latest; answers it.
    pub fn add(
        &mut self,
        source: Source<'_, T>,
        size: (u32, u32),
        image: T,
        identity: &str,
    ) -> Arc<Frame<T>> {
        let id = format!("f{}", self.next);
        self.next += 1;
        let frame = match source {
            Source::Capture {
                display,
                captured_at,
            } => Frame {
                id,
                size,
                display,
                origin: (0, 0),
                root_size: size,
                parent_id: None,
                captured_at,
                image,
            },
            Source::Crop { parent, origin } => Frame {
                id,
                size,
                display: parent.display,
                origin: (parent.origin.0 + origin.0, parent.origin.1 + origin.1),
                root_size: parent.root_size,
                parent_id: Some(parent.id.clone()),
                captured_at: parent.captured_at.clone(),
                image,
            },
        };
        let frame = Arc::new(frame);
        self.frames.push_back(frame.clone());
        while self.frames.len() > KEEP {
            self.frames.pop_front();
        }
        self.latest.insert(identity.to_owned(), frame.id.clone());
        frame
    }

    /// The frame named `frame_id`, or caller `identity`'s latest when none is named.
    ///
    /// # Errors
    /// `stale_frame` when there is none yet, or the frame is unknown or no longer kept.
    pub fn get(&self, frame_id: Option<&str>, identity: &str) -> Result<Arc<Frame<T>>, CodedError> {
        let id = match frame_id {
            Some(id) => id,
            None => self
                .latest
                .get(identity)
                .map(String::as_str)
                .ok_or_else(|| {
                    Code::StaleFrame.error("there is no frame yet: take a screenshot first")
                })?,
        };
        self.frames
            .iter()
            .find(|f| f.id == id)
            .cloned()
            .ok_or_else(|| {
                Code::StaleFrame.error(format!(
                    "frame {id} is unknown or no longer kept: take a new screenshot"
                ))
            })
    }

    /// Caller `identity`'s latest frame, while it is kept.
    pub fn latest(&self, identity: &str) -> Option<Arc<Frame<T>>> {
        let id = self.latest.get(identity)?;
        self.frames.iter().find(|f| &f.id == id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DISPLAY: Display = Display {
        width: 1280,
        height: 800,
        scale: 1.0,
    };

    fn capture() -> Source<'static, ()> {
        Source::Capture {
            display: DISPLAY,
            captured_at: "2026-12-03T19:00:00.000000Z".into(),
        }
    }

    #[test]
    fn ids_are_global_and_the_oldest_frames_go_first() {
        let mut store = FrameStore::default();
        for _ in 0..KEEP + 2 {
            store.add(capture(), (1280, 800), (), "default");
        }
        assert_eq!(store.latest("default").unwrap().id, "f66");
        assert_eq!(
            store.get(Some("f2"), "default").unwrap_err().message,
            "frame f2 is unknown or no longer kept: take a new screenshot"
        );
        assert_eq!(store.get(Some("f3"), "default").unwrap().id, "f3");
        assert_eq!(
            store.get(None, "other").unwrap_err().message,
            "there is no frame yet: take a screenshot first"
        );
    }

    #[test]
    fn a_crop_maps_back_to_the_screen_through_its_origin() {
        let mut store = FrameStore::default();
        let root = store.add(capture(), (1280, 800), (), "default");
        let crop = store.add(
            Source::Crop {
                parent: &root,
                origin: (100, 50),
            },
            (300, 200),
            (),
            "default",
        );
        let inner = store.add(
            Source::Crop {
                parent: &crop,
                origin: (10, 20),
            },
            (50, 50),
            (),
            "default",
        );
        assert_eq!(inner.parent_id.as_deref(), Some("f2"));
        assert_eq!(inner.to_screen(5.5, 5.0), (115, 75));
        assert_eq!(inner.from_screen(115.0, 75.0), (5, 5));
        assert!(inner.contains(49.9, 0.0) && !inner.contains(50.0, 0.0));
        assert_eq!(store.latest("default").unwrap().id, "f3");
    }

    #[test]
    fn a_frame_of_another_display_is_stale() {
        let mut store = FrameStore::default();
        let frame = store.add(capture(), (1280, 800), (), "default");
        let now = Display {
            width: 1024,
            height: 768,
            scale: 1.0,
        };
        assert_eq!(
            frame.check_current(&now).unwrap_err().message,
            "frame f1 was captured at 1280×800 at scale 1 and the display is now 1024×768 at scale 1: take a new screenshot"
        );
        frame.check_current(&DISPLAY).unwrap();
        let hidpi = Display {
            scale: 2.0,
            ..DISPLAY
        };
        assert_eq!(hidpi.native_size(), (2560, 1600));
    }
}
