//! Structured records into the host's log (rate-limited by the host).

use serde_json::Value;

use crate::bindings::agentenv::environment::log::{self as host, Level};

fn write(level: Level, message: &str, fields: Option<&Value>) {
    host::write(level, message, fields.map(Value::to_string).as_deref());
}

/// Writes a debug record.
pub fn debug(message: &str) {
    write(Level::Debug, message, None);
}

/// Writes an info record.
pub fn info(message: &str) {
    write(Level::Info, message, None);
}

/// Writes a warning.
pub fn warn(message: &str) {
    write(Level::Warn, message, None);
}

/// Writes an error record.
pub fn error(message: &str) {
    write(Level::Error, message, None);
}

/// Writes an info record with structured `fields` (a JSON object).
pub fn info_with(message: &str, fields: &Value) {
    write(Level::Info, message, Some(fields));
}
