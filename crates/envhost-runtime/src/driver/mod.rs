//! Computer drivers: components of the `computer` package's worlds (`wit/computer`). A
//! [`Driver`] is a component compiled once, its groups found from its exports and its features
//! checked against the contract; a [`DriverInstance`] is one live instance of it, with the
//! [`Input`] journal a fork replays.

pub mod bindings;
mod component;
mod features;
mod instance;
mod journal;

pub use component::{Driver, DriverLoadError, ForkError, Grants, Groups};
pub use instance::{DriverCallError, DriverInstance, ForkPoint, Pixels};
pub use journal::Input;
