//! The `context` capability: `agentenv:environment/context`, which answers the guest the tool or
//! extension call it is serving (who calls, the tool, the arguments, a fresh call id;
//! protocol.md#callers), and nothing outside a call.

use std::collections::VecDeque;
use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker};

use crate::bindings::agentenv::environment::context;
use crate::call::{CallContext, Exchange, Peer};
use crate::capability::upload::Uploads;

/// The `context` capability's state in a store: the call being served, if any, and its caller
/// as the guest may reach it (the `progress`, `log` and `client` capabilities send there), with
/// the answers of the call's requests to the caller: recorded, or played back in a replay.
#[derive(Default)]
pub struct Context {
    call: Option<CallContext>,
    peer: Option<Arc<dyn Peer>>,
    /// In a replay, the recorded answers still to give, in order.
    playback: Option<VecDeque<Exchange>>,
    /// The answers given during the current call.
    recorded: Vec<Exchange>,
    /// The export of the call being served (the `upload` capability's).
    pub(crate) uploads: Uploads,
}

impl Context {
    /// Answers the call's requests to the caller from `exchanges`, as recorded, instead of
    /// asking (`None`: ask the peer).
    pub(crate) fn play(&mut self, exchanges: Option<Vec<Exchange>>) {
        self.playback = exchanges.map(VecDeque::from);
        self.recorded.clear();
        self.uploads.clear();
    }

    /// The next recorded answer in a replay; `None` when not replaying, `Some(None)` when the
    /// replay has no more.
    pub(crate) fn next_played(&mut self) -> Option<Option<Exchange>> {
        self.playback.as_mut().map(VecDeque::pop_front)
    }

    /// Records an answer the caller gave.
    pub(crate) fn record(&mut self, exchange: Exchange) {
        self.recorded.push(exchange);
    }

    /// The answers recorded since [`Context::play`], taken.
    pub(crate) fn take_recorded(&mut self) -> Vec<Exchange> {
        self.playback = None;
        std::mem::take(&mut self.recorded)
    }

    /// Sends to `peer` from now on (`None` between calls and in a replay).
    pub(crate) fn set_peer(&mut self, peer: Option<Arc<dyn Peer>>) {
        self.peer = peer;
    }

    /// The peer of the call being served, if it has one.
    pub(crate) fn peer(&self) -> Option<&Arc<dyn Peer>> {
        self.peer.as_ref()
    }

    /// Whether the caller of the call being served cancelled it.
    pub(crate) fn cancelled(&self) -> bool {
        self.peer.as_ref().is_some_and(|peer| peer.cancelled())
    }

    /// Serves `call` from now on (`None` between calls, and for the data plane's operations).
    pub(crate) fn set(&mut self, call: Option<CallContext>) {
        self.call = call;
    }

    /// The call served, taken back at the call's end.
    pub(crate) fn take(&mut self) -> Option<CallContext> {
        self.call.take()
    }
}

impl context::Host for Context {
    fn current(&mut self) -> Option<context::CallContext> {
        self.call.as_ref().map(|c| context::CallContext {
            caller: context::Caller {
                role: c.caller.role.clone(),
                session: c.caller.session.clone(),
            },
            tool: c.tool.clone(),
            arguments: c.arguments.clone(),
            call_id: c.call_id.clone(),
        })
    }
}

/// Adds `agentenv:environment/context` to `linker`, answered from the [`Context`] that `get`
/// finds in the store's data.
///
/// # Errors
/// wasmtime's, when the interface is defined twice.
pub fn add_to_linker<T: 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut Context,
) -> wasmtime::Result<()> {
    context::add_to_linker::<T, HasSelf<Context>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use envhost_protocol::Caller;

    #[test]
    fn the_guest_sees_the_call_served_and_nothing_between_calls() {
        let mut state = Context::default();
        assert!(context::Host::current(&mut state).is_none());
        let caller = Caller {
            role: Some("alice".into()),
            session: None,
        };
        let call = CallContext::new(caller, "slack_send".into(), "{}".into());
        state.set(Some(call.clone()));
        let seen = context::Host::current(&mut state).unwrap();
        assert_eq!(
            (
                seen.caller.role.as_deref(),
                seen.tool.as_str(),
                seen.call_id
            ),
            (Some("alice"), "slack_send", call.call_id.clone())
        );
        assert_eq!(state.take(), Some(call));
        assert!(context::Host::current(&mut state).is_none());
    }
}
