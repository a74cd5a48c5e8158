//! Host capabilities: what a guest may import from the host. Each is a unit of its own in the
//! shape wasmtime-wasi's interfaces take: a module with its state (held in the store's data,
//! [`crate::store::StoreData`]), the generated bindings' host trait implemented on that state, an
//! `add_to_linker` that takes a getter from the store's data to the state, and its own tests.
//! [`crate::linker`] adds each one to the linker in one line.
//!
//! - [`agent`]: `agentenv:agent/*` (events, model, env-tools, session), an agent's turn served
//!   by the caller's [`crate::agent::Broker`].
//! - [`wasi`]: WASI 0.2 with nothing granted, its random and clocks deterministic.
//! - [`context`]: `agentenv:environment/context`, the call being served.
//! - [`log`]: `agentenv:environment/log`, the guest's log records, rate-limited, into the host's
//!   log.
//! - [`client`]: `agentenv:environment/client`, requests to the caller of the tool call
//!   served, journaled.
//! - [`upload`]: `agentenv:environment/upload`, a `data/get`'s export uploaded under its
//!   caller's grant, journaled.
//! - [`serving`]: `agentenv:environment/serving`, the episode's tool descriptions changed while
//!   it runs.
//! - [`progress`]: `agentenv:environment/progress`, the progress of the tool call served, sent
//!   to its caller.
//! - [`pixels`]: `agentenv:computer/pixels`, captures the host holds for a driver.
//! - [`timing`]: `agentenv:computer/timing`, time passing inside a driver's operation.
//! - [`x11`]: `agentenv:computer/x11`, a granted display's X server: capture and XTEST input.

pub mod agent;
pub mod client;
pub mod context;
pub mod log;
pub mod pixels;
pub mod progress;
pub mod serving;
pub mod timing;
pub mod upload;
pub mod wasi;
pub mod x11;
