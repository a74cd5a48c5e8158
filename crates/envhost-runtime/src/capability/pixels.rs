//! The `pixels` capability: `agentenv:computer/pixels`, captures the host holds for a driver (a
//! `captured` resource), so a capture taken by another capability (`x11`'s `capture-root`)
//! goes back to the host from the driver's `capture` without passing through its memory.

use wasmtime::component::{HasSelf, Linker, Resource, ResourceTable};

use crate::driver::bindings::agentenv::computer::pixels;

/// A capture held by the host: rows top to bottom, three bytes (red, green, blue) a pixel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height × 3` bytes.
    pub rgb: Vec<u8>,
}

/// The `pixels` capability's state in a store: the captures its guest holds.
#[derive(Default)]
pub struct Pixels {
    table: ResourceTable,
}

impl Pixels {
    /// Hands `captured` to the guest.
    ///
    /// # Errors
    /// When the store holds too many resources.
    pub fn hold(&mut self, captured: Captured) -> wasmtime::Result<Resource<Captured>> {
        Ok(self.table.push(captured)?)
    }

    /// Takes back a capture the guest returned, ending the guest's handle.
    ///
    /// # Errors
    /// When `handle` names no capture this store holds.
    pub fn take(&mut self, handle: Resource<Captured>) -> wasmtime::Result<Captured> {
        Ok(self.table.delete(handle)?)
    }
}

impl pixels::HostCaptured for Pixels {
    fn width(&mut self, this: Resource<Captured>) -> u32 {
        self.table.get(&this).map_or(0, |c| c.width)
    }

    fn height(&mut self, this: Resource<Captured>) -> u32 {
        self.table.get(&this).map_or(0, |c| c.height)
    }

    fn drop(&mut self, this: Resource<Captured>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

impl pixels::Host for Pixels {}

/// Adds `agentenv:computer/pixels` to `linker`, its state reached through `get`.
///
/// # Errors
/// wasmtime's, when the interface is already defined.
pub fn add_to_linker<T: 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut Pixels,
) -> wasmtime::Result<()> {
    pixels::add_to_linker::<T, HasSelf<Pixels>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pixels::HostCaptured as _;

    #[test]
    fn a_held_capture_is_taken_back_whole_and_once() {
        let mut pixels = Pixels::default();
        let captured = Captured {
            width: 2,
            height: 1,
            rgb: vec![1, 2, 3, 4, 5, 6],
        };
        let handle = pixels.hold(captured.clone()).unwrap();
        let again = Resource::<Captured>::new_own(handle.rep());
        assert_eq!(pixels.width(Resource::new_borrow(handle.rep())), 2);
        assert_eq!(pixels.take(handle).unwrap(), captured);
        assert!(pixels.take(again).is_err());
    }
}
