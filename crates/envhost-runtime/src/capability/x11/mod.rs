//! The `x11` capability: `agentenv:computer/x11`, one connection to the X server of a display
//! the operator granted (computer.md#x11), opened on first use and reopened after it drops.
//! Captures land in the `pixels` capability's table, so a driver hands them back without
//! copying them through its memory. Captures go through MIT-SHM where the server offers it
//! ([`shm`]), else through `GetImage`.

mod shm;

use wasmtime::component::{HasData, Linker, Resource};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::xproto::{self, ConnectionExt as _, ImageFormat};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use self::shm::Segment;
use super::pixels::{Captured, Pixels};
use crate::driver::bindings::agentenv::computer::types::Point;
use crate::driver::bindings::agentenv::computer::x11::{self, X11Error};

/// How a connection captures: MIT-SHM is tried at the first capture.
enum Capture {
    Untried,
    Shm(Segment),
    GetImage,
}

/// An open connection and what is read from it once.
struct Open {
    conn: RustConnection,
    root: xproto::Window,
    width: u16,
    height: u16,
    capture: Capture,
}

impl Open {
    /// The root's pixels as Z-pixmap bytes, four a pixel, handed to `read`.
    fn capture_root<T>(&mut self, read: impl FnOnce(&[u8]) -> T) -> Result<T, X11Error> {
        let bytes = usize::from(self.width) * usize::from(self.height) * 4;
        if matches!(self.capture, Capture::Untried) {
            self.capture = match Segment::attach(&self.conn, bytes) {
                Ok(segment) => Capture::Shm(segment),
                Err(e) => {
                    tracing::info!(error = %e, "X captures go through GetImage");
                    Capture::GetImage
                }
            };
        }
        if let Capture::Shm(segment) = &self.capture {
            match segment.capture(&self.conn, self.root, self.width, self.height) {
                Ok(data) => return Ok(read(data)),
                Err(e) => {
                    tracing::warn!(error = %e, "an MIT-SHM capture failed; X captures go through GetImage from now on");
                    segment.detach(&self.conn);
                    self.capture = Capture::GetImage;
                }
            }
        }
        let image = self
            .conn
            .get_image(
                ImageFormat::Z_PIXMAP,
                self.root,
                0,
                0,
                self.width,
                self.height,
                !0,
            )
            .map_err(connection_error)?
            .reply()
            .map_err(reply_error)?;
        Ok(read(&image.data))
    }
}

/// The `x11` capability's state in a store: the granted display and its connection.
pub struct X11 {
    display: String,
    open: Option<Open>,
}

impl X11 {
    /// The capability for display `display` (e.g. `:99`), not connected yet.
    pub fn new(display: impl Into<String>) -> Self {
        Self {
            display: display.into(),
            open: None,
        }
    }

    /// The connection, opened when there is none.
    fn open(&mut self) -> Result<&mut Open, X11Error> {
        if self.open.is_none() {
            let (conn, screen) = RustConnection::connect(Some(&self.display)).map_err(|e| {
                X11Error::Unavailable(format!("the X server {} is unavailable: {e}", self.display))
            })?;
            let info = conn.setup().roots.get(screen).ok_or_else(|| {
                X11Error::Unavailable(format!(
                    "the X server {} has no screen {screen}",
                    self.display
                ))
            })?;
            let (root, width, height) = (info.root, info.width_in_pixels, info.height_in_pixels);
            self.open = Some(Open {
                conn,
                root,
                width,
                height,
                capture: Capture::Untried,
            });
        }
        self.open
            .as_mut()
            .ok_or_else(|| X11Error::Unavailable("no connection".into()))
    }

    /// Runs `request` on the connection; a failed connection is dropped, to be reopened by the
    /// next call.
    fn with<T>(
        &mut self,
        request: impl FnOnce(&mut Open) -> Result<T, X11Error>,
    ) -> Result<T, X11Error> {
        let outcome = request(self.open()?);
        if matches!(outcome, Err(X11Error::Unavailable(_))) {
            self.open = None;
        }
        outcome
    }
}

/// A failed request: the connection's failure makes the server unavailable, the server's
/// error a failed request.
fn failed(e: impl std::fmt::Display, connection: bool) -> X11Error {
    if connection {
        X11Error::Unavailable(e.to_string())
    } else {
        X11Error::RequestFailed(e.to_string())
    }
}

fn reply_error(e: x11rb::errors::ReplyError) -> X11Error {
    let connection = matches!(e, x11rb::errors::ReplyError::ConnectionError(_));
    failed(e, connection)
}

fn connection_error(e: x11rb::errors::ConnectionError) -> X11Error {
    failed(e, true)
}

/// The `x11` capability's view of a store's data: its own state, and the `pixels` table its
/// captures go to.
pub struct X11View<'a> {
    /// The connection's state.
    pub x11: &'a mut X11,
    /// Where captures are held.
    pub pixels: &'a mut Pixels,
}

/// [`HasData`] for [`X11View`].
pub struct X11Data;

impl HasData for X11Data {
    type Data<'a> = X11View<'a>;
}

