//! Computers: a driver component served with the `computer/v1` contract around it
//! (computer.md). A [`Computer`] is one live driver instance with its frames, input queue,
//! readiness latch, settings and held keys; [`tools::call`] answers its `computer_*` tools.

mod act;
pub mod data;
pub mod exec;
pub mod extensions;
pub mod files;
pub mod image;
mod queue;
mod result;
pub mod shape;
mod state;
pub mod tools;

pub use state::{Check, Computer, ComputerSnapshot, KeptFrame, Shot};
