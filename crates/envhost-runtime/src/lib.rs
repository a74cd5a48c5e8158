//! envhost's runtime: wasmtime's engine and its instance pool, environments compiled once,
//! episodes' instances with their journals, snapshots and pre-initialised images, and the host
//! capabilities guests import. It knows wasmtime and the protocol's JSON types
//! ([`envhost_protocol`]), not HTTP.
//!
//! An [`Environment`] is a component compiled once, with its `InstancePre` and its cached,
//! resolved description. A [`Runner`] is the runtime side of one episode: one store and one
//! instance of an environment; calls into it are serialised, episodes run concurrently. A guest
//! that traps, exceeds its CPU deadline or exhausts its memory fails the call it was serving
//! ([`CallError::Fault`]); the episode is then rebuilt from its [`Journal`] to its state before
//! that call.
//!
//! Layout, leaves first: [`limits`] and `call` (shared small types), `bindings` (the WIT world),
//! [`capability`] (one unit per host import), `store` (a store's data: the capabilities'
//! states), `linker` (where each capability is added, one line each), `engine`, `environment`,
//! `journal`, `snapshot`, `threads`, and `runner` (episodes, replay, images).

#![warn(missing_docs)]

pub mod agent;
pub mod bindings;
mod call;
pub mod capability;
mod convert;
pub mod driver;
mod engine;
mod environment;
mod error;
mod journal;
pub mod limits;
mod linker;
mod runner;
mod snapshot;
mod store;
mod threads;
pub mod world;

pub use call::{
    Asked, CallContext, ClientError, Exchange, Finishing, Namespace, NamespaceLimits, Peer, Stored,
    TransferFailure,
};
pub use capability::wasi::{Reading, Seed};
pub use convert::part_to_guest;
pub use engine::{Runtime, RuntimeConfig};
pub use environment::Environment;
pub use error::{CallError, Fault, LoadError, ReplayError};
pub use journal::{AnswerDigest, AnswerHash, Entry, Journal, Op};
pub use limits::{EPOCH_TICK, Limits};
pub use runner::{Image, ImageError, Runner};
pub use snapshot::{Snapshot, SnapshotFileError};
pub use store::StoreData;
pub use threads::GuestThreads;
