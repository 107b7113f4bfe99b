//! Worker threads that inflate blocks the reader thread has already read.
//!
//! Only CPU work happens here: every byte is read by the thread that owns the [`crate::Reader`],
//! so a seek and its read-ahead limit can never race with I/O done elsewhere. Buffers travel
//! with the work and come back with the answer, so a long read allocates nothing per block.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use libdeflater::Decompressor;

use crate::{Error, RawBlock};

/// A worker's answer: the inflated data (in the buffer the job brought) or why not, and the
/// compressed block's buffer for reuse.
pub(crate) struct Inflated {
    pub(crate) result: Result<(), Error>,
    pub(crate) data: Vec<u8>,
    pub(crate) raw: Vec<u8>,
}

struct Job {
    generation: u64,
    block: RawBlock,
    out: Vec<u8>,
    reply: Sender<Inflated>,
}

/// The inflate workers of one reader.
pub(crate) struct Workers {
    jobs: Option<Sender<Job>>,
    /// The queue as the workers see it, for the reader thread to take a job from while it would
    /// otherwise wait ([`Workers::help`]).
    queued: Receiver<Job>,
    name: Arc<str>,
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
            queued: rx,
            name,
            workers,
            generation,
            threads,
        })
    }

    /// How many workers run.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Queues `block` to be inflated into `out`; the answer arrives on the returned channel.
    /// Gives both back if no worker is left to take them.
    pub fn submit(
        &self,
        block: RawBlock,
        out: Vec<u8>,
    ) -> Result<Receiver<Inflated>, (RawBlock, Vec<u8>)> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let Some(jobs) = &self.jobs else {
            return Err((block, out));
        };
        let job = Job {
            generation: self.generation.load(Ordering::Relaxed),
            block,
            out,
            reply,
        };
        match jobs.send(job) {
            Ok(()) => Ok(answer),
            Err(e) => {
                let job = e.into_inner();
                Err((job.block, job.out))
            }
        }
    }

    /// Inflates the oldest job no worker has taken yet, here, with `decompressor`; false when
    /// there is none. The reader thread calls it instead of sleeping while the block it needs
    /// is still being inflated: on a machine with as many cores as threads, the thread that
    /// would sleep takes a share of the inflating, and fewer hand-overs wake a sleeper.
    pub fn help(&self, decompressor: &mut Decompressor) -> bool {
        let Ok(job) = self.queued.try_recv() else {
            return false;
        };
        run(job, &self.generation, decompressor, &self.name);
        true
    }

    /// Marks every queued job as unwanted.
    pub fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }
}

/// Inflates `block` into `out` and packs the answer.
pub(crate) fn inflate_job(
    block: RawBlock,
    mut out: Vec<u8>,
    decompressor: &mut Decompressor,
    name: &str,
) -> Inflated {
    let result = block.inflate_into(decompressor, &mut out, name);
    Inflated {
        result,
        data: out,
        raw: block.bytes,
    }
}

fn work(jobs: &Receiver<Job>, generation: &AtomicU64, name: &str) {
    let mut decompressor = Decompressor::new();
    for job in jobs.iter() {
        run(job, generation, &mut decompressor, name);
    }
}

/// Inflates `job` and answers it, unless it was queued before work was discarded.
fn run(job: Job, generation: &AtomicU64, decompressor: &mut Decompressor, name: &str) {
    if job.generation != generation.load(Ordering::Relaxed) {
        return;
    }
    // The receiver may be gone (a seek discarded it); nothing to do then.
    let _ = job
        .reply
        .send(inflate_job(job.block, job.out, decompressor, name));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One BGZF block holding `data`, as read from a file at `coffset`.
    fn block(data: &[u8], coffset: u64) -> RawBlock {
        let mut bytes = Vec::new();
        let compressor = &mut libdeflater::Compressor::default();
        assert!(crate::block::deflate(data, compressor, &mut bytes));
        RawBlock {
            coffset,
            bytes,
            header_len: crate::block::HEADER_LEN,
        }
    }

    #[test]
    fn a_helping_thread_and_the_worker_answer_every_job_once_and_rightly() {
        let workers = Workers::new(1, Arc::from("test")).expect("a worker");
        let mut decompressor = Decompressor::new();
        assert!(!workers.help(&mut decompressor), "nothing queued yet");
        let texts: Vec<Vec<u8>> = (0..200)
            .map(|i| format!("block {i};").repeat(5000).into_bytes())
            .collect();
        // Compressed first, then queued at once, so that most are still queued when this
        // thread starts helping (which of the two takes which does not matter).
        let blocks: Vec<RawBlock> = texts.iter().map(|t| block(t, 0)).collect();
        let answers: Vec<Receiver<Inflated>> = blocks
            .into_iter()
            .map(|b| match workers.submit(b, Vec::new()) {
                Ok(answer) => answer,
                Err(_) => panic!("the worker is gone"),
            })
            .collect();
        while workers.help(&mut decompressor) {}
        for (answer, text) in answers.iter().zip(&texts) {
            let inflated = answer.recv().expect("an answer");
            assert!(inflated.result.is_ok());
            assert_eq!(&inflated.data, text);
            assert!(answer.try_recv().is_err(), "answered once");
        }
    }
}
