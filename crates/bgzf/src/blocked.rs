//! The BGZF reading machinery behind [`crate::Reader`]: the current block, seeks by virtual
//! offset, the readahead limit, and blocks read ahead for the inflate workers.

use std::collections::VecDeque;
use std::sync::Arc;

use crossbeam_channel::{Receiver, TryRecvError};
use libdeflater::Decompressor;

use crate::block;
use crate::gzip_tail::GzipTail;
use crate::input::Input;
use crate::raw_block::{read_raw_block, Cursor, RawRead};
use crate::workers::{inflate_job, Inflated, Workers};
use crate::{Error, Result, Source, VirtualOffset};

/// A block handed to the workers, or the outcome that stopped read-ahead.
enum Ahead {
    Block {
        coffset: u64,
        clen: u64,
        answer: Receiver<Inflated>,
    },
    Failed(Error),
    Eof,
    /// A gzip member that is not BGZF starts here: plain gzip from then on.
    Gzip(u64),
}

pub(crate) struct BgzfState<S> {
    pub(crate) input: Input<S>,
    name: Arc<str>,
    /// The inflated data of the current block.
    block: Vec<u8>,
    block_coffset: u64,
    /// Compressed size of the current block (0: none loaded).
    block_clen: u64,
    pos: usize,
    /// After a seek to another block: the in-block offset to apply once it is loaded.
    pending_uoffset: Option<u16>,
    /// Where the next block comes from: the block after the last one queued or delivered.
    cursor: Cursor,
    pub(crate) limit: Option<u64>,
    decompressor: Decompressor,
    workers: Option<Workers>,
    /// Inflate worker threads asked for (0: none), beside this thread, which inflates queued
    /// blocks while the one it needs is not ready. They start when read-ahead is first wanted,
    /// so a read of a block or two costs no thread start-up.
    threads: usize,
    /// Set when the threads could not be started: inflate here.
    spawn_failed: bool,
    /// Blocks after the current one, in file order.
    queue: VecDeque<Ahead>,
    /// Blocks to keep read ahead now: one per worker after a seek, doubling with each block
    /// taken from the queue up to [`AHEAD_PER_WORKER`] each. A small region then inflates
    /// about the blocks it reads, not a full queue past its end; a long read is at full depth
    /// after a few blocks.
    depth: usize,
    /// Read-ahead reached the end or an error; it resumes once the consumer gets there.
    halted: bool,
    /// Used buffers for inflated data and for compressed blocks, kept for the next blocks.
    spare_data: Vec<Vec<u8>>,
    spare_raw: Vec<Vec<u8>>,
    /// After a gzip member that is not BGZF: the rest of the file as plain gzip.
    tail: Option<GzipTail>,
}

/// Blocks read ahead per worker: enough that the workers keep inflating while the reader thread
/// is held up for a moment (e.g. by SAM formatting threads that fell behind), few enough that
/// memory stays small (two 64 KiB buffers a block).
const AHEAD_PER_WORKER: usize = 8;

/// Blocks read after a seek before read-ahead (and the worker threads) start: a small region's
/// chunks (a few blocks from the linear index's window start; 4 on one of the benchmark's five
/// regions) are read before threads would pay for their start-up.
const INLINE_FIRST: usize = 8;

impl<S: Source> BgzfState<S> {
    pub(crate) fn new(src: S, name: Arc<str>, start: u64) -> BgzfState<S> {
        BgzfState {
            input: Input::new(src),
            name,
            block: Vec::new(),
            block_coffset: start,
            block_clen: 0,
            pos: 0,
            pending_uoffset: None,
            cursor: Cursor::at(start),
            limit: None,
            decompressor: Decompressor::new(),
            workers: None,
            threads: 0,
            spawn_failed: false,
            queue: VecDeque::new(),
            depth: 0,
            halted: false,
            spare_data: Vec::new(),
            spare_raw: Vec::new(),
            tail: None,
        }
    }

    pub(crate) fn set_limit(&mut self, limit: Option<u64>) {
        self.limit = limit;
        self.input.src.set_readahead_limit(limit);
    }

