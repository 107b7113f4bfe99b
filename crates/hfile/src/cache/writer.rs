//! The cache's writer: one thread per process that runs stores off the query's path, one after
//! another, instead of a thread spawned for each. A cohort of N remote files makes 2N stores
//! (a header, an index prefix each); a thread per store cost its creation and teardown each time
//! (about a fifth of what a store costs), and let stores of one process contend with each
//! other for the directory's locks. The thread leaves after [`IDLE`] without work and is
//! started again by the next store, so a process that stopped reading holds no thread.
//!
//! Every rule of a store is the store's own ([`super::Cache::store`]): the writer only decides
//! on which thread and when it runs.
//!
//! A child made by `fork` (Python's multiprocessing) inherits a copy of the queue but not the
//! thread: the stores it inherits are its parent's to run, so it drops them, and waiting for
//! one of them returns at once; its own stores start its own thread. (A fork while another
//! thread holds the queue's lock leaves the child's copy locked, as with any lock: fork before
//! reading remote files, or spawn.)

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long the writer waits for more work before its thread ends.
const IDLE: Duration = Duration::from_secs(2);

type Job = Box<dyn FnOnce() + Send>;

/// The jobs not yet started, and whether a thread is there to run them.
struct Queue {
    jobs: VecDeque<(Job, Arc<Signal>)>,
    /// The process whose writer thread is running, if one is: a child made by `fork` (Python's
    /// multiprocessing) has a copy of this queue but no thread, and starts its own.
    running: Option<u32>,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    jobs: VecDeque::new(),
    running: None,
});
static WORK: Condvar = Condvar::new();

fn queue() -> MutexGuard<'static, Queue> {
    QUEUE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Set once a job has run (or panicked: a waiter must never wait for ever).
#[derive(Default)]
struct Signal {
    done: Mutex<bool>,
    cond: Condvar,
}

impl Signal {
    fn set(&self) {
        *self.done.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.cond.notify_all();
    }
}

/// A job handed to the writer; [`Queued::wait`] returns once it has run. Dropping it does not
/// cancel the job.
#[must_use = "a store not waited for may still be running when the process exits"]
pub struct Queued {
    signal: Arc<Signal>,
    /// The process that handed the job over: only it runs the job.
    process: u32,
}

impl Queued {
    /// Waits until the job has run (or failed); at once in a forked child, whose copy of its
    /// parent's job never runs.
    pub fn wait(self) {
        if std::process::id() != self.process {
            return;
        }
        let mut done = self
            .signal
            .done
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while !*done {
            done = self
                .signal
                .cond
                .wait(done)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Runs `job` on the cache's writer thread, after the jobs handed over before it. When no thread
/// can be started, it runs here and now (a store delayed, never lost).
pub fn in_background(job: impl FnOnce() + Send + 'static) -> Queued {
    let me = std::process::id();
    let signal = Arc::new(Signal::default());
    let queued = Queued {
        signal: Arc::clone(&signal),
        process: me,
    };
    let mut q = queue();
    if q.running.is_some_and(|p| p != me) {
        // A forked child: the jobs it inherited are its parent's.
        q.jobs.clear();
        q.running = None;
    }
    q.jobs.push_back((Box::new(job), signal));
    if q.running == Some(me) {
        WORK.notify_one();
        return queued;
    }
    let started = std::thread::Builder::new()
        .name("hts-cache-store".into())
        .spawn(run);
    if started.is_ok() {
        q.running = Some(me);
        return queued;
    }
    let jobs: Vec<_> = q.jobs.drain(..).collect();
    drop(q);
    for (job, signal) in jobs {
        run_one(job, &signal);
    }
    queued
}

/// The writer thread: jobs in order until none has come for [`IDLE`].
fn run() {
    let mut q = queue();
    loop {
        if let Some((job, signal)) = q.jobs.pop_front() {
            drop(q);
            run_one(job, &signal);
            q = queue();
            continue;
        }
        let (next, waited) = WORK
            .wait_timeout(q, IDLE)
            .unwrap_or_else(PoisonError::into_inner);
        q = next;
        if waited.timed_out() && q.jobs.is_empty() {
            // Under the queue's lock: the next job handed over starts a new thread.
            q.running = None;
            return;
        }
    }
}

/// Runs one job; its waiter is told even if it panics (a panic ends that store only, as it
/// ended its own thread before).
fn run_one(job: Job, signal: &Signal) {
    let _ = catch_unwind(AssertUnwindSafe(job));
    signal.set();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn jobs_run_in_order_and_are_waited_for() {
        static ORDER: Mutex<Vec<usize>> = Mutex::new(Vec::new());
        let pending: Vec<Queued> = (0..50)
            .map(|i| in_background(move || ORDER.lock().unwrap().push(i)))
            .collect();
        for p in pending {
            p.wait();
        }
        assert_eq!(*ORDER.lock().unwrap(), (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn a_panicking_job_is_still_waited_for_and_the_writer_goes_on() {
        static RAN: AtomicUsize = AtomicUsize::new(0);
        let bad = in_background(|| panic!("a store that panics"));
        let good = in_background(|| {
            RAN.fetch_add(1, Ordering::SeqCst);
        });
        bad.wait();
        good.wait();
        assert_eq!(RAN.load(Ordering::SeqCst), 1);
    }
}
