//! The connection threads: each owns one curl handle, and so one kept-alive connection per host,
//! and runs one request at a time (rule 4: a handle is never shared between threads).
//!
//! A request goes to the idle thread that finished last, whose connection is the most likely to
//! be open to the same host: requests made one after another share one connection, and only
//! requests that overlap in time open more. With no thread idle, a new one starts (up to the
//! most fetchers any reader asked for: all readers of one [`crate::Client`] ask for its
//! `max_in_flight`), else the request waits in a queue: at its front when
//! the reader waits for it, at its back when it is fetched ahead. Threads live as long as the
//! process.
//!
//! The fetchers limit counts requests for data. A probe (a few bytes: the EOF marker, the byte
//! that shows a cached index current) goes beside them on a thread of its own: it moves no
//! bandwidth worth limiting, and holding a fetcher for its round trip would put the spans of a
//! warm query a round trip later.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::easy::{CurlError, Easy};

use super::collector::Collector;
use super::request::{self, Job};
use super::throttle::origin;

/// One thread's mailbox: the job handed to it while it was idle, and the origin its connection
/// is open to.
#[derive(Default)]
struct Slot {
    job: Mutex<Option<Job>>,
    ready: Condvar,
    origin: Mutex<String>,
}

#[derive(Default)]
struct Pool {
    state: Mutex<State>,
}

/// A request of at most this many bytes is a probe.
const PROBE_BYTES: u64 = 4096;

/// Threads beyond the fetchers limit that probes may start.
const PROBE_THREADS: usize = 2;

fn is_probe(job: &Job) -> bool {
    job.transfer.len() <= PROBE_BYTES
}

/// A job waiting for a thread, with the fetchers limit of the reader that asked.
struct Queued {
    job: Job,
    max: usize,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Queued>,
    /// Requests for data (not probes) handed to threads and not finished.
    fetching: usize,
    /// Idle threads, the one that finished last on top.
    idle: Vec<Arc<Slot>>,
    threads: usize,
    /// The transfers running now, with their origins.
    running: Vec<(String, Arc<super::transfer::Transfer>)>,
    /// Set by [`shutdown`]: no request starts any more.
    closing: bool,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

/// Where a request goes when it must wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Priority {
    /// The reader waits for it now.
    Now,
    /// Fetched ahead of need.
    Ahead,
}

/// Runs `job` on a connection thread: an idle one, a new one if fewer than `max_threads` run,
/// or the next one to finish.
pub(crate) fn submit(job: Job, priority: Priority, max_threads: usize) {
    let max = max_threads.max(1);
    let mut state = pool().state.lock().unwrap_or_else(|p| p.into_inner());
    if state.closing {
        job.transfer.cancel();
        job.transfer.finish(Err(crate::Error::Remote {
            name: crate::redact_url(&job.url),
            offset: 0,
            message: "the process is exiting".into(),
        }));
        return;
    }
    let probe = is_probe(&job);
    let queue = |state: &mut State, job: Job| match priority {
        Priority::Now => state.queue.push_front(Queued { job, max }),
        Priority::Ahead => state.queue.push_back(Queued { job, max }),
    };
    if !probe && state.fetching >= max {
        queue(&mut state, job);
        return;
    }
    let wanted = origin(&job.url);
    // Best: an idle thread that last talked to the same origin (its connection may be open).
    let same = state
        .idle
        .iter()
        .rposition(|slot| *slot.origin.lock().unwrap_or_else(|p| p.into_inner()) == wanted);
    if let Some(i) = same {
        let slot = state.idle.remove(i);
        state.fetching += usize::from(!probe);
        drop(state);
        give(&slot, job);
        return;
    }
    // Next best, for a request the reader waits for: a thread of the same origin whose response
    // has fully arrived is about to be free, with its connection open; the request goes first
    // in line for it rather than to a new connection.
    let finishing = state
        .running
        .iter()
        .any(|(o, t)| o == wanted && (t.received() >= t.len() || t.is_finished()));
    if priority == Priority::Now && finishing {
        state.queue.push_front(Queued { job, max });
        return;
    }
    if let Some(slot) = state.idle.pop() {
        state.fetching += usize::from(!probe);
        drop(state);
        give(&slot, job);
        return;
    }
    // Data requests are held to `max` by `fetching`; the threads probes started serve them too.
    if state.threads < max + PROBE_THREADS {
        let slot = Arc::new(Slot::default());
        *slot.job.lock().unwrap_or_else(|p| p.into_inner()) = Some(job);
        let mine = Arc::clone(&slot);
        let spawned = std::thread::Builder::new()
            .name(format!("hfile-connection-{}", state.threads))
            .spawn(move || work(&mine));
        match spawned {
            Ok(_) => {
                state.threads += 1;
                state.fetching += usize::from(!probe);
                return;
            }
            Err(_) => {
                // Could not start a thread: queue it for the others, or run it here.
                let job = slot.job.lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some(job) = job {
                    if state.threads == 0 {
                        drop(state);
                        let outcome = run(&mut Easy::new(), &job);
                        job.transfer.finish(outcome);
                        return;
                    }
                    state.queue.push_back(Queued { job, max });
                }
                return;
            }
        }
    }
    queue(&mut state, job);
}

