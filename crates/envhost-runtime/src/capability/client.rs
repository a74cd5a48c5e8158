//! The `client` capability: `agentenv:environment/client`, requests from the guest to the
//! caller of the tool call it serves (MCP `sampling/createMessage`, `elicitation/create`,
//! `roots/list`; protocol.md#client-requests). The call's [`Peer`](crate::call::Peer) sends
//! them; each answer is recorded for the journal, and a replay answers from the record without
//! asking again. The time spent waiting does not count against the call's CPU deadline.

use std::time::Instant;

use wasmtime::component::{HasData, Linker};

use crate::bindings::agentenv::environment::client;
use crate::call::ClientError;
use crate::capability::context::Context;
use crate::limits::Deadline;

/// JSON-RPC's "method not found", for a request no caller can answer.
const NO_CLIENT: i32 = -32601;

/// The `client` and `upload` capabilities' view of a store's data: the call being served, and
/// its deadline.
pub struct ClientView<'a> {
    /// The call being served, its peer and its recorded answers.
    pub context: &'a mut Context,
    /// The call's CPU deadline, pushed back by the time spent waiting.
    pub(crate) deadline: &'a mut Deadline,
}

/// [`HasData`] for [`ClientView`].
pub struct ClientData;

impl HasData for ClientData {
    type Data<'a> = ClientView<'a>;
}

impl client::Host for ClientView<'_> {
    async fn request(
        &mut self,
        method: String,
        params: String,
    ) -> Result<String, client::RequestError> {
        let answer = match self.context.next_played() {
            Some(Some(recorded)) => recorded,
            Some(None) => Err(ClientError {
                code: NO_CLIENT,
                message: "the replay recorded no answer to this request".into(),
            }),
            None => {
                let answer = match self.context.peer().cloned() {
                    Some(peer) => {
                        let started = Instant::now();
                        let answer = peer.request(method, params).await;
                        self.deadline.shift(started.elapsed());
                        answer
                    }
                    None => Err(ClientError {
                        code: NO_CLIENT,
                        message: "no MCP client is calling: requests reach only the client of \
                                  a tool call served over MCP"
                            .into(),
                    }),
                };
                self.context.record(answer.clone());
                answer
            }
        };
        answer.map_err(|e| client::RequestError {
            code: e.code,
            message: e.message,
        })
    }
}

/// Adds `agentenv:environment/client` to `linker`, its view of a store's data reached through
/// `get`.
///
/// # Errors
/// wasmtime's, when the interface is defined twice.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> ClientView<'_>,
) -> wasmtime::Result<()> {
    client::add_to_linker::<T, ClientData>(linker, get)
}
