//! Worker threads that inflate blocks the reader thread has already read.
//!
//! Only CPU work happens here: every byte is read by the thread that owns the [`crate::Reader`],
//! so a seek and its read-ahead limit can never race with I/O done elsewhere.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use libdeflater::Decompressor;

use crate::{Error, RawBlock};

pub(crate) type Inflated = Result<Vec<u8>, Error>;

struct Job {
    generation: u64,
    block: RawBlock,
    reply: Sender<Inflated>,
}

/// The inflate workers of one reader.
pub(crate) struct Workers {
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
    /// Bumped when queued work is discarded, so workers skip jobs nobody waits for.
    generation: Arc<AtomicU64>,
    threads: usize,
}

impl Workers {
    /// Starts up to `threads` workers; `None` if not even one could be started.
    pub fn new(threads: usize, name: Arc<str>) -> Option<Workers> {
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        let generation = Arc::new(AtomicU64::new(0));
        let mut workers = Vec::with_capacity(threads);
        for i in 0..threads {
            let rx: Receiver<Job> = rx.clone();
            let generation = Arc::clone(&generation);
            let name = Arc::clone(&name);
            let spawned = std::thread::Builder::new()
                .name(format!("bgzf-inflate-{i}"))
                .spawn(move || work(&rx, &generation, &name));
            match spawned {
                Ok(handle) => workers.push(handle),
                Err(_) => break,
            }
        }
        if workers.is_empty() {
            return None;
        }
        let threads = workers.len();
        Some(Workers {
            jobs: Some(tx),
            workers,
            generation,
            threads,
        })
    }

    /// How many workers run.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Queues `block`; the answer arrives on the returned channel. Gives the block back if no
    /// worker is left to take it.
    pub fn submit(&self, block: RawBlock) -> Result<Receiver<Inflated>, RawBlock> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let Some(jobs) = &self.jobs else {
            return Err(block);
        };
        let job = Job {
            generation: self.generation.load(Ordering::Relaxed),
            block,
            reply,
        };
        match jobs.send(job) {
            Ok(()) => Ok(answer),
            Err(e) => Err(e.into_inner().block),
        }
    }

    /// Marks every queued job as unwanted.
    pub fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }
}

fn work(jobs: &Receiver<Job>, generation: &AtomicU64, name: &str) {
    let mut decompressor = Decompressor::new();
    for job in jobs.iter() {
        if job.generation != generation.load(Ordering::Relaxed) {
            continue;
        }
        // The receiver may be gone (a seek discarded it); nothing to do then.
        let _ = job.reply.send(job.block.inflate(&mut decompressor, name));
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.invalidate();
        self.jobs = None;
        for handle in self.workers.drain(..) {
            let _ = handle.join();
        }
    }
}
