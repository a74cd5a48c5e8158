//! Pre-initialised images: an episode's instance at the end of a journal, saved as a component
//! of its own, so that restoring it costs one instantiation whatever the journal's length.
//!
//! wasmtime-wizer instruments the environment's component (exports that read every core
//! instance's memories and globals), the journal is replayed into an instance of the
//! instrumented copy (every call checked, as on any replay), and wizer rewrites the component
//! with that instance's memories and globals as its initial state. Host-side state is not in an
//! image and needs not be: random is drawn per journal entry ([`crate::capability::wasi::Dice`]) and
//! the clocks continue from the last reading. Handles to host resources (WASI streams, say) that
//! a guest keeps across calls are not carried over; a guest that keeps one faults on its next
//! use, and the episode is then rebuilt by replaying its journal.

use std::collections::BTreeMap;

use wasmtime::Store;
use wasmtime::component::{ComponentType, Instance, Lift, WasmList};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

use super::maker::Maker;
use crate::environment::{Live, Ready};
use crate::error::ReplayError;
use crate::journal::Journal;
use crate::store::StoreData;

/// An instance of an environment brought to the end of a journal, compiled as a component.
pub struct Image {
    ready: Ready,
    /// How many journal entries the image stands after.
    entries: usize,
    /// The last monotonic clock reading of the journal, in nanoseconds: a restored episode's
    /// monotonic clock continues from it.
    monotonic: u64,
    /// The image component's size, in bytes.
    size: usize,
    /// The tool descriptions the journal's calls changed, which an episode started from the
    /// image takes.
    descriptions: Option<BTreeMap<String, String>>,
}

/// Why an image could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// wasmtime-wizer cannot instrument the component (its shape is one wizer does not
    /// support), or the instrumented copy does not compile.
    #[error("the component cannot be pre-initialised: {0}")]
    Unsupported(String),
    /// The journal did not replay.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The instance's memories and globals could not be read.
    #[error("the instance's state cannot be read: {0}")]
    Read(String),
    /// The rewritten component does not compile.
    #[error("the image does not compile: {0}")]
    Compile(String),
}

impl Image {
    /// Replays `journal` into an instrumented instance of `maker`'s environment, with `maker`'s
    /// seed, and compiles the instance's state as an image.
    ///
    /// # Errors
    /// [`ImageError`].
    pub(super) async fn build(maker: &Maker, journal: &Journal) -> Result<Self, ImageError> {
        let environment = &maker.environment;
        let wizer = Wizer::new();
        let bytes = environment.bytes().map_err(ImageError::Unsupported)?;
        let (context, instrumented) = wizer
            .instrument_component(&bytes)
            .map_err(|e| ImageError::Unsupported(format!("{e:#}")))?;
        let ready = environment
            .instrumented(instrumented)
            .await
            .map_err(ImageError::Unsupported)?;
        let mut live = maker.replay_from(ready, journal).await?;
        let monotonic = maker.sources.tape.monotonic_base();
        StoreData::arm_deadline(&mut live.store, environment.limits());
        let Live {
            mut store,
            instance,
            ..
        } = live;
        let mut reader = Reader {
            store: &mut store,
            instance,
            failed: None,
        };
        let bytes = wizer
            .snapshot_component(&context, &mut reader)
            .await
            .map_err(|e| ImageError::Read(format!("{e:#}")))?;
        if let Some(failed) = reader.failed {
            return Err(ImageError::Read(failed));
        }
        let size = bytes.len();
        let ready = environment
            .compile(bytes)
            .await
            .map_err(ImageError::Compile)?;
        Ok(Self {
            ready,
            entries: journal.len(),
            monotonic,
            size,
            descriptions: maker.descriptions.changed(),
        })
    }

    /// The tool descriptions the image's journal changed.
    pub(super) fn descriptions(&self) -> Option<&BTreeMap<String, String>> {
        self.descriptions.as_ref()
    }

    /// The compiled image.
    pub(super) fn ready(&self) -> &Ready {
        &self.ready
    }

    /// How many journal entries the image stands after.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// The last monotonic clock reading of the journal, in nanoseconds.
    pub(super) fn monotonic(&self) -> u64 {
        self.monotonic
    }

    /// The image component's size, in bytes.
    pub fn size(&self) -> usize {
        self.size
    }
}

/// Calls the instrumented instance's state-reading exports for wizer. Wizer's interface takes
/// no errors, so the first one is kept here (and a zero value answered) for [`Image::build`]
/// to report.
struct Reader<'a> {
    store: &'a mut Store<StoreData>,
    instance: Instance,
    failed: Option<String>,
}

impl Reader<'_> {
    async fn call<R, O>(
        &mut self,
        interface: &str,
        func: &str,
        read: impl FnOnce(&Store<StoreData>, R) -> O,
    ) -> Option<O>
    where
        R: ComponentType + Lift + Send + Sync + 'static,
    {
        match self.try_call(interface, func).await {
            Ok(value) => Some(read(self.store, value)),
            Err(e) => {
                self.failed
                    .get_or_insert_with(|| format!("{interface}#{func}: {e:#}"));
                None
            }
        }
    }

    async fn try_call<R>(&mut self, interface: &str, func: &str) -> wasmtime::Result<R>
    where
        R: ComponentType + Lift + Send + Sync + 'static,
    {
        let missing = || wasmtime::format_err!("not exported");
        let (_, exported) = self
            .instance
            .get_export(&mut *self.store, None, interface)
            .ok_or_else(missing)?;
        let (_, index) = self
            .instance
            .get_export(&mut *self.store, Some(&exported), func)
            .ok_or_else(missing)?;
        let typed = self
            .instance
            .get_typed_func::<(), (R,)>(&mut *self.store, index)?;
        Ok(typed.call_async(&mut *self.store, ()).await?.0)
    }
}

impl ComponentInstanceState for Reader<'_> {
    async fn call_func_ret_list_u8(
        &mut self,
        instance: &str,
        func: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) {
        let read = |store: &Store<StoreData>, list: WasmList<u8>| {
            contents(list.as_le_slice(store));
        };
        self.call(instance, func, read).await;
    }

    async fn call_func_ret_s32(&mut self, instance: &str, func: &str) -> i32 {
        self.call(instance, func, |_, value: i32| value)
            .await
            .unwrap_or_default()
    }

    async fn call_func_ret_s64(&mut self, instance: &str, func: &str) -> i64 {
        self.call(instance, func, |_, value: i64| value)
            .await
            .unwrap_or_default()
    }

    async fn call_func_ret_f32(&mut self, instance: &str, func: &str) -> u32 {
        self.call(instance, func, |_, value: f32| value.to_bits())
            .await
            .unwrap_or_default()
    }

    async fn call_func_ret_f64(&mut self, instance: &str, func: &str) -> u64 {
        self.call(instance, func, |_, value: f64| value.to_bits())
            .await
            .unwrap_or_default()
    }
}
