//! The one place the linker of environment components is built: each capability of
//! [`crate::capability`] adds its imports, one line each.

use wasmtime::Engine;
use wasmtime::component::Linker;

use crate::capability::{context, log, wasi};
use crate::store::StoreData;

/// The linker every environment component of `engine` is instantiated with: WASI with nothing
/// granted and deterministic random and clocks, `context` and `log`.
///
/// # Errors
/// wasmtime's, when an interface is defined twice.
pub(crate) fn environment(engine: &Engine) -> wasmtime::Result<Linker<StoreData>> {
    let mut linker = Linker::<StoreData>::new(engine);
    wasi::add_to_linker(&mut linker)?;
    context::add_to_linker(&mut linker, |data| &mut data.context)?;
    log::add_to_linker(&mut linker, |data| &mut data.log)?;
    Ok(linker)
}
