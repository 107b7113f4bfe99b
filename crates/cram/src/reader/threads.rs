//! Decoding containers on worker threads (`-@`), as htslib's thread pool does: the reader's
//! thread reads each container and the reference bases its slices need (the byte source and
//! the FASTA stay with it) while a worker decodes its blocks, the worker makes the records
//! whole as each slice's bases come, and the containers come back in file order. While it waits, the reader's thread decodes queued
//! containers too, so that `-@ 1` keeps two threads decoding.

use std::collections::VecDeque;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, TryRecvError};

use super::ahead::Span;
use super::decode::{decode_blocks, Bases, Context, Decoded, Slices};
use super::laid::LaidOut;
use super::*;
use crate::md5::SpanCheck;

type Job = Box<dyn FnOnce() + Send>;
type Answer = Result<Batch, Error>;

/// A container's records as a worker hands them back.
pub(super) enum Batch {
    /// Made whole (the range not yet applied).
    Records(Vec<Alignment>),
    /// Laid out by the reader's layout, the range applied ([`Reader::set_layout`]), and
    /// whether a record ended the range.
    Laid(LaidOut, bool),
}
/// A slice whose reference bases are to be read (its header and offset), or none.
type Wanted = Option<(SliceHeader, u64)>;
/// A slice's reference bases as the reader's thread read them, with their MD5 check for the
/// worker to make (the digest costs as much as the reading: the reader's thread, which
/// reads every container's bases in turn, is spared it), or the error reading them.
type Bases1 = Result<Option<(Arc<Span>, Option<SpanCheck>)>, Error>;

/// A container read and waiting for its turn.
enum Queued {
    /// Decoded on a worker (or by the waiting reader thread).
    Job(Receiver<Answer>),
    /// Decoded by the reader in its turn: it needs what only the reader has (several
    /// references, an embedded reference), or its slices could not be read ahead (its error
    /// then comes in its turn, after the records before it).
    InTurn(ContainerHeader, Vec<u8>, u64),
    /// Reading it failed: the error, in its turn.
    Failed(Error),
}

/// A queued container with the range it was read for ([`Reader::read_ranges`] queues the
/// containers of several): its number, and the range.
struct InQueue {
    pass: u64,
    range: Option<Range>,
    queued: Queued,
}

pub(super) struct Pool {
    jobs: Option<Sender<Job>>,
    /// The queue's other end, from which the waiting reader thread takes work.
    steal: Receiver<Job>,
    workers: Vec<JoinHandle<()>>,
    queued: VecDeque<InQueue>,
    /// Containers kept queued: enough for every thread to have one and the next ready.
    depth: usize,
    /// No container is left to queue (until the reader is pointed elsewhere).
    input_done: bool,
    /// Records were handed out since the reader was last pointed elsewhere. Until then a
    /// container whose bytes follow the last one queued is not read ahead: over a remote
    /// file's request they come after them, and reading it first held the first records back
    /// until `depth` containers were in (chromosome 22 on a 2 MB/s link: 3.7 s against
    /// samtools' 0.6 s). Containers elsewhere in the file (other regions) come beside them,
    /// on requests of their own, and are read ahead at once.
    started: bool,
}

/// The answer of `rx`, running jobs queued on `steal` while it is not there.
fn wait<T>(rx: &Receiver<Result<T, Error>>, steal: &Receiver<Job>) -> Result<T, Error> {
    let stopped = || Error::at(0, "a CRAM decoding thread stopped");
    loop {
        match rx.try_recv() {
            Ok(answer) => return answer,
            Err(TryRecvError::Disconnected) => return Err(stopped()),
            Err(TryRecvError::Empty) => {}
        }
        match steal.try_recv() {
            Ok(job) => job(),
            Err(_) => return rx.recv().unwrap_or_else(|_| Err(stopped())),
        }
    }
}

