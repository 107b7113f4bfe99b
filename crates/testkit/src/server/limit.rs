//! A request rate limit, as an object store has one: requests above a rate (a token bucket) are
//! refused with `503 SlowDown` (S3's XML body) or `429` with `Retry-After`, and logged as faults.

use std::time::{Duration, Instant};

use super::faults::Fault;

/// What the server answers to a request above its rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `503` with S3's `<Error><Code>SlowDown</Code>...` body.
    SlowDown,
    /// `429` with `Retry-After: SECS`.
    TooManyRequests { retry_after: u64 },
}

/// A rate limit: `per_second` requests a second on average, up to `burst` at once.
#[derive(Debug, Clone, PartialEq)]
pub struct RateLimit {
    /// Requests allowed per second, on average.
    pub per_second: f64,
    /// Requests allowed at once after a quiet spell (the bucket's size; at least 1).
    pub burst: f64,
    /// The answer to a request above the rate.
    pub refusal: Refusal,
}

impl RateLimit {
    /// `per_second` requests a second, a burst of a tenth of a second's worth (at least one),
    /// then `503 SlowDown`.
    pub fn slow_down(per_second: f64) -> RateLimit {
        RateLimit {
            per_second,
            burst: (per_second / 10.0).max(1.0),
            refusal: Refusal::SlowDown,
        }
    }

    /// The fault a refused request gets.
    pub fn fault(&self) -> Fault {
        match self.refusal {
            Refusal::SlowDown => Fault::Status {
                status: 503,
                body: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>\
                       <Message>Please reduce your request rate.</Message>\
                       <RequestId>limit</RequestId></Error>"
                    .into(),
                headers: vec![("content-type".into(), "application/xml".into())],
            },
            Refusal::TooManyRequests { retry_after } => Fault::Status {
                status: 429,
                body: "Too Many Requests".into(),
                headers: vec![("retry-after".into(), retry_after.to_string())],
            },
        }
    }
}

/// A [`RateLimit`] with its bucket.
#[derive(Debug)]
pub(crate) struct Limiter {
    limit: RateLimit,
    tokens: f64,
    last: Instant,
}

impl Limiter {
    pub(crate) fn new(limit: RateLimit) -> Limiter {
        Limiter {
            tokens: limit.burst.max(1.0),
            limit,
            last: Instant::now(),
        }
    }

    /// The fault for a request arriving now, if it is above the rate (else it takes a token).
    pub(crate) fn admit(&mut self, now: Instant) -> Option<Fault> {
        let elapsed = now.saturating_duration_since(self.last);
        self.last = now;
        let burst = self.limit.burst.max(1.0);
        self.tokens = (self.tokens + elapsed.as_secs_f64() * self.limit.per_second).min(burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            None
        } else {
            Some(self.limit.fault())
        }
    }
}

/// How long `n` requests take at `limit`'s rate after its burst: what a well-behaved client
/// needs at least.
pub fn least_time(limit: &RateLimit, n: usize) -> Duration {
    let beyond = (n as f64 - limit.burst).max(0.0);
    Duration::from_secs_f64(beyond / limit.per_second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_refills_at_the_rate() {
        let mut l = Limiter::new(RateLimit {
            per_second: 10.0,
            burst: 2.0,
            refusal: Refusal::SlowDown,
        });
        let t0 = l.last;
        assert!(l.admit(t0).is_none());
        assert!(l.admit(t0).is_none());
        assert!(l.admit(t0).is_some(), "the burst is spent");
        // A tenth of a second later: one more.
        let t1 = t0 + Duration::from_millis(100);
        assert!(l.admit(t1).is_none());
        assert!(l.admit(t1).is_some());
        // A long quiet spell refills no more than the burst.
        let t2 = t1 + Duration::from_secs(10);
        assert!(l.admit(t2).is_none() && l.admit(t2).is_none() && l.admit(t2).is_some());
        assert_eq!(
            least_time(&RateLimit::slow_down(100.0), 110),
            Duration::from_secs(1)
        );
    }
}
