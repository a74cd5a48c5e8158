//! Captures through MIT-SHM (version 1.2, a memfd passed to the server): the X server writes
//! the root's pixels into a segment both processes map, so a frame does not cross the X
//! socket. One segment per connection, sized for the root and reused by every capture.

use std::os::fd::OwnedFd;
use std::ptr::NonNull;

use rustix::fs::{MemfdFlags, ftruncate, memfd_create};
use rustix::mm::{MapFlags, ProtFlags, mmap, munmap};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::shm::{self, ConnectionExt as _};
use x11rb::protocol::xproto::ImageFormat;
use x11rb::rust_connection::RustConnection;

/// A segment attached to one connection's server, mapped read-only here.
pub struct Segment {
    id: shm::Seg,
    map: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is owned by the segment and only read through `&self`; the X server
// writes it only while a `ShmGetImage` request this process sent is outstanding.
unsafe impl Send for Segment {}

/// Why MIT-SHM is not used on a connection (captures then go through `GetImage`).
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    /// The server has no MIT-SHM, or one older than 1.2 (no fd passing).
    #[error("the X server offers no MIT-SHM 1.2")]
    Unsupported,
    /// Making or mapping the memfd failed.
    #[error("shared memory: {0}")]
    Memory(#[from] rustix::io::Errno),
    /// The server refused the request, or the connection failed.
    #[error("{0}")]
    Request(String),
}

fn request(e: impl std::fmt::Display) -> ShmError {
    ShmError::Request(e.to_string())
}

impl Segment {
    /// A segment of `len` bytes attached to `conn`'s server.
    ///
    /// # Errors
    /// [`ShmError::Unsupported`] without MIT-SHM 1.2; [`ShmError::Memory`] or
    /// [`ShmError::Request`] when the segment cannot be made or attached.
    pub fn attach(conn: &RustConnection, len: usize) -> Result<Self, ShmError> {
        if conn
            .extension_information(shm::X11_EXTENSION_NAME)
            .map_err(request)?
            .is_none()
        {
            return Err(ShmError::Unsupported);
        }
        let version = conn
            .shm_query_version()
            .map_err(request)?
            .reply()
            .map_err(request)?;
        if (version.major_version, version.minor_version) < (1, 2) {
            return Err(ShmError::Unsupported);
        }
        let fd = memfd_create("envhost-x11-capture", MemfdFlags::CLOEXEC)?;
        ftruncate(&fd, len as u64)?;
        // SAFETY: a fresh shared mapping of a file this function made, `len` bytes long; it is
        // unmapped once, on drop.
        let map = unsafe {
            mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ,
                MapFlags::SHARED,
                &fd,
                0,
            )?
        };
        let map = NonNull::new(map.cast::<u8>()).ok_or(ShmError::Unsupported)?;
        let mut segment = Self { id: 0, map, len };
        segment.id = conn.generate_id().map_err(request)?;
        let server_fd: OwnedFd = fd;
        conn.shm_attach_fd(segment.id, server_fd, false)
            .map_err(request)?
            .check()
            .map_err(request)?;
        Ok(segment)
    }

    /// The root window's `width × height` pixels as the server's Z-pixmap bytes (four a pixel),
    /// read into the segment.
    ///
    /// # Errors
    /// [`ShmError::Request`] when the server refuses or the connection fails, or the image does
    /// not fit the segment.
    pub fn capture(
        &self,
        conn: &RustConnection,
        root: u32,
        width: u16,
        height: u16,
    ) -> Result<&[u8], ShmError> {
        let reply = conn
            .shm_get_image(
                root,
                0,
                0,
                width,
                height,
                !0,
                ImageFormat::Z_PIXMAP.into(),
                self.id,
                0,
            )
            .map_err(request)?
            .reply()
            .map_err(request)?;
        let size = reply.size as usize;
        if size > self.len {
            return Err(ShmError::Request(format!(
                "the image is {size} bytes, the segment {}",
                self.len
            )));
        }
        // SAFETY: the mapping is `self.len` bytes and lives as long as `self`; the server wrote
        // these bytes before it answered the request above and writes nothing until the next.
        Ok(unsafe { std::slice::from_raw_parts(self.map.as_ptr(), size) })
    }

    /// Detaches the segment from `conn`'s server (best effort: a closed connection detaches it).
    pub fn detach(&self, conn: &RustConnection) {
        if let Ok(cookie) = conn.shm_detach(self.id) {
            cookie.ignore_error();
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `attach`, unmapped only here.
        let _ = unsafe { munmap(self.map.as_ptr().cast(), self.len) };
    }
}