/// Blocks smaller than this are decoded where their slice is: handing them on costs more.
const SHARED_BLOCK: usize = 64 << 10;

/// The pool's queue, seen from a container's job: large blocks are handed to threads with
/// nothing to do (a query of one container has one slice to decode on two cores).
#[derive(Clone)]
struct Helpers {
    jobs: Sender<Job>,
    steal: Receiver<Job>,
}

impl Helpers {
    /// [`decode_blocks`] with the large blocks, but the largest, handed to idle threads when
    /// no job waits in the queue (decoding a whole file keeps every thread busy with
    /// containers: nothing is handed on then). Errors come in block order, as
    /// [`decode_blocks`] gives them.
    fn decode_blocks(&self, blocks: &[Block<'_>]) -> Result<Vec<Decoded>, Error> {
        let largest = (0..blocks.len()).max_by_key(|&i| blocks[i].raw_size);
        let idle = self.jobs.is_empty();
        let mut handed = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            let worth = b.raw_size >= SHARED_BLOCK && b.method != crate::block::Method::Raw;
            if Some(i) == largest || !worth || !idle {
                continue;
            }
            let (tx, rx) = crossbeam_channel::bounded(1);
            let (method, content_type, content_id) = (b.method, b.content_type, b.content_id);
            let (raw_size, offset, data) = (b.raw_size, b.offset, b.data.to_vec());
            let job: Job = Box::new(move || {
                let b = Block {
                    method,
                    content_type,
                    content_id,
                    raw_size,
                    data: &data,
                    offset,
                };
                let _ = tx.send(b.decode().map(std::borrow::Cow::into_owned));
            });
            if self.jobs.send(job).is_ok() {
                handed.push((i, rx));
            }
        }
        let mut handed = handed.into_iter().peekable();
        let mut out = Vec::with_capacity(blocks.len());
        for (i, b) in blocks.iter().enumerate() {
            let bytes = match handed.next_if(|(j, _)| *j == i) {
                Some((_, rx)) => wait(&rx, &self.steal)?,
                None => b.decode()?.into_owned(),
            };
            out.push((b.content_type, b.content_id, bytes, b.offset));
        }
        Ok(out)
    }
}

impl Pool {
    fn wait(&self, rx: &Receiver<Answer>) -> Answer {
        wait(rx, &self.steal)
    }

