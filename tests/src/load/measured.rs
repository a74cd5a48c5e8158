//! A server a benchmark measures, named on its command line as `NAME=URL@PID`, and readings of
//! its CPU clock taken once none of its threads runs.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use super::conn::Target;
use super::procfs::{proc_cpu_ns, wait_quiescent};

/// How long a reading waits for the server to stop running.
const QUIESCE_LIMIT: Duration = Duration::from_millis(20);

/// One server under test.
pub struct MeasuredServer {
    /// Its name in the tables.
    pub name: String,
    /// Where it listens.
    pub target: Arc<Target>,
    /// Its process, whose CPU clock is read.
    pub pid: u32,
}

impl MeasuredServer {
    /// The server `spec` names: `NAME=URL@PID`.
    ///
    /// # Errors
    /// When `spec` is not of that form.
    pub fn parse(spec: &str) -> anyhow::Result<Self> {
        let (name, rest) = spec.split_once('=').context("a target is NAME=URL@PID")?;
        let (url, pid) = rest.rsplit_once('@').context("a target is NAME=URL@PID")?;
        Ok(Self {
            name: name.to_owned(),
            target: Arc::new(Target::parse(url)?),
            pid: pid.parse().context("the PID")?,
        })
    }

    /// The server's CPU time now, in nanoseconds (every thread), once none of its threads runs.
    ///
    /// # Errors
    /// When the clock cannot be read.
    pub fn cpu_ns(&self) -> anyhow::Result<u64> {
        wait_quiescent(self.pid, QUIESCE_LIMIT);
        proc_cpu_ns(self.pid).with_context(|| format!("reading the CPU clock of pid {}", self.pid))
    }
}

/// The median of `values` (the upper one of an even count); 0 for none.
pub fn median(values: &[u64]) -> u64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied().unwrap_or(0)
}
