//! Frames' images: a driver's pixels encoded as the PNG every screenshot answers with (a
//! palette PNG for a paletted capture), crops of a kept PNG, and JPEG on request.

use envhost_runtime::driver::Pixels;

/// Why an image could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The pixels do not fill their size, or a palette is malformed.
    #[error("{0}")]
    Shape(String),
    /// The PNG encoder or decoder failed.
    #[error("png: {0}")]
    Png(String),
    /// The JPEG encoder failed.
    #[error("jpeg: {0}")]
    Jpeg(String),
}

/// A decoded image: RGB, or palette indices with their palette.
struct Raw {
    width: u32,
    height: u32,
    /// Three bytes a colour; empty for RGB.
    palette: Vec<u8>,
    /// Bytes a pixel: 3 (RGB) or 1 (indexed).
    depth: usize,
    data: Vec<u8>,
}

fn png_error(e: impl std::fmt::Display) -> ImageError {
    ImageError::Png(e.to_string())
}

/// `pixels` as a PNG (fast deflate; a palette PNG for indexed pixels).
///
/// # Errors
/// [`ImageError::Shape`] when the pixels do not fill their size or the palette is not 1 to 256
/// colours.
pub fn encode(pixels: &Pixels) -> Result<Vec<u8>, ImageError> {
    let raw = match pixels {
        Pixels::Rgb { width, height, rgb } => Raw {
            width: *width,
            height: *height,
            palette: Vec::new(),
            depth: 3,
            data: rgb.clone(),
        },
        Pixels::Indexed {
            width,
            height,
            palette,
            indices,
        } => Raw {
            width: *width,
            height: *height,
            palette: palette.clone(),
            depth: 1,
            data: indices.clone(),
        },
    };
    encode_raw(&raw)
}

fn encode_raw(raw: &Raw) -> Result<Vec<u8>, ImageError> {
    let expected = raw.width as usize * raw.height as usize * raw.depth;
    if raw.data.len() != expected || raw.width == 0 || raw.height == 0 {
        return Err(ImageError::Shape(format!(
            "{} bytes for a {}×{} image of {} byte(s) a pixel",
            raw.data.len(),
            raw.width,
            raw.height,
            raw.depth
        )));
    }
    let mut out = Vec::with_capacity(expected / 8 + 1024);
    let mut encoder = png::Encoder::new(&mut out, raw.width, raw.height);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    if raw.depth == 1 {
        let colours = raw.palette.len() / 3;
        if !raw.palette.len().is_multiple_of(3) || !(1..=256).contains(&colours) {
            return Err(ImageError::Shape(format!(
                "a palette is 1 to 256 colours of 3 bytes, got {} bytes",
                raw.palette.len()
            )));
        }
        if raw.data.iter().any(|&i| usize::from(i) >= colours) {
            return Err(ImageError::Shape(format!(
                "a pixel names a colour past the palette's {colours}"
            )));
        }
        encoder.set_color(png::ColorType::Indexed);
        encoder.set_palette(raw.palette.clone());
    } else {
        encoder.set_color(png::ColorType::Rgb);
    }
    let mut writer = encoder.write_header().map_err(png_error)?;
    writer.write_image_data(&raw.data).map_err(png_error)?;
    writer.finish().map_err(png_error)?;
    Ok(out)
}

fn decode(png_bytes: &[u8]) -> Result<Raw, ImageError> {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().map_err(png_error)?;
    let palette = reader
        .info()
        .palette
        .as_ref()
        .map(|p| p.to_vec())
        .unwrap_or_default();
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| png_error("too large"))?;
    let mut data = vec![0; size];
    let info = reader.next_frame(&mut data).map_err(png_error)?;
    data.truncate(info.buffer_size());
    let depth = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Indexed => 1,
        other => {
            return Err(png_error(format!(
                "a frame is RGB or indexed, not {other:?}"
            )));
        }
    };
    Ok(Raw {
        width: info.width,
        height: info.height,
        palette,
        depth,
        data,
    })
}