/// The first queued job that may start now (a probe, or one within its reader's fetchers
/// limit), counted as fetching.
fn next_job(state: &mut State) -> Option<Job> {
    let fetching = state.fetching;
    let i = state
        .queue
        .iter()
        .position(|q| is_probe(&q.job) || fetching < q.max)?;
    let q = state.queue.remove(i)?;
    state.fetching += usize::from(!is_probe(&q.job));
    Some(q.job)
}

fn give(slot: &Slot, job: Job) {
    *slot.job.lock().unwrap_or_else(|p| p.into_inner()) = Some(job);
    slot.ready.notify_one();
}

/// Drops queued jobs whose transfer was cancelled (they are never sent).
pub(crate) fn forget_cancelled() {
    let mut state = pool().state.lock().unwrap_or_else(|p| p.into_inner());
    let mut kept = VecDeque::with_capacity(state.queue.len());
    for q in state.queue.drain(..) {
        if q.job.transfer.is_cancelled() {
            q.job.transfer.finish(Ok(()));
        } else {
            kept.push_back(q);
        }
    }
    state.queue = kept;
}

/// Waits until no request runs and none waits to be sent, at most `max`; false when time ran
/// out first. A request's counts are recorded before it stops running.
pub(crate) fn wait_idle(max: Duration) -> bool {
    let deadline = Instant::now() + max;
    loop {
        {
            let state = pool().state.lock().unwrap_or_else(|p| p.into_inner());
            let queued = state.queue.iter().any(|q| !q.job.transfer.is_cancelled());
            if state.running.is_empty() && !queued {
                return true;
            }
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn work(slot: &Arc<Slot>) {
    let mut easy = Easy::new();
    let mut job = None;
    loop {
        let current = match job.take() {
            Some(j) => j,
            None => {
                let mut mine = slot.job.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if let Some(j) = mine.take() {
                        break j;
                    }
                    mine = slot.ready.wait(mine).unwrap_or_else(|p| p.into_inner());
                }
            }
        };
        {
            let mut state = pool().state.lock().unwrap_or_else(|p| p.into_inner());
            if state.closing {
                // Handed over just before the shutdown: never sent.
                current.transfer.cancel();
            }
            state.running.push((
                origin(&current.url).to_string(),
                Arc::clone(&current.transfer),
            ));
        }
        *slot.origin.lock().unwrap_or_else(|p| p.into_inner()) = origin(&current.url).to_string();
        let outcome = run(&mut easy, &current);
        // Take the next queued job, or go idle, before telling the reader: a reader that asks
        // again right away then finds this thread, and its open connection, ready.
        {
            let mut state = pool().state.lock().unwrap_or_else(|p| p.into_inner());
            state
                .running
                .retain(|(_, t)| !Arc::ptr_eq(t, &current.transfer));
            if !is_probe(&current) {
                state.fetching = state.fetching.saturating_sub(1);
            }
            match next_job(&mut state) {
                Some(next) => job = Some(next),
                None => state.idle.push(Arc::clone(slot)),
            }
        }
        current.transfer.finish(outcome);
    }
}

/// Stops every request before the process exits: queued ones are never sent, running ones are
/// cancelled, and the call waits (at most `wait`) until no connection thread is inside libcurl.
/// libcurl has OpenSSL register its clean-up to run at exit; a thread still in a TLS handshake
/// then crashes the process (SIGSEGV) after its work was done and its error reported.
pub fn shutdown(wait: std::time::Duration) {
    let until = std::time::Instant::now() + wait;
    let mut state = pool().state.lock().unwrap_or_else(|p| p.into_inner());
    state.closing = true;
    for q in state.queue.drain(..) {
        q.job.transfer.cancel();
        q.job.transfer.finish(Ok(()));
    }
    for (_, t) in &state.running {
        t.cancel();
    }
    while state.idle.len() < state.threads && std::time::Instant::now() < until {
        drop(state);
        std::thread::sleep(std::time::Duration::from_millis(5));
        state = pool().state.lock().unwrap_or_else(|p| p.into_inner());
    }
}

/// Runs `job` on this thread's handle (or fails it, if libcurl could not make one).
fn run(easy: &mut Result<Easy, CurlError>, job: &Job) -> Result<(), crate::Error> {
    if job.transfer.is_cancelled() {
        return Ok(());
    }
    let easy = match easy {
        Ok(easy) => easy,
        Err(e) => return Err(request::without_handle(job, e)),
    };
    let outcome = request::run(easy, job);
    // The transfer holds the bytes; the handle keeps only the connection.
    *easy.get_mut() = Collector::default();
    outcome
}
