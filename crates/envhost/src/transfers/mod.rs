//! Resolving file parts for `data/add` (protocol.md#file-parts): the host fetches every file before
//! the guest sees it, so a guest only ever gets bytes and never needs a filesystem or a network.
//!
//! - inline `bytes`: base64-decoded;
//! - `file://`: read through cap-std, only under the allowed data roots (a path that leaves them,
//!   by `..` or a symlink, is refused);
//! - `http://`, `https://`: fetched with a timeout, redirects followed, size capped, every
//!   connection and redirect held to the egress policy ([`policy`], [`egress`]).
//!
//! [`namespace`] uploads a `data/get`'s export under the `write_namespace` grant it came with.
//! [`objects`] moves whole objects through the agentenv framework's grants (an agent
//! deployment's trajectories and snapshots), on the same client.

pub mod egress;
pub mod namespace;
pub mod objects;
pub mod policy;
mod resolver;

pub use policy::FetchPolicy;
pub use resolver::{Resolver, TransferConfig, TransferError};
