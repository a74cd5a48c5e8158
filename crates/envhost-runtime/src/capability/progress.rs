//! The `progress` capability: `agentenv:environment/progress`, the guest's progress reports
//! on the tool call it serves, handed to the call's [`Peer`](crate::call::Peer)
//! (protocol.md#progress); dropped outside a call, in a replay, and when the report is not a
//! finite number.

use wasmtime::component::{HasSelf, Linker};

use crate::bindings::agentenv::environment::progress;
use crate::capability::context::Context;

impl progress::Host for Context {
    fn report(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return;
        }
        if let Some(peer) = self.peer() {
            peer.progress(progress, total, message);
        }
    }
}

/// Adds `agentenv:environment/progress` to `linker`, answered from the [`Context`] that `get`
/// finds in the store's data.
///
/// # Errors
/// wasmtime's, when the interface is defined twice.
pub fn add_to_linker<T: 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut Context,
) -> wasmtime::Result<()> {
    progress::add_to_linker::<T, HasSelf<Context>>(linker, get)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::call::Peer;

    #[derive(Default)]
    struct Seen(Mutex<Vec<(f64, Option<f64>)>>);

    impl Peer for Seen {
        fn request(&self, _: String, _: String) -> crate::call::Asked {
            Box::pin(std::future::ready(Ok("{}".into())))
        }
        fn progress(&self, progress: f64, total: Option<f64>, _: Option<String>) {
            self.0.lock().unwrap().push((progress, total));
        }
        fn log(&self, _: tracing::Level, _: &str, _: Option<&str>) {}
    }

    #[test]
    fn reports_reach_the_calls_peer_and_nothing_else() {
        let mut context = Context::default();
        progress::Host::report(&mut context, 1.0, None, None);
        let seen = Arc::new(Seen::default());
        context.set_peer(Some(seen.clone()));
        progress::Host::report(&mut context, 50.0, Some(100.0), None);
        progress::Host::report(&mut context, f64::NAN, None, None);
        context.set_peer(None);
        progress::Host::report(&mut context, 2.0, None, None);
        assert_eq!(*seen.0.lock().unwrap(), [(50.0, Some(100.0))]);
    }
}
