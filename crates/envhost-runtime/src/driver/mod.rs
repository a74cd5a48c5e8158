//! Computer drivers: components of the `computer` package's worlds (`wit/computer`). A
//! [`Driver`] is a component compiled once, its groups found from its exports and its features
//! checked against the contract; a [`DriverInstance`] is one live instance of it.

pub mod bindings;
mod component;
mod features;
mod instance;

pub use component::{Driver, DriverLoadError, Grants, Groups};
pub use instance::{DriverCallError, DriverInstance, Pixels};
