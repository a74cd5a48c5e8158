//! Coordinate spaces (computer.md#spaces): points in a frame's pixels (`frame`) or on a
//! `0..norm_scale` grid over it (`norm`), mapped to the frame's pixels and refused, never
//! clamped, when outside it.

use serde_json::Number;

use super::errors::Code;
use super::frames::Frame;
use super::keys::quoted;
use super::pyfmt::{g, repr_number};
use crate::error::CodedError;

/// The largest norm grid.
pub const MAX_NORM_SCALE: i64 = 1_000_000;

/// A coordinate space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// The frame's own pixels.
    Frame,
    /// A grid from 0 to the norm scale over the frame, both ends included.
    Norm,
}

impl Space {
    /// `frame` or `norm`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Frame => "frame",
            Self::Norm => "norm",
        }
    }

    /// The space named `name`.
    ///
    /// # Errors
    /// `invalid_argument` for another name.
    pub fn parse(name: &str) -> Result<Self, CodedError> {
        match name {
            "frame" => Ok(Self::Frame),
            "norm" => Ok(Self::Norm),
            other => Err(Code::InvalidArgument
                .error(format!("space is 'frame' or 'norm', got {}", quoted(other)))),
        }
    }
}

/// The space and norm scale a call uses: its own, else the defaults.
///
/// # Errors
/// `invalid_argument` for an unknown space or a scale outside `1..=1,000,000`.
pub fn check_space(
    space: Option<&str>,
    norm_scale: Option<i64>,
    default: (Space, i64),
) -> Result<(Space, i64), CodedError> {
    let space = match space {
        Some(name) => Space::parse(name)?,
        None => default.0,
    };
    let scale = norm_scale.unwrap_or(default.1);
    if !(1..=MAX_NORM_SCALE).contains(&scale) {
        let given = norm_scale.map_or_else(|| "None".to_owned(), |n| n.to_string());
        return Err(Code::InvalidArgument.error(format!(
            "norm_scale is an integer from 1 to 1000000, got {given}"
        )));
    }
    Ok((space, scale))
}

/// Point (`x`, `y`) of `space` as a pixel of `frame` (fractional in `frame` space).
///
/// # Errors
/// `out_of_bounds` outside the frame (frame space) or the grid (norm space).
pub fn frame_point<T>(
    frame: &Frame<T>,
    x: f64,
    y: f64,
    space: Space,
    norm_scale: i64,
) -> Result<(f64, f64), CodedError> {
    let (w, h) = (f64::from(frame.width()), f64::from(frame.height()));
    match space {
        Space::Norm => {
            let n = norm_scale as f64;
            if !((0.0..=n).contains(&x) && (0.0..=n).contains(&y)) {
                return Err(Code::OutOfBounds.error(format!(
                    "({}, {}) is outside the norm range 0..{norm_scale} of frame {}",
                    g(x),
                    g(y),
                    frame.id
                )));
            }
            Ok(((x * w / n).min(w - 1.0), (y * h / n).min(h - 1.0)))
        }
        Space::Frame => {
            if !frame.contains(x, y) {
                return Err(Code::OutOfBounds.error(format!(
                    "({}, {}) is outside frame {} ({}×{})",
                    g(x),
                    g(y),
                    frame.id,
                    frame.width(),
                    frame.height()
                )));
            }
            Ok((x, y))
        }
    }
}

/// `region`, `[x0, y0, x1, y1]` in `space`, as a box of `frame`'s pixels: `(x0, y0, x1, y1)`,
/// the ends excluded.
///
/// # Errors
/// `invalid_argument` when it is not four numbers; `out_of_bounds` when it is outside the grid
/// or not a non-empty box within the frame.
pub fn frame_region<T>(
    frame: &Frame<T>,
    region: &[Number],
    space: Space,
    norm_scale: i64,
) -> Result<(u32, u32, u32, u32), CodedError> {
    let [x0, y0, x1, y1] = region else {
        return Err(Code::InvalidArgument.error(format!(
            "region is [x0, y0, x1, y1], got {} numbers",
            region.len()
        )));
    };
    let shown = || {
        let items: Vec<String> = region.iter().map(repr_number).collect();
        format!("[{}]", items.join(", "))
    };
    let value = |n: &Number| n.as_f64().unwrap_or(f64::NAN);
    let (mut bx0, mut by0, mut bx1, mut by1) = (value(x0), value(y0), value(x1), value(y1));
    let (w, h) = (f64::from(frame.width()), f64::from(frame.height()));
    if space == Space::Norm {
        let n = norm_scale as f64;
        if ![bx0, by0, bx1, by1].iter().all(|v| (0.0..=n).contains(v)) {
            return Err(Code::OutOfBounds.error(format!(
                "region {} is outside the norm range 0..{norm_scale} of frame {}",
                shown(),
                frame.id
            )));
        }
        (bx0, bx1) = (bx0 * w / n, bx1 * w / n);
        (by0, by1) = (by0 * h / n, by1 * h / n);
    }
    let (bx0, by0, bx1, by1) = (bx0.floor(), by0.floor(), bx1.ceil(), by1.ceil());
    if !(0.0 <= bx0 && bx0 < bx1 && bx1 <= w && 0.0 <= by0 && by0 < by1 && by1 <= h) {
        return Err(Code::OutOfBounds.error(format!(
            "region {} is not a non-empty box within frame {} ({}×{})",
            shown(),
            frame.id,
            frame.width(),
            frame.height()
        )));
    }
    Ok((bx0 as u32, by0 as u32, bx1 as u32, by1 as u32))
}

