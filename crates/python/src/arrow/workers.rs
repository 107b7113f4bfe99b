//! Arrow batches laid out on worker threads. Laying records into columns (bases and qualities
//! as text, CIGAR strings, fresh memory for every column) costs more than reading them: on one
//! thread it was the whole query's pace. Here the query's thread only walks the records and
//! copies each into a [`bam::record::Batch`] (one `memcpy`); workers lay whole batches into
//! columns while the query reads on; a hand-over thread passes the results on in the query's
//! order, each as soon as it and those before it are done.

use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use arrow_array::RecordBatch;
use bam::record::Batch as Copied;
use bam::RecordRef;
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};

use super::{Batch, Layout};
use crate::producer::Hand;
use crate::Error;

/// What a worker makes of one batch of records: its record batches (one, unless a string
/// column grew too long for 32-bit offsets), or why not.
type Built = Result<Vec<RecordBatch>, Error>;

/// One batch of records for a worker, and where its result goes.
struct Job {
    records: Copied,
    reply: Sender<Built>,
}

/// A batch of records is sent to a worker at this many bytes even if it holds fewer rows than
/// asked: the memory of the batches in flight stays bounded for long reads (a worker still
/// cuts a record batch whose string column passes 1 GiB).
const JOB_BYTES: usize = 32 << 20;

/// Records a new batch has room for at first (`batch_size` is the caller's, any size).
const FIRST_ROOM: usize = 1 << 16;

/// Lays `records` into `batch`'s columns, `rows` rows a record batch at most.
fn lay_out(batch: &mut Batch, records: &Copied, rows: usize) -> Built {
    let mut out = Vec::with_capacity(1);
    for record in records.iter() {
        batch.push(&record)?;
        if batch.is_full(rows) {
            out.push(batch.finish()?);
        }
    }
    if !batch.is_empty() {
        out.push(batch.finish()?);
    }
    Ok(out)
}

/// Where the query's thread puts its records.
pub struct Sink<'a> {
    records: Copied,
    rows: usize,
    layout: &'a Arc<Layout>,
    jobs: Sender<Job>,
    order: Sender<Receiver<Built>>,
    spares: &'a Receiver<Copied>,
    stopped: &'a AtomicBool,
}

impl Sink<'_> {
    /// Copies `record` in; `false` when reading should stop (the consumer is gone, or a batch
    /// could not be laid out: the error comes after the batches before it).
    #[inline]
    pub fn push(&mut self, record: &RecordRef<'_>) -> bool {
        self.records.push(record);
        if self.records.len() >= self.rows || self.records.byte_len() >= JOB_BYTES {
            return self.send();
        }
        true
    }

    /// Sends the records gathered to a worker (or lays them out here when no worker runs).
    fn send(&mut self) -> bool {
        let next = self.spares.try_recv().unwrap_or_else(|_| {
            Copied::with_capacity(self.rows.min(FIRST_ROOM), self.records.byte_len())
        });
        let records = mem::replace(&mut self.records, next);
        let (reply, answer) = bounded(1);
        if let Err(unsent) = self.jobs.send(Job { records, reply }) {
            let Job { records, reply } = unsent.into_inner();
            let _ = reply.send(lay_out(&mut self.layout.batch(), &records, self.rows));
        }
        self.order.send(answer).is_ok() && !self.stopped.load(Ordering::Relaxed)
    }

    /// Sends what is left.
    fn finish(&mut self) {
        if !self.records.is_empty() {
            self.send();
        }
    }
}

/// Runs `read`, which walks a query's records into the [`Sink`] it is given; their record
/// batches (of `rows` rows, in `layout`) are laid out on `workers` threads and handed over
/// through `hand` in the query's order. An error `read` returns, or a worker's, comes after
/// the batches before it.
pub fn run<F>(
    layout: &Arc<Layout>,
    rows: usize,
    workers: usize,
    hand: &Hand<RecordBatch>,
    read: F,
) -> Result<(), Error>
where
    F: FnOnce(&mut Sink<'_>) -> Result<(), Error>,
{
    let rows = rows.max(1);
    let (jobs, queue) = unbounded::<Job>();
    let (spare, spares) = bounded::<Copied>(workers + 2);
    // Batches sent out but not yet handed over: one a worker and one more, so that none waits
    // for work while the oldest is handed over.
    let (order, awaited) = bounded::<Receiver<Built>>(workers + 1);
    let stopped = AtomicBool::new(false);
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let read_result = thread::scope(|scope| {
        let (stopped, failed) = (&stopped, &failed);
        for i in 0..workers {
            let (queue, spare) = (queue.clone(), spare.clone());
            let spawned = thread::Builder::new()
                .name(format!("hts-arrow-{i}"))
                .spawn_scoped(scope, move || {
                    let mut batch = layout.batch();
                    for Job { mut records, reply } in queue.iter() {
                        if stopped.load(Ordering::Relaxed) {
                            // Nobody takes batches any more: the queue is only drained.
                            continue;
                        }
                        // A panic is this batch's error, not a stream that ends early as if
                        // complete (the scope would carry it to the query's thread).
                        let built = panic::catch_unwind(AssertUnwindSafe(|| {
                            lay_out(&mut batch, &records, rows)
                        }))
                        .unwrap_or_else(|_| {
                            Err(Error::Read("an Arrow worker thread failed".to_string()))
                        });
                        if built.is_err() {
                            // Rows of the failed batch may be left in the builders.
                            batch = layout.batch();
                        }
                        records.clear();
                        let _ = spare.try_send(records);
                        let _ = reply.send(built);
                    }
                });
            if spawned.is_err() {
                // Fewer workers; with none, the query's thread lays batches out itself.
                break;
            }
        }
        drop(queue);
        let handing = thread::Builder::new()
            .name("hts-arrow-out".to_string())
            .spawn_scoped(scope, move || {
                for answer in awaited.iter() {
                    let built = answer.recv().unwrap_or_else(|_| {
                        Err(Error::Read(
                            "an Arrow worker thread stopped unexpectedly".to_string(),
                        ))
                    });
                    let batches = match built {
                        Ok(batches) => batches,
                        Err(e) => {
                            *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                            break;
                        }
                    };
                    if !batches.into_iter().all(|b| hand.give(b)) {
                        break;
                    }
                }
                // Dropping `awaited` here makes the query's next hand-over fail.
                stopped.store(true, Ordering::Relaxed);
            });
        if handing.is_err() {
            return Err(Error::Read("cannot start an Arrow thread".to_string()));
        }
        let mut sink = Sink {
            records: Copied::with_capacity(rows.min(FIRST_ROOM), 0),
            rows,
            layout,
            jobs,
            order,
            spares: &spares,
            stopped,
        };
        let result = read(&mut sink);
        if result.is_ok() && !stopped.load(Ordering::Relaxed) {
            sink.finish();
        }
        // Closes the job queue and the order: the workers and the hand-over end when done.
        drop(sink);
        result
    });
    // A worker's error is about records before any the query could not read.
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => read_result,
    }
}