    #[inline]
    pub(crate) fn virtual_offset(&self) -> VirtualOffset {
        if let Some(u) = self.pending_uoffset {
            VirtualOffset::new(self.block_coffset, u)
        } else if self.pos < self.block.len() {
            VirtualOffset::new(self.block_coffset, self.pos as u16)
        } else {
            VirtualOffset::new(self.block_coffset + self.block_clen, 0)
        }
    }

    /// The unread data of the current block, after loading the next block with data if the
    /// current one is used up; empty at the end of the file.
    #[inline]
    pub(crate) fn fill_buf(&mut self) -> Result<&[u8]> {
        if self.pos >= self.block.len() && !self.load_next_block()? {
            return Ok(&[]);
        }
        Ok(self.buffer())
    }

    /// The unread data of the current block, without loading anything.
    #[inline]
    pub(crate) fn buffer(&self) -> &[u8] {
        self.block.get(self.pos..).unwrap_or_default()
    }

    /// Marks `n` bytes of the current block as read (at most what is left of it).
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) {
        self.pos += n.min(self.block.len().saturating_sub(self.pos));
    }

    /// The last `n` bytes consumed from the current block (fewer if less was consumed).
    #[inline]
    pub(crate) fn taken(&self, n: usize) -> &[u8] {
        let end = self.pos.min(self.block.len());
        &self.block[end - n.min(end)..end]
    }

    /// Consumes up to `n` bytes of the current block and returns them.
    #[inline]
    pub(crate) fn take_buffered(&mut self, n: usize) -> &[u8] {
        let start = self.pos;
        self.consume(n);
        self.block.get(start..self.pos).unwrap_or_default()
    }

    /// Makes the next block with data current; false at the end of the file.
    fn load_next_block(&mut self) -> Result<bool> {
        loop {
            let Some((coffset, clen)) = self.take_next()? else {
                if let Some(u) = self.pending_uoffset.filter(|&u| u > 0) {
                    return Err(Error::SeekPastBlock {
                        name: self.name.to_string(),
                        target: VirtualOffset::new(self.block_coffset, u),
                        block_len: 0,
                    });
                }
                return Ok(false);
            };
            self.block_coffset = coffset;
            self.block_clen = clen;
            self.pos = 0;
            if let Some(u) = self.pending_uoffset.take() {
                if usize::from(u) > self.block.len() {
                    let block_len = self.block.len();
                    self.pos = block_len;
                    return Err(Error::SeekPastBlock {
                        name: self.name.to_string(),
                        target: VirtualOffset::new(coffset, u),
                        block_len,
                    });
                }
                self.pos = usize::from(u);
            }
            if self.pos < self.block.len() {
                return Ok(true);
            }
        }
    }

    /// Keeps a used data buffer for a later block. One that never held data (the empty block
    /// before the first) is dropped: handed out again, it would make the next block allocate,
    /// zero and fault in a fresh 64 KiB beside the two a sequential read needs (issue 21).
    fn keep_spare(&mut self, buf: Vec<u8>) {
        if buf.capacity() > 0 {
            self.spare_data.push(buf);
        }
    }

    /// Makes an inflated block current (keeping the old buffer for a later block), or on a
    /// failure leaves the current block as it was and rewinds the read-ahead to the bad block.
    fn accept(
        &mut self,
        coffset: u64,
        clen: u64,
        inflated: Inflated,
    ) -> Result<Option<(u64, u64)>> {
        let Inflated { result, data, raw } = inflated;
        self.spare_raw.push(raw);
        match result {
            Ok(()) => {
                let old = std::mem::replace(&mut self.block, data);
                self.keep_spare(old);
                Ok(Some((coffset, clen)))
            }
            Err(e) => {
                self.keep_spare(data);
                self.rewind_to(coffset);
                Err(e)
            }
        }
    }

    /// Loads the next block's data (from the gzip tail, the read-ahead queue, or read now) into
    /// `self.block` and returns its (coffset, compressed size); `None` at the end of the file.
    /// On an error the current block is left as it was.
    fn take_next(&mut self) -> Result<Option<(u64, u64)>> {
        if let Some(tail) = &mut self.tail {
            let Some((coffset, clen, data)) = tail.next_chunk(&mut self.input, &self.name)? else {
                return Ok(None);
            };
            let old = std::mem::replace(&mut self.block, data);
            self.keep_spare(old);
            return Ok(Some((coffset, clen)));
        }
        self.fill_queue();
        if let Some(front) = self.queue.pop_front() {
            return match front {
                Ahead::Block {
                    coffset,
                    clen,
                    answer,
                } => {
                    // Reading on: deepen the read-ahead; keep the workers busy while this
                    // thread waits.
                    self.depth = self.depth.saturating_mul(2).max(1);
                    self.fill_queue();
                    match self.wait_for(&answer) {
                        Some(inflated) => self.accept(coffset, clen, inflated),
                        None => {
                            self.rewind_to(coffset);
                            Err(Error::Thread {
                                name: self.name.to_string(),
                                offset: coffset,
                            })
                        }
                    }
                }
                Ahead::Failed(e) => {
                    self.halted = false;
                    Err(e)
                }
                Ahead::Eof => {
                    self.halted = false;
                    Ok(None)
                }
                Ahead::Gzip(coffset) => {
                    self.start_tail(coffset);
                    self.take_next()
                }
            };
        }
        // Single-threaded, the first blocks after a seek, or past the read-ahead limit: read
        // just this block, on demand.
        self.depth = self.depth.saturating_add(1);
        if let Some(done) = self.inflate_in_place()? {
            return Ok(Some(done));
        }
        self.cursor.supply(&mut self.spare_raw);
        match read_raw_block(
            &mut self.input,
            &self.name,
            &mut self.cursor,
            None,
            self.limit,
        )? {
            RawRead::Block(raw) => {
                let (coffset, clen) = (raw.coffset, raw.bytes.len() as u64);
                let out = self.spare_data.pop().unwrap_or_default();
                let inflated = inflate_job(raw, out, &mut self.decompressor, &self.name);
                self.accept(coffset, clen, inflated)
            }
            RawRead::Eof | RawRead::Stopped => Ok(None),
            RawRead::Gzip { coffset, .. } => {
                self.start_tail(coffset);
                self.take_next()
            }
        }
    }

    /// The answer for a block handed to the workers; while it is not ready, this thread
    /// inflates blocks queued after it rather than sleep. `None`: its worker is gone.
    fn wait_for(&mut self, answer: &Receiver<Inflated>) -> Option<Inflated> {
        loop {
            match answer.try_recv() {
                Ok(inflated) => return Some(inflated),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => {}
            }
            let helped = match &self.workers {
                Some(workers) => workers.help(&mut self.decompressor),
                None => false,
            };
            if !helped {
                return answer.recv().ok();
            }
        }
    }

    /// Inflates the next block straight from the read-ahead buffer, with no copy, when it lies
    /// there whole and well-formed; `None` leaves the block to [`read_raw_block`] (which also gives any
    /// error its exact form).
    fn inflate_in_place(&mut self) -> Result<Option<(u64, u64)>> {
        if !self.cursor.is_fresh() {
            return Ok(None);
        }
        let at = self.cursor.coffset;
        let head = self
            .input
            .window(at, block::HEADER_LEN, self.limit, &self.name)?;
        let Some(block::BlockLengths { header_len, total }) = block::whole_len(head) else {
            return Ok(None);
        };
        // Served from the buffer when the first read brought the whole block.
        let whole = self.input.window(at, total, self.limit, &self.name)?;
        let Some(bytes) = whole.get(..total) else {
            return Ok(None);
        };
        let mut out = self.spare_data.pop().unwrap_or_default();
        let result = block::inflate(
            bytes,
            header_len,
            &mut out,
            &mut self.decompressor,
            &self.name,
            at,
        );
        self.cursor.skip_to(at + total as u64);
        match result {
            Ok(()) => {
                let old = std::mem::replace(&mut self.block, out);
                self.keep_spare(old);
                Ok(Some((at, total as u64)))
            }
            Err(e) => {
                self.keep_spare(out);
                self.rewind_to(at);
                Err(e)
            }
        }
    }

    /// From `coffset` on, the file is read as plain gzip (htslib's `is_gzip`): read-ahead is
    /// dropped and no seek is allowed any more.
    fn start_tail(&mut self, coffset: u64) {
        self.rewind_to(coffset);
        self.halted = true;
        self.tail = Some(GzipTail::new(coffset));
    }

    /// Reads blocks ahead for the workers, up to [`AHEAD_PER_WORKER`] each, inside the limit.
    fn fill_queue(&mut self) {
        // The first blocks after a seek are inflated here: a small region is read before
        // worker threads would pay.
        if self.threads == 0 || self.tail.is_some() || self.depth < INLINE_FIRST {
            return;
        }
        if self.workers.is_none() && !self.spawn_failed {
            self.workers = Workers::new(self.threads, Arc::clone(&self.name));
            self.spawn_failed = self.workers.is_none();
        }
        let Some(workers) = &self.workers else {
            return;
        };
        let threads = workers.threads();
        let capacity = self.depth.clamp(threads, AHEAD_PER_WORKER * threads);
        while !self.halted && self.queue.len() < capacity {
            self.cursor.supply(&mut self.spare_raw);
            match read_raw_block(
                &mut self.input,
                &self.name,
                &mut self.cursor,
                self.limit,
                self.limit,
            ) {
                Ok(RawRead::Stopped) => break,
                Ok(RawRead::Eof) => {
                    self.queue.push_back(Ahead::Eof);
                    self.halted = true;
                }
                Err(e) => {
                    self.queue.push_back(Ahead::Failed(e));
                    self.halted = true;
                }
                Ok(RawRead::Gzip { coffset, .. }) => {
                    self.queue.push_back(Ahead::Gzip(coffset));
                    self.halted = true;
                }
                Ok(RawRead::Block(raw)) => {
                    let coffset = raw.coffset;
                    let clen = raw.bytes.len() as u64;
                    let out = self.spare_data.pop().unwrap_or_default();
                    let answer = match workers.submit(raw, out) {
                        Ok(answer) => answer,
                        Err((raw, out)) => {
                            // No worker left: inflate here, keeping the order.
                            let (tx, rx) = crossbeam_channel::bounded(1);
                            let _ =
                                tx.send(inflate_job(raw, out, &mut self.decompressor, &self.name));
                            rx
                        }
                    };
                    self.queue.push_back(Ahead::Block {
                        coffset,
                        clen,
                        answer,
                    });
                }
            }
        }
    }

    /// Drops all read-ahead; the next block comes from `coffset`.
    fn rewind_to(&mut self, coffset: u64) {
        if let Some(workers) = &self.workers {
            workers.invalidate();
        }
        self.queue.clear();
        self.depth = 0;
        self.halted = false;
        self.cursor = Cursor::at(coffset);
    }

    /// Drops all read-ahead, keeping the position.
    fn reset_ahead(&mut self) {
        let next = if self.pending_uoffset.is_some() {
            self.block_coffset
        } else {
            self.block_coffset + self.block_clen
        };
        self.rewind_to(next);
    }

    pub(crate) fn seek(&mut self, target: VirtualOffset) -> Result<()> {
        if let Some(tail) = &self.tail {
            return Err(Error::SeekUnsupported {
                name: self.name.to_string(),
                format: crate::Format::Gzip,
                target,
                since: tail.start(),
            });
        }
        let coffset = target.coffset();
        let uoffset = target.uoffset();
        if self.pending_uoffset.is_none() && self.block_clen > 0 && coffset == self.block_coffset {
            // Inside the current block: the queue still holds exactly the blocks after it.
            if usize::from(uoffset) > self.block.len() {
                return Err(Error::SeekPastBlock {
                    name: self.name.to_string(),
                    target,
                    block_len: self.block.len(),
                });
            }
            self.pos = usize::from(uoffset);
            return Ok(());
        }
        self.block.clear();
        self.pos = 0;
        self.block_clen = 0;
        self.block_coffset = coffset;
        self.pending_uoffset = Some(uoffset);
        let queued = self
            .queue
            .iter()
            .position(|a| matches!(a, Ahead::Block { coffset: c, .. } if *c == coffset));
        if let Some(i) = queued {
            // A block already read ahead: keep it and what follows it.
            self.queue.drain(..i);
        } else if !(self.queue.is_empty() && self.cursor.coffset == coffset) {
            self.rewind_to(coffset);
        }
        Ok(())
    }

    pub(crate) fn set_threads(&mut self, threads: usize) {
        let wanted = if threads >= 2 { threads } else { 0 };
        if self.threads == wanted {
            return;
        }
        self.reset_ahead();
        self.workers = None;
        self.spawn_failed = false;
        self.threads = wanted;
    }
}
