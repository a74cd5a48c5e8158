//! Progress of the tool call being served, sent to an MCP caller that asked for it (a request
//! with a `progressToken`) as `notifications/progress`; a no-op otherwise.

use crate::bindings::agentenv::environment::progress as host;

/// Reports `progress` (growing with each report) out of `total`, when the total is known.
pub fn report(progress: f64, total: Option<f64>) {
    host::report(progress, total, None);
}

/// [`report`] with a message for the caller.
pub fn report_with(progress: f64, total: Option<f64>, message: &str) {
    host::report(progress, total, Some(message));
}
