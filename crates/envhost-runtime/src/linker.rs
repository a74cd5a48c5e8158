//! The one place the linkers are built, one for each world: each capability of
//! [`crate::capability`] adds its imports, one line each.

use wasmtime::Engine;
use wasmtime::component::Linker;

use crate::capability::agent;
use crate::capability::{
    client, context, log, pixels, progress, serving, timing, upload, wasi, x11,
};
use crate::store::StoreData;

/// The linker every environment component of `engine` is instantiated with: WASI with nothing
/// granted and deterministic random and clocks, `context`, `log`, `progress`, `client`, `upload` and `serving`.
///
/// # Errors
/// wasmtime's, when an interface is defined twice.
pub(crate) fn environment(engine: &Engine) -> wasmtime::Result<Linker<StoreData>> {
    let mut linker = Linker::<StoreData>::new(engine);
    wasi::add_to_linker(&mut linker)?;
    context::add_to_linker(&mut linker, |data| &mut data.context)?;
    log::add_to_linker(&mut linker, StoreData::log_view)?;
    progress::add_to_linker(&mut linker, |data| &mut data.context)?;
    client::add_to_linker(&mut linker, StoreData::client_view)?;
    upload::add_to_linker(&mut linker, StoreData::client_view)?;
    serving::add_to_linker(&mut linker, |data| &mut data.serving)?;
    Ok(linker)
}

/// The linker a driver component of `engine` is instantiated with: WASI with nothing granted
/// and deterministic random and clocks, `pixels` and `timing`, and `x11` when the driver is
/// granted a display.
///
/// # Errors
/// wasmtime's, when an interface is defined twice.
pub(crate) fn driver(engine: &Engine, with_x11: bool) -> wasmtime::Result<Linker<StoreData>> {
    let mut linker = Linker::<StoreData>::new(engine);
    wasi::add_to_linker(&mut linker)?;
    pixels::add_to_linker(&mut linker, |data| &mut data.pixels)?;
    timing::add_to_linker(&mut linker, |data| &mut data.timing)?;
    if with_x11 {
        x11::add_to_linker(&mut linker, StoreData::x11_view)?;
    }
    Ok(linker)
}

/// The linker an agent component of `engine` is instantiated with: WASI with nothing granted
/// and deterministic random and clocks, and the agent world's imports, served by the turn's
/// broker.
///
/// # Errors
/// wasmtime's, when an interface is defined twice.
pub(crate) fn agent(engine: &Engine) -> wasmtime::Result<Linker<StoreData>> {
    let mut linker = Linker::<StoreData>::new(engine);
    wasi::add_to_linker(&mut linker)?;
    agent::add_to_linker(&mut linker, |data| &mut data.agent)?;
    Ok(linker)
}