impl x11::Host for X11View<'_> {
    fn screen_size(&mut self) -> Result<(u32, u32), X11Error> {
        self.x11
            .with(|open| Ok((u32::from(open.width), u32::from(open.height))))
    }

    fn capture_root(&mut self) -> Result<Resource<Captured>, X11Error> {
        let captured = self.x11.with(|open| {
            let (width, height) = (open.width, open.height);
            let pixels = usize::from(width) * usize::from(height);
            open.capture_root(|data| bgrx_to_rgb(data, pixels))?
                .map(|rgb| Captured {
                    width: u32::from(width),
                    height: u32::from(height),
                    rgb,
                })
                .ok_or_else(|| {
                    X11Error::RequestFailed(format!(
                        "the root image is not 32 bits a pixel at {width}×{height}"
                    ))
                })
        })?;
        self.pixels
            .hold(captured)
            .map_err(|e| X11Error::RequestFailed(format!("{e:#}")))
    }

    fn has_xtest(&mut self) -> Result<bool, X11Error> {
        self.x11.with(|open| {
            Ok(open
                .conn
                .extension_information(x11rb::protocol::xtest::X11_EXTENSION_NAME)
                .map_err(connection_error)?
                .is_some())
        })
    }

    fn fake_motion(&mut self, at: Point) -> Result<(), X11Error> {
        self.x11.with(|open| {
            let (x, y) = (clamp16(at.x), clamp16(at.y));
            open.conn
                .xtest_fake_input(xproto::MOTION_NOTIFY_EVENT, 0, 0, open.root, x, y, 0)
                .map_err(connection_error)?;
            Ok(())
        })
    }

    fn fake_button(&mut self, number: u8, down: bool) -> Result<(), X11Error> {
        let kind = if down {
            xproto::BUTTON_PRESS_EVENT
        } else {
            xproto::BUTTON_RELEASE_EVENT
        };
        self.x11.with(|open| {
            open.conn
                .xtest_fake_input(kind, number, 0, open.root, 0, 0, 0)
                .map_err(connection_error)?;
            Ok(())
        })
    }

    fn fake_key(&mut self, keycode: u8, down: bool) -> Result<(), X11Error> {
        let kind = if down {
            xproto::KEY_PRESS_EVENT
        } else {
            xproto::KEY_RELEASE_EVENT
        };
        self.x11.with(|open| {
            open.conn
                .xtest_fake_input(kind, keycode, 0, open.root, 0, 0, 0)
                .map_err(connection_error)?;
            Ok(())
        })
    }

    fn keyboard_mapping(&mut self) -> Result<(u8, Vec<Vec<u32>>), X11Error> {
        self.x11.with(|open| {
            let setup = open.conn.setup();
            let (first, last) = (setup.min_keycode, setup.max_keycode);
            let count = last.saturating_sub(first).saturating_add(1);
            let reply = open
                .conn
                .get_keyboard_mapping(first, count)
                .map_err(connection_error)?
                .reply()
                .map_err(reply_error)?;
            let columns = usize::from(reply.keysyms_per_keycode).max(1);
            let rows = reply.keysyms.chunks(columns).map(<[u32]>::to_vec).collect();
            Ok((first, rows))
        })
    }

    fn change_keyboard_mapping(&mut self, keycode: u8, keysyms: Vec<u32>) -> Result<(), X11Error> {
        let columns = u8::try_from(keysyms.len().max(1))
            .map_err(|_| X11Error::RequestFailed("at most 255 keysyms a keycode".into()))?;
        self.x11.with(|open| {
            open.conn
                .change_keyboard_mapping(1, keycode, columns, &keysyms)
                .map_err(connection_error)?
                .check()
                .map_err(reply_error)?;
            Ok(())
        })
    }

    fn query_keymap(&mut self) -> Result<Vec<u8>, X11Error> {
        self.x11.with(|open| {
            let reply = open
                .conn
                .query_keymap()
                .map_err(connection_error)?
                .reply()
                .map_err(reply_error)?;
            let mut down = Vec::new();
            for (byte, bits) in reply.keys.iter().enumerate() {
                for bit in 0..8 {
                    if bits & (1 << bit) != 0 {
                        down.push((byte * 8 + bit) as u8);
                    }
                }
            }
            Ok(down)
        })
    }

    fn query_pointer(&mut self) -> Result<Point, X11Error> {
        self.x11.with(|open| {
            let reply = open
                .conn
                .query_pointer(open.root)
                .map_err(connection_error)?
                .reply()
                .map_err(reply_error)?;
            Ok(Point {
                x: i32::from(reply.root_x),
                y: i32::from(reply.root_y),
            })
        })
    }

    fn sync(&mut self) -> Result<(), X11Error> {
        self.x11.with(|open| {
            open.conn
                .get_input_focus()
                .map_err(connection_error)?
                .reply()
                .map_err(reply_error)?;
            Ok(())
        })
    }
}

/// `pixels` Z-pixmap pixels of four bytes (blue, green, red, unused) as RGB; `None` when
/// `data` is shorter.
fn bgrx_to_rgb(data: &[u8], pixels: usize) -> Option<Vec<u8>> {
    let data = data.get(..pixels * 4)?;
    let mut rgb = vec![0; pixels * 3];
    for (to, from) in rgb
        .as_chunks_mut::<3>()
        .0
        .iter_mut()
        .zip(data.as_chunks::<4>().0)
    {
        to.copy_from_slice(&[from[2], from[1], from[0]]);
    }
    Some(rgb)
}

/// A coordinate as X's 16-bit one.
fn clamp16(v: i32) -> i16 {
    v.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

/// Adds `agentenv:computer/x11` to `linker`, its view of a store's data reached through `get`.
///
/// # Errors
/// wasmtime's, when the interface is already defined.
pub fn add_to_linker<T: 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> X11View<'_>,
) -> wasmtime::Result<()> {
    x11::add_to_linker::<T, X11Data>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::bgrx_to_rgb;

    #[test]
    fn bgrx_pixels_become_rgb_and_short_data_is_refused() {
        let data = [1, 2, 3, 0xff, 4, 5, 6, 0];
        assert_eq!(bgrx_to_rgb(&data, 2), Some(vec![3, 2, 1, 6, 5, 4]));
        assert_eq!(bgrx_to_rgb(&data, 1), Some(vec![3, 2, 1]));
        assert_eq!(bgrx_to_rgb(&data, 3), None);
    }
}
