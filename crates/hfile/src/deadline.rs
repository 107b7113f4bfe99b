//! Time limits on remote reads. Two bound every transfer, so that a server that answers
//! slowly, or not at all, cannot hold a reader forever:
//!
//! - each attempt of a request gets [`OpenOptions::request_time`] plus its size at
//!   [`OpenOptions::min_rate`] (a body trickled just above libcurl's low-speed limit still
//!   ends);
//! - a [`Deadline`] for the whole query (`hts view --timeout`, `HTS_TIMEOUT`): no request starts
//!   after it, running ones are cut at it, and no retry waits past it.
//!
//! [`OpenOptions::request_time`]: crate::OpenOptions::request_time
//! [`OpenOptions::min_rate`]: crate::OpenOptions::min_rate

use std::fmt;
use std::time::{Duration, Instant};

/// The moment by which a whole query must be over, and the limit it came from (for messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    at: Instant,
    limit: Duration,
}

impl Deadline {
    /// `limit` from now.
    pub fn after(limit: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + limit,
            limit,
        }
    }

    /// The time left, `None` once the deadline has passed.
    pub fn remaining(&self) -> Option<Duration> {
        self.at
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
    }

    /// The limit it was made with.
    pub fn limit(&self) -> Duration {
        self.limit
    }
}

impl fmt::Display for Deadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the time limit of {} ran out", seconds(self.limit))
    }
}

/// `4 s`, `2.5 s`, `0.25 s`.
pub(crate) fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} s", (s * 1000.0).round() / 1000.0)
    }
}

/// The time one attempt asking for `bytes` may take: `base` plus the bytes at `min_rate`
/// (bytes per second; 0: no rate bound), cut to what is left of `deadline`. `None` when the
/// deadline has passed.
pub(crate) fn attempt_limit(
    bytes: u64,
    base: Duration,
    min_rate: u64,
    deadline: Option<&Deadline>,
) -> Option<Duration> {
    let own = if min_rate == 0 {
        Duration::MAX
    } else {
        let at_rate = Duration::try_from_secs_f64(bytes as f64 / min_rate as f64);
        base.saturating_add(at_rate.unwrap_or(Duration::MAX))
    };
    match deadline {
        Some(d) => d.remaining().map(|left| left.min(own)),
        None => Some(own),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_get_time_for_their_size_within_the_deadline() {
        let base = Duration::from_secs(30);
        assert_eq!(
            attempt_limit(1 << 20, base, 16 * 1024, None),
            Some(Duration::from_secs(30 + 64))
        );
        assert_eq!(attempt_limit(5, base, 0, None), Some(Duration::MAX));
        let d = Deadline::after(Duration::from_secs(2));
        let t = attempt_limit(1 << 30, base, 1, Some(&d)).unwrap();
        assert!(
            t <= Duration::from_secs(2) && t > Duration::from_secs(1),
            "{t:?}"
        );
        let gone = Deadline::after(Duration::ZERO);
        assert_eq!(attempt_limit(1, base, 1, Some(&gone)), None);
        assert!(gone.remaining().is_none());
    }

    #[test]
    fn messages_name_the_limit() {
        assert_eq!(
            Deadline::after(Duration::from_secs(4)).to_string(),
            "the time limit of 4 s ran out"
        );
        assert_eq!(seconds(Duration::from_millis(2500)), "2.5 s");
    }
}