    /// Queues `f` for a worker: its answer's receiver, or none when the workers stopped.
    pub(super) fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Option<Receiver<T>> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        self.jobs.as_ref()?.send(job).ok()?;
        Some(rx)
    }

    fn helpers(&self) -> Option<Helpers> {
        Some(Helpers {
            jobs: self.jobs.clone()?,
            steal: self.steal.clone(),
        })
    }

    /// Forgets the queued containers; jobs nobody waits for are taken off the queue (with
    /// none queued, the jobs there are digests read ahead and lists given back: kept).
    fn clear(&mut self) {
        if !self.queued.is_empty() {
            self.queued.clear();
            while self.steal.try_recv().is_ok() {}
        }
        self.input_done = false;
        self.started = false;
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Every job nobody will wait for is taken off, digests read ahead among them.
        self.queued.clear();
        while self.steal.try_recv().is_ok() {}
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

impl Context {
    /// A container's records made whole, each slice's reference bases taken from `refs` (in
    /// slice order, read by the reader's thread meanwhile) once its blocks are decoded: a
    /// reference's error comes where decoding in turn gives it.
    fn decode_prepared(
        &self,
        h: &ContainerHeader,
        body: &[u8],
        body_at: u64,
        refs: Receiver<Bases1>,
        (range, laying): (Option<Range>, Option<&Laying>),
        helpers: Option<Helpers>,
    ) -> Result<Batch, Error> {
        let (ch, mut slices) = Slices::new(h, body, body_at, self.version)?;
        let none = BTreeMap::new();
        let mut out = Made::new(laying);
        let mut ended = false;
        while let Some((sh, blocks, at)) = slices.next_slice()? {
            let blocks = match &helpers {
                Some(h) => h.decode_blocks(&blocks)?,
                None => decode_blocks(&blocks)?,
            };
            let stored = self.records(&ch, &sh, &blocks, range.as_ref(), at)?;
            let slice_ref = refs
                .recv()
                .unwrap_or_else(|_| Err(Error::at(at, "the reference reading stopped")))?;
            let slice_ref = match slice_ref {
                Some((span, check)) => {
                    span.check(check)?;
                    Some(span)
                }
                None => None,
            };
            let bases = Bases {
                slice: slice_ref.as_deref().map(|s| &s.bases),
                whole: &none,
            };
            ended = self.finish(&ch, (&sh, stored), bases, range.as_ref(), at, &mut out)?;
            if ended {
                break;
            }
        }
        Ok(out.into_batch(ended))
    }
}

impl Reader {
    /// Decodes containers on `threads` worker threads besides the caller's (samtools' `-@`);
    /// 0: in the caller's thread alone.
    pub fn set_threads(&mut self, threads: usize) {
        self.pool = None;
        if threads == 0 {
            return;
        }
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        let mut workers = Vec::with_capacity(threads);
        for i in 0..threads {
            let rx: Receiver<Job> = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("cram-decode-{i}"))
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        job();
                    }
                });
            match spawned {
                Ok(handle) => workers.push(handle),
                Err(_) => break,
            }
        }
        if workers.is_empty() {
            return;
        }
        self.pool = Some(Pool {
            jobs: Some(tx),
            steal: rx,
            workers,
            queued: VecDeque::new(),
            depth: 2 * (threads + 1),
            input_done: false,
            started: false,
        });
    }

    /// Gives back records the caller is done with: freed, their list kept for a slice made
    /// next (the reader's `spare` lists); with workers, by one of them, as the thread that
    /// allocated them frees them at the least cost (glibc's arenas) and makes the next slices.
    pub fn recycle(&mut self, recs: Vec<Alignment>) {
        let Some(jobs) = self.pool.as_ref().and_then(|p| p.jobs.as_ref()) else {
            super::spare::keep(recs);
            return;
        };
        let _ = jobs.send(Box::new(move || super::spare::keep(recs)));
    }

    /// Forgets containers read ahead (the reader is pointed elsewhere).
    pub(super) fn drop_queued(&mut self) {
        if let Some(p) = self.pool.as_mut() {
            p.clear();
        }
    }

    /// [`Reader::next_container`] with workers: containers read ahead and decoded in
    /// parallel, taken in order.
    pub(super) fn next_decoded(&mut self) -> Result<Option<Batch>, Error> {
        self.fill();
        let Some(next) = self.pool.as_mut().and_then(|p| {
            p.started = true;
            p.queued.pop_front()
        }) else {
            return Ok(None);
        };
        let batch = match next.queued {
            Queued::Job(rx) => match self.pool.as_ref() {
                Some(p) => p.wait(&rx)?,
                None => return Ok(None),
            },
            Queued::InTurn(h, body, body_at) => {
                // Decoded with its own range: the reading may be at a later one.
                let reading = std::mem::replace(&mut self.range, next.range);
                let made = self.decode_container(&h, &body, body_at, None);
                self.range = reading;
                let (made, ended) = made?;
                made.into_batch(ended)
            }
            Queued::Failed(e) => return Err(e),
        };
        let (batch, ended) = match batch {
            Batch::Records(recs) => {
                let (recs, ended) = in_range(next.range.as_ref(), recs);
                (Batch::Records(recs), ended)
            }
            Batch::Laid(laid, ended) => (Batch::Laid(laid, ended), ended),
        };
        if ended {
            self.end_pass(next.pass);
        }
        Ok(Some(batch))
    }

    /// The range numbered `pass` reached its end: its containers still queued are dropped
    /// and, if it is still being read, its reading ends.
    fn end_pass(&mut self, pass: u64) {
        if self.pass == pass {
            self.range_done = true;
        }
        let Some(p) = self.pool.as_mut() else {
            return;
        };
        if self.later.is_empty() && p.queued.iter().all(|a| a.pass == pass) {
            // Nothing else is queued: the jobs nobody waits for are taken off too.
            p.clear();
        } else {
            // Jobs of later ranges stay: their answers are waited for.
            p.queued.retain(|a| a.pass != pass);
            // A read that failed within the ended range is gone with it, and the later ranges
            // are read on, as their own passes would have been.
            p.input_done = p
                .queued
                .iter()
                .any(|a| matches!(a.queued, Queued::Failed(_)));
        }
    }

    /// Reads containers ahead until the queue is full or the input ends.
    fn fill(&mut self) {
        loop {
            match self.pool.as_ref() {
                Some(p) if p.input_done || p.queued.len() >= p.depth => return,
                Some(p) if !p.started && !p.queued.is_empty() && self.next_follows() => return,
                Some(_) => {}
                _ => return,
            }
            let queued = match self.next_stored() {
                Ok(Some((h, body, body_at))) => Some(self.queue(h, body, body_at)),
                Ok(None) => None,
                Err(e) => Some(Queued::Failed(e)),
            };
            let (pass, range) = (self.pass, self.range);
            let Some(p) = self.pool.as_mut() else {
                return;
            };
            match queued {
                Some(queued) => {
                    if matches!(queued, Queued::Failed(_)) {
                        p.input_done = true;
                    }
                    p.queued.push_back(InQueue {
                        pass,
                        range,
                        queued,
                    });
                }
                None => p.input_done = true,
            }
        }
    }

    /// Hands a container to the workers, then reads its slices' reference bases for them;
    /// or keeps it to be decoded in turn.
    fn queue(&mut self, h: ContainerHeader, body: Vec<u8>, body_at: u64) -> Queued {
        let wanted = match self.prepare(&h, &body, body_at) {
            Ok(Some(wanted)) => wanted,
            Ok(None) | Err(_) => return Queued::InTurn(h, body, body_at),
        };
        let ctx = self.context();
        let range = self.range;
        let (refs_tx, refs) = crossbeam_channel::unbounded();
        let helpers = self.pool.as_ref().and_then(Pool::helpers);
        let laying = self.laying.clone();
        let job = move || {
            let how = (range, laying.as_ref());
            ctx.decode_prepared(&h, &body, body_at, refs, how, helpers)
        };
        let Some(rx) = self.pool.as_ref().and_then(|p| p.run(job)) else {
            return Queued::Failed(Error::at(body_at, "CRAM decoding threads stopped"));
        };
        for slice in wanted {
            let bases = match slice {
                Some((sh, at)) => self.slice_bases(&sh, at).map(Some),
                None => Ok(None),
            };
            let failed = bases.is_err();
            if refs_tx.send(bases).is_err() || failed {
                break;
            }
        }
        Queued::Job(rx)
    }

    /// The slices of a container that need reference bases read (their headers and
    /// offsets), in order; `None` when the container is to be decoded in turn.
    fn prepare(
        &mut self,
        h: &ContainerHeader,
        body: &[u8],
        body_at: u64,
    ) -> Result<Option<Vec<Wanted>>, Error> {
        let (ch, mut slices) = Slices::new(h, body, body_at, self.version)?;
        let mut wanted = Vec::new();
        while let Some((sh, _, at)) = slices.next_slice()? {
            if sh.reference_id == crate::slice::MULTI_REF
                || (sh.reference_id >= 0 && sh.embedded_reference >= 0)
            {
                return Ok(None);
            }
            let needed = sh.reference_id >= 0 && ch.reference_required && !self.without_bases;
            wanted.push(needed.then_some((sh, at)));
        }
        Ok(Some(wanted))
    }
}
