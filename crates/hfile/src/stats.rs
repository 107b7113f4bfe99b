//! Process-wide transfer counters, for summaries and tests.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counts of what the remote backends did, summed over every backend in the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransferStats {
    /// Requests sent (each retry and each HEAD counts).
    pub requests: u64,
    /// Body bytes that arrived, including any the backend then discarded.
    pub bytes_received: u64,
    /// Requests that opened a new connection.
    pub new_connections: u64,
    /// Requests served on a connection kept from an earlier one.
    pub reused_connections: u64,
    /// Requests sent with an open-ended range (`bytes=X-`), in [`crate::RangeMode::Unbounded`].
    pub unbounded_requests: u64,
    /// Attempts made again after a transient failure (each is also one of `requests`).
    pub retries: u64,
}

impl TransferStats {
    pub(crate) fn add(&mut self, other: &TransferStats) {
        self.requests += other.requests;
        self.bytes_received += other.bytes_received;
        self.new_connections += other.new_connections;
        self.reused_connections += other.reused_connections;
        self.unbounded_requests += other.unbounded_requests;
        self.retries += other.retries;
    }
}

static REQUESTS: AtomicU64 = AtomicU64::new(0);
static BYTES_RECEIVED: AtomicU64 = AtomicU64::new(0);
static NEW_CONNECTIONS: AtomicU64 = AtomicU64::new(0);
static REUSED_CONNECTIONS: AtomicU64 = AtomicU64::new(0);
static UNBOUNDED_REQUESTS: AtomicU64 = AtomicU64::new(0);
static RETRIES: AtomicU64 = AtomicU64::new(0);

/// The counters summed since the start of the process (or the last [`reset_transfer_stats`]).
pub fn transfer_stats() -> TransferStats {
    TransferStats {
        requests: REQUESTS.load(Ordering::Relaxed),
        bytes_received: BYTES_RECEIVED.load(Ordering::Relaxed),
        new_connections: NEW_CONNECTIONS.load(Ordering::Relaxed),
        reused_connections: REUSED_CONNECTIONS.load(Ordering::Relaxed),
        unbounded_requests: UNBOUNDED_REQUESTS.load(Ordering::Relaxed),
        retries: RETRIES.load(Ordering::Relaxed),
    }
}

/// [`transfer_stats`] once the requests still running have ended (waiting at most `max`): a
/// reader has a request's bytes a moment before the request is over and counted.
pub fn settled_transfer_stats(max: std::time::Duration) -> TransferStats {
    crate::http::wait_idle(max);
    transfer_stats()
}

/// Sets every counter back to zero.
pub fn reset_transfer_stats() {
    for c in [
        &REQUESTS,
        &BYTES_RECEIVED,
        &NEW_CONNECTIONS,
        &REUSED_CONNECTIONS,
        &UNBOUNDED_REQUESTS,
        &RETRIES,
    ] {
        c.store(0, Ordering::Relaxed);
    }
}

pub(crate) fn record(one: &TransferStats) {
    REQUESTS.fetch_add(one.requests, Ordering::Relaxed);
    BYTES_RECEIVED.fetch_add(one.bytes_received, Ordering::Relaxed);
    NEW_CONNECTIONS.fetch_add(one.new_connections, Ordering::Relaxed);
    REUSED_CONNECTIONS.fetch_add(one.reused_connections, Ordering::Relaxed);
    UNBOUNDED_REQUESTS.fetch_add(one.unbounded_requests, Ordering::Relaxed);
    RETRIES.fetch_add(one.retries, Ordering::Relaxed);
}
