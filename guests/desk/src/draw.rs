//! An indexed framebuffer and what the desk draws with: filled and outlined boxes, lines, and
//! text in an 8×8 bitmap font (font8x8's public-domain glyphs) scaled up.

use font8x8::UnicodeFonts;

/// The palette: three bytes (red, green, blue) per colour, in [`Colour`]'s order.
pub const PALETTE: [[u8; 3]; 8] = [
    [232, 232, 232],
    [255, 255, 255],
    [0, 0, 0],
    [96, 96, 96],
    [40, 90, 200],
    [205, 220, 250],
    [200, 40, 40],
    [60, 150, 60],
];

/// A colour of [`PALETTE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Colour {
    Desktop = 0,
    White = 1,
    Black = 2,
    Grey = 3,
    Blue = 4,
    Pale = 5,
    Red = 6,
    Green = 7,
}

/// A box on the screen: left, top, width and height in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub w: i32,
    pub h: i32,
}

impl Rect {
    pub const fn new(x: i32, y: i32, w: i32, h: i32) -> Self {
        Self { x, y, w, h }
    }

    /// Whether the pixel (`x`, `y`) is inside.
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.x && x < self.x + self.w && y >= self.y && y < self.y + self.h
    }
}

/// The pixel size of a glyph cell: font8x8's 8 pixels at twice the size.
pub const GLYPH: i32 = 16;

/// A framebuffer of palette indices, rows top to bottom.
pub struct Frame {
    pub width: i32,
    pub height: i32,
    pub pixels: Vec<u8>,
}

impl Frame {
    /// A `width` × `height` frame filled with `colour`.
    pub fn new(width: i32, height: i32, colour: Colour) -> Self {
        let len = usize::try_from(width * height).unwrap_or(0);
        Self {
            width,
            height,
            pixels: vec![colour as u8; len],
        }
    }

    /// Fills the part of `rect` on the frame.
    pub fn fill(&mut self, rect: Rect, colour: Colour) {
        let x0 = rect.x.clamp(0, self.width);
        let x1 = (rect.x + rect.w).clamp(0, self.width);
        for y in rect.y.max(0)..(rect.y + rect.h).min(self.height) {
            let row = (y * self.width) as usize;
            self.pixels[row + x0 as usize..row + x1 as usize].fill(colour as u8);
        }
    }

    /// Draws `rect`'s one-pixel outline.
    pub fn outline(&mut self, rect: Rect, colour: Colour) {
        self.fill(Rect::new(rect.x, rect.y, rect.w, 1), colour);
        self.fill(Rect::new(rect.x, rect.y + rect.h - 1, rect.w, 1), colour);
        self.fill(Rect::new(rect.x, rect.y, 1, rect.h), colour);
        self.fill(Rect::new(rect.x + rect.w - 1, rect.y, 1, rect.h), colour);
    }

    /// Draws the line from (`x0`, `y0`) to (`x1`, `y1`), two pixels thick.
    pub fn line(&mut self, (x0, y0): (i32, i32), (x1, y1): (i32, i32), colour: Colour) {
        let steps = (x1 - x0).abs().max((y1 - y0).abs()).max(1);
        for i in 0..=steps {
            let x = x0 + (x1 - x0) * i / steps;
            let y = y0 + (y1 - y0) * i / steps;
            self.fill(Rect::new(x, y, 2, 2), colour);
        }
    }

    /// Writes `text` from (`x`, `y`), one [`GLYPH`]-wide cell per character, cut at
    /// `max_chars` characters; characters without a glyph are drawn as `?`.
    pub fn text(&mut self, x: i32, y: i32, text: &str, max_chars: usize, colour: Colour) {
        for (i, c) in text.chars().take(max_chars).enumerate() {
            let glyph = font8x8::BASIC_FONTS
                .get(c)
                .or_else(|| font8x8::LATIN_FONTS.get(c))
                .or_else(|| font8x8::BASIC_FONTS.get('?'))
                .unwrap_or([0; 8]);
            let left = x + i as i32 * GLYPH;
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits & (1 << col) != 0 {
                        let (px, py) = (left + col * 2, y + row as i32 * 2);
                        self.fill(Rect::new(px, py, 2, 2), colour);
                    }
                }
            }
        }
    }
}
