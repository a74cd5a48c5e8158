//! The computer contract's host logic that is pure data (computer.md): error codes, keys,
//! frames and their mapping to the screen, coordinate spaces, and the numbers of messages.

pub mod card;
pub mod errors;
pub mod frames;
pub mod keys;
pub mod pyfmt;
pub mod settings;
pub mod spaces;
