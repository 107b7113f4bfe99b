//! The one-line account of what a run cost on the network, printed at `-v 1` and up after the
//! per-request log: `[hts] summary: requests=N retries=N bytes_received=N new_connections=N
//! reused_connections=N seconds=S`. Workflows read it (key=value, fixed names), people too.

use std::time::Duration;

use hfile::TransferStats;

/// How long the summary waits for requests still running when the output is done (fetched
/// ahead and not needed, or ending just after their bytes arrived).
pub const SETTLE: Duration = Duration::from_secs(2);

/// The summary line for `stats` over `elapsed`.
pub fn line(stats: &TransferStats, elapsed: Duration) -> String {
    format!(
        "[hts] summary: requests={} retries={} bytes_received={} new_connections={} \
         reused_connections={} seconds={:.3}",
        stats.requests,
        stats.retries,
        stats.bytes_received,
        stats.new_connections,
        stats.reused_connections,
        elapsed.as_secs_f64()
    )
}

/// The summary of a cohort (`view --manifest`), printed whatever the verbosity: how many
/// samples and how many failed, then the same counts as [`line()`].
pub fn cohort_line(
    samples: usize,
    failed: usize,
    stats: &TransferStats,
    elapsed: Duration,
) -> String {
    let rest = line(stats, elapsed);
    let rest = rest.strip_prefix("[hts] summary: ").unwrap_or(&rest);
    format!("[hts] cohort: samples={samples} failed={failed} {rest}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_of_named_counts() {
        let stats = TransferStats {
            requests: 7,
            bytes_received: 123_456,
            new_connections: 2,
            reused_connections: 5,
            unbounded_requests: 0,
            retries: 1,
        };
        assert_eq!(
            line(&stats, Duration::from_millis(1250)),
            "[hts] summary: requests=7 retries=1 bytes_received=123456 new_connections=2 \
             reused_connections=5 seconds=1.250"
        );
    }
}
