//! [`Capture`]: the pixels a `#[capture]` method answers.

use super::{Captured, IndexedImage, RgbImage};

/// A capture of the whole display at its native size, `round(width × scale)` ×
/// `round(height × scale)` pixels of the display `#[display]` answers.
#[derive(Debug)]
pub enum Capture {
    /// Pixels the driver drew: three bytes (red, green, blue) a pixel, rows top to bottom.
    Drawn(RgbImage),
    /// Pixels the driver drew with a palette of at most 256 colours: one byte a pixel.
    Indexed(IndexedImage),
    /// Pixels the host captured for the driver, e.g. [`x11::capture_root`](super::x11::capture_root).
    Held(Captured),
}

impl From<RgbImage> for Capture {
    fn from(image: RgbImage) -> Self {
        Self::Drawn(image)
    }
}

impl From<IndexedImage> for Capture {
    fn from(image: IndexedImage) -> Self {
        Self::Indexed(image)
    }
}

impl From<Captured> for Capture {
    fn from(captured: Captured) -> Self {
        Self::Held(captured)
    }
}
