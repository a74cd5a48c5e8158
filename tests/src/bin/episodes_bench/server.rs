//! What the benches read of the server itself: its metrics and its memory.

use anyhow::Context as _;
use bytes::Bytes;
use envhost_tests::load::conn::{Conn, Target, require_success};
use envhost_tests::load::procfs::proc_memory;
use http::Method;

/// The gauge of live episodes in `/metrics`.
pub(crate) const LIVE_EPISODES: &str = "envhost_episodes_live";

/// `GET /metrics`: the Prometheus text.
pub(crate) async fn metrics(conn: &mut Conn, target: &Target) -> anyhow::Result<String> {
    let response = conn
        .exchange(target, Method::GET, "/metrics", Bytes::new())
        .await
        .context("GET /metrics")?;
    require_success(&response).context("GET /metrics")?;
    String::from_utf8(response.body().to_vec()).context("GET /metrics: the text is not UTF-8")
}

/// The value of the unlabelled sample `name` in Prometheus text.
pub(crate) fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix(name)?.strip_prefix(' ')?;
        value.split_whitespace().next()?.parse().ok()
    })
}

/// The number of live episodes `/metrics` reports, when it can be read.
pub(crate) async fn live_episodes(target: &Target) -> Option<f64> {
    let mut conn = Conn::open(target).await.ok()?;
    sample(&metrics(&mut conn, target).await.ok()?, LIVE_EPISODES)
}

/// The server's VmRSS in KiB, with its pid.
pub(crate) fn rss(pid: Option<u32>) -> Option<u64> {
    pid.and_then(proc_memory).map(|m| m.rss)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_read_by_exact_name() {
        let text = "# HELP envhost_episodes_live Episodes alive\nenvhost_episodes_live_x 3\nenvhost_episodes_live 5\n";
        assert_eq!(sample(text, LIVE_EPISODES), Some(5.0));
        assert_eq!(sample(text, "envhost_nothing"), None);
    }
}
