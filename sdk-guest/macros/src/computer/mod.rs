//! `#[computer_driver]`: a computer driver from one `impl` block.

mod expand;
mod model;
mod ops;

#[cfg(test)]
mod tests;

pub use expand::expand;
pub use model::{DriverArgs, DriverModel, strip_markers};