/// The part `(x0, y0, x1, y1)` (ends excluded, within the image) of the PNG `png_bytes`, as a
/// PNG of the same kind, pixel for pixel.
///
/// # Errors
/// [`ImageError`] when the PNG cannot be decoded or the box is not within it.
pub fn crop(
    png_bytes: &[u8],
    (x0, y0, x1, y1): (u32, u32, u32, u32),
) -> Result<Vec<u8>, ImageError> {
    let raw = decode(png_bytes)?;
    if !(x0 < x1 && x1 <= raw.width && y0 < y1 && y1 <= raw.height) {
        return Err(ImageError::Shape(format!(
            "({x0}, {y0}, {x1}, {y1}) is not within {}×{}",
            raw.width, raw.height
        )));
    }
    let row = raw.width as usize * raw.depth;
    let (left, right) = (x0 as usize * raw.depth, x1 as usize * raw.depth);
    let mut data = Vec::with_capacity((right - left) * (y1 - y0) as usize);
    for y in y0..y1 {
        let start = y as usize * row;
        data.extend_from_slice(&raw.data[start + left..start + right]);
    }
    encode_raw(&Raw {
        width: x1 - x0,
        height: y1 - y0,
        palette: raw.palette,
        depth: raw.depth,
        data,
    })
}

/// The PNG `png_bytes` as RGB: `(width, height, bytes)`.
///
/// # Errors
/// [`ImageError::Png`] when it cannot be decoded.
pub fn rgb(png_bytes: &[u8]) -> Result<(u32, u32, Vec<u8>), ImageError> {
    let raw = decode(png_bytes)?;
    if raw.depth == 3 {
        return Ok((raw.width, raw.height, raw.data));
    }
    let mut out = Vec::with_capacity(raw.data.len() * 3);
    for &i in &raw.data {
        let at = usize::from(i) * 3;
        out.extend_from_slice(raw.palette.get(at..at + 3).unwrap_or(&[0, 0, 0]));
    }
    Ok((raw.width, raw.height, out))
}

/// The PNG `png_bytes` as a JPEG of `quality` (1 to 100).
///
/// # Errors
/// [`ImageError`] when it cannot be decoded or encoded.
pub fn jpeg(png_bytes: &[u8], quality: u8) -> Result<Vec<u8>, ImageError> {
    let (width, height, data) = rgb(png_bytes)?;
    let (w, h) = (
        u16::try_from(width).map_err(|_| ImageError::Jpeg("wider than 65535".into()))?,
        u16::try_from(height).map_err(|_| ImageError::Jpeg("taller than 65535".into()))?,
    );
    let mut out = Vec::new();
    jpeg_encoder::Encoder::new(&mut out, quality)
        .encode(&data, w, h, jpeg_encoder::ColorType::Rgb)
        .map_err(|e| ImageError::Jpeg(e.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gradient() -> Pixels {
        let (width, height) = (7, 5);
        let rgb = (0..width * height)
            .flat_map(|i| [i as u8, (i * 3) as u8, 255 - i as u8])
            .collect();
        Pixels::Rgb { width, height, rgb }
    }

    #[test]
    fn a_crop_is_pixel_for_pixel_its_parent() {
        let png = encode(&gradient()).unwrap();
        let (_, _, whole) = rgb(&png).unwrap();
        let part = crop(&png, (2, 1, 5, 4)).unwrap();
        let (w, h, pixels) = rgb(&part).unwrap();
        assert_eq!((w, h), (3, 3));
        for (y, x) in [(0, 0), (2, 2), (1, 2)] {
            let inner = (y * 3 + x) * 3;
            let outer = ((y + 1) * 7 + x + 2) * 3;
            assert_eq!(pixels[inner..inner + 3], whole[outer..outer + 3]);
        }
        assert!(crop(&png, (5, 0, 5, 1)).is_err());
    }

    #[test]
    fn indexed_pixels_keep_their_palette_through_a_crop() {
        let indexed = Pixels::Indexed {
            width: 4,
            height: 2,
            palette: vec![10, 20, 30, 200, 100, 0],
            indices: vec![0, 1, 1, 0, 1, 0, 0, 1],
        };
        let png = encode(&indexed).unwrap();
        let (_, _, pixels) = rgb(&crop(&png, (1, 0, 3, 2)).unwrap()).unwrap();
        assert_eq!(pixels, [200, 100, 0, 200, 100, 0, 10, 20, 30, 10, 20, 30]);
        let bad = Pixels::Indexed {
            width: 1,
            height: 1,
            palette: vec![0, 0, 0],
            indices: vec![1],
        };
        assert!(matches!(encode(&bad), Err(ImageError::Shape(_))));
    }

    #[test]
    fn a_jpeg_is_a_jpeg() {
        let png = encode(&gradient()).unwrap();
        let jpeg = jpeg(&png, 60).unwrap();
        assert_eq!(jpeg[..2], [0xff, 0xd8]);
    }
}
