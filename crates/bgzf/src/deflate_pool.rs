//! Worker threads that compress blocks for the [`crate::Writer`].
//!
//! Only CPU work happens here: the writer's thread hands over a block's data, a worker turns it
//! into one complete BGZF block, and the writer's thread writes the blocks in their order. The
//! data buffer comes back with the block, to be filled again.

use std::thread::JoinHandle;

use crate::writer::compress_block;
use crossbeam_channel::{Receiver, Sender};

/// A compressed block and the emptied data buffer it was made from.
pub(crate) struct Compressed {
    pub block: Vec<u8>,
    pub data: Vec<u8>,
}

struct Job {
    data: Vec<u8>,
    reply: Sender<Compressed>,
}

pub(crate) struct DeflatePool {
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl DeflatePool {
    /// Starts up to `threads` workers compressing at libdeflate `level`; `None` if not even one
    /// could be started.
    pub fn new(threads: usize, level: u32) -> Option<DeflatePool> {
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        let mut workers = Vec::with_capacity(threads);
        for i in 0..threads {
            let rx: Receiver<Job> = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("bgzf-deflate-{i}"))
                .spawn(move || work(&rx, level));
            match spawned {
                Ok(handle) => workers.push(handle),
                Err(_) => break,
            }
        }
        if workers.is_empty() {
            return None;
        }
        Some(DeflatePool {
            jobs: Some(tx),
            workers,
        })
    }

    /// How many workers run.
    pub fn threads(&self) -> usize {
        self.workers.len()
    }

    /// Queues `data` for compression; the block arrives on the returned channel. Gives the data
    /// back if no worker is left to take it.
    pub fn submit(&self, data: Vec<u8>) -> Result<Receiver<Compressed>, Vec<u8>> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let Some(jobs) = &self.jobs else {
            return Err(data);
        };
        match jobs.send(Job { data, reply }) {
            Ok(()) => Ok(answer),
            Err(e) => Err(e.into_inner().data),
        }
    }
}

fn work(jobs: &Receiver<Job>, level: u32) {
    let mut compressor = crate::writer::compressor(level);
    for mut job in jobs.iter() {
        let mut block = Vec::with_capacity(crate::block::MAX_BLOCK_SIZE);
        compress_block(&job.data, level, &mut compressor, &mut block);
        job.data.clear();
        // The writer may be gone (dropped after an error); nothing to do then.
        let _ = job.reply.send(Compressed {
            block,
            data: job.data,
        });
    }
}

impl Drop for DeflatePool {
    fn drop(&mut self) {
        self.jobs = None;
        for handle in self.workers.drain(..) {
            let _ = handle.join();
        }
    }
}
