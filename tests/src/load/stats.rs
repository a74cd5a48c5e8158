//! Statistics: each client's counts and latencies, and their merged summary.

use std::time::Duration;

/// What one client measured in the window.
#[derive(Default)]
pub struct ClientStats {
    /// The latency of each successful call, in nanoseconds.
    latencies_ns: Vec<u64>,
    /// Calls that failed.
    errors: u64,
    /// The first failure, to show.
    first_error: Option<String>,
    /// Why the client stopped early, if it did.
    pub aborted: Option<String>,
}

impl ClientStats {
    /// Counts one call.
    pub fn record(&mut self, outcome: anyhow::Result<()>, latency: Duration) {
        match outcome {
            Ok(()) => self
                .latencies_ns
                .push(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX)),
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert_with(|| format!("{e:#}"));
            }
        }
    }

    /// The successful calls counted so far.
    pub fn calls(&self) -> usize {
        self.latencies_ns.len()
    }

    /// Adds `other`'s calls to these (its first error and stop too, when these have none).
    pub fn merge(&mut self, mut other: Self) {
        self.latencies_ns.append(&mut other.latencies_ns);
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        if self.aborted.is_none() {
            self.aborted = other.aborted;
        }
    }

    /// A line about what went wrong with this client, the `i`th, if anything did.
    pub fn failure(&self, i: usize) -> Option<String> {
        let errors = self
            .first_error
            .as_ref()
            .map(|e| format!("client {i}: {} errors, the first: {e}", self.errors));
        let stop = self
            .aborted
            .as_ref()
            .map(|why| format!("client {i} stopped early: {why}"));
        match (errors, stop) {
            (Some(errors), Some(stop)) => Some(format!("{errors}; {stop}")),
            (errors, stop) => errors.or(stop),
        }
    }
}

/// Counts and latency distribution of a run (latencies in milliseconds).
#[derive(Debug)]
pub struct Summary {
    /// Successful calls.
    pub calls: usize,
    /// Failed calls.
    pub errors: u64,
    /// Successful calls per second.
    pub per_s: f64,
    /// The median latency; `None` (as the others) when no call succeeded.
    pub p50: Option<f64>,
    /// The 90th percentile latency.
    pub p90: Option<f64>,
    /// The 99th percentile latency.
    pub p99: Option<f64>,
    /// The mean latency.
    pub mean: Option<f64>,
    /// The highest latency.
    pub max: Option<f64>,
}

impl Summary {
    /// Merges the clients' stats over a window of `elapsed`.
    pub fn of(stats: &mut [ClientStats], elapsed: Duration) -> Self {
        let mut all: Vec<u64> =
            Vec::with_capacity(stats.iter().map(|s| s.latencies_ns.len()).sum());
        for s in stats.iter_mut() {
            all.append(&mut s.latencies_ns);
        }
        all.sort_unstable();
        let ms = |ns: f64| ns / 1e6;
        Self {
            calls: all.len(),
            errors: stats.iter().map(|s| s.errors).sum(),
            per_s: all.len() as f64 / elapsed.as_secs_f64(),
            p50: percentile(&all, 0.50).map(ms),
            p90: percentile(&all, 0.90).map(ms),
            p99: percentile(&all, 0.99).map(ms),
            mean: (!all.is_empty())
                .then(|| ms(all.iter().map(|&v| v as f64).sum::<f64>() / all.len() as f64)),
            max: all.last().map(|&v| ms(v as f64)),
        }
    }
}

/// The `q` quantile of `sorted`, interpolated linearly between neighbours (as the Python bench).
fn percentile(sorted: &[u64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let k = last as f64 * q;
    let (lo, hi) = (k.floor() as usize, (k.floor() as usize + 1).min(last));
    let (a, b) = (sorted[lo] as f64, sorted[hi] as f64);
    Some(a + (b - a) * (k - k.floor()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate() {
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[10], 0.99), Some(10.0));
        assert_eq!(percentile(&[0, 10, 20, 30], 0.5), Some(15.0));
    }
}