#[cfg(test)]
mod tests {
    use super::super::frames::{Display, FrameStore, Source};
    use super::*;

    fn frame() -> std::sync::Arc<Frame<()>> {
        let mut store = FrameStore::default();
        let display = Display {
            width: 1280,
            height: 800,
            scale: 1.0,
        };
        let source = Source::Capture {
            display,
            captured_at: String::new(),
        };
        store.add(source, (1280, 800), (), "default")
    }

    fn numbers(text: &str) -> Vec<Number> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn frame_points_are_refused_never_clamped() {
        let f = frame();
        assert_eq!(
            frame_point(&f, 10.5, 3.0, Space::Frame, 1000).unwrap(),
            (10.5, 3.0)
        );
        assert_eq!(
            frame_point(&f, 1280.0, 0.0, Space::Frame, 1000)
                .unwrap_err()
                .message,
            "(1280, 0) is outside frame f1 (1280×800)"
        );
    }

    #[test]
    fn norm_points_map_onto_the_frame_and_keep_the_last_pixel() {
        let f = frame();
        assert_eq!(
            frame_point(&f, 500.0, 500.0, Space::Norm, 1000).unwrap(),
            (640.0, 400.0)
        );
        assert_eq!(
            frame_point(&f, 1000.0, 1000.0, Space::Norm, 1000).unwrap(),
            (1279.0, 799.0)
        );
        let refused = frame_point(&f, 1001.0, 3.0, Space::Norm, 1000).unwrap_err();
        assert_eq!(
            (refused.code.as_str(), refused.message.as_str()),
            (
                "out_of_bounds",
                "(1001, 3) is outside the norm range 0..1000 of frame f1"
            )
        );
    }

    #[test]
    fn regions_become_end_exclusive_boxes() {
        let f = frame();
        assert_eq!(
            frame_region(&f, &numbers("[10.2, 20, 99.1, 200]"), Space::Frame, 1000).unwrap(),
            (10, 20, 100, 200)
        );
        assert_eq!(
            frame_region(&f, &numbers("[0, 0, 500, 500]"), Space::Norm, 1000).unwrap(),
            (0, 0, 640, 400)
        );
        assert_eq!(
            frame_region(&f, &numbers("[1, 2, 3]"), Space::Frame, 1000)
                .unwrap_err()
                .message,
            "region is [x0, y0, x1, y1], got 3 numbers"
        );
        assert_eq!(
            frame_region(&f, &numbers("[10.0, 10.0, 10.0, 20.0]"), Space::Frame, 1000)
                .unwrap_err()
                .message,
            "region [10.0, 10.0, 10.0, 20.0] is not a non-empty box within frame f1 (1280×800)"
        );
    }

    #[test]
    fn spaces_and_scales_are_checked() {
        assert_eq!(
            check_space(None, None, (Space::Frame, 1000)).unwrap(),
            (Space::Frame, 1000)
        );
        assert_eq!(
            check_space(Some("norm"), Some(10), (Space::Frame, 1000)).unwrap(),
            (Space::Norm, 10)
        );
        assert_eq!(
            check_space(None, Some(0), (Space::Frame, 1000))
                .unwrap_err()
                .message,
            "norm_scale is an integer from 1 to 1000000, got 0"
        );
        assert_eq!(
            check_space(Some("pixels"), None, (Space::Frame, 1000))
                .unwrap_err()
                .message,
            "space is 'frame' or 'norm', got 'pixels'"
        );
    }
}
