//! SAM text for many records, written in large chunks and, when asked, formatted on worker
//! threads while the caller goes on reading: records are copied into batches, each batch is
//! formatted by a worker, and the text is written in the order the records came.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Write};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

use crate::error::RecordError;
use crate::header::Header;
use crate::record::{Batch, Record};
use crate::sam::write_sam;

/// Text is handed to the output once this much has gathered, unless
/// [`SamWriter::with_write_size`] says otherwise: large writes, few system calls, for a file.
pub const DEFAULT_WRITE_SIZE: usize = 1 << 20;

/// A batch is sent to a worker once its records take this many bytes (about 350 short reads, two
/// BGZF blocks): large enough that the hand-over costs nothing next to the formatting, small
/// enough that the stages stay loosely coupled (the inflate read-ahead holds several batches).
const BATCH_BYTES: usize = 128 * 1024;

/// Batches in flight per worker before the caller waits for the oldest: slack for a worker that
/// falls behind for a moment.
const BATCHES_PER_WORKER: usize = 4;

/// Why [`SamWriter`] stopped. Everything before the failing record has been written.
#[derive(Debug)]
pub enum SamWriteError {
    /// A record could not be formatted (corrupt aux data, as htslib reports it).
    Record(RecordError),
    /// The output failed.
    Io(io::Error),
}

impl fmt::Display for SamWriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SamWriteError::Record(e) => e.fmt(f),
            SamWriteError::Io(e) => write!(f, "error writing output: {e}"),
        }
    }
}

impl std::error::Error for SamWriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SamWriteError::Record(e) => Some(e),
            SamWriteError::Io(e) => Some(e),
        }
    }
}

impl From<io::Error> for SamWriteError {
    fn from(e: io::Error) -> SamWriteError {
        SamWriteError::Io(e)
    }
}

fn stopped() -> SamWriteError {
    SamWriteError::Io(io::Error::other(
        "the SAM writer stopped after an earlier error",
    ))
}

/// Formats every record of `batch` into `text`; stops at the first that fails.
fn format(batch: &Batch, header: &Header, text: &mut Vec<u8>) -> Result<(), RecordError> {
    for r in batch.iter() {
        write_sam(&r, header, text)?;
    }
    Ok(())
}

/// A batch formatted by a worker: its text (up to the failing record, if one failed), and the
/// buffers back for reuse.
struct Formatted {
    batch: Batch,
    text: Vec<u8>,
    error: Option<RecordError>,
}

struct Job {
    batch: Batch,
    text: Vec<u8>,
    reply: Sender<Formatted>,
}

/// The formatting threads.
struct Pool {
    jobs: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    fn new(threads: usize, header: &Arc<Header>) -> Option<Pool> {
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        let mut handles = Vec::with_capacity(threads);
        for i in 0..threads {
            let rx: Receiver<Job> = rx.clone();
            let header = Arc::clone(header);
            let spawned = std::thread::Builder::new()
                .name(format!("sam-format-{i}"))
                .spawn(move || {
                    for job in rx.iter() {
                        let Job {
                            batch,
                            mut text,
                            reply,
                        } = job;
                        text.clear();
                        let error = format(&batch, &header, &mut text).err();
                        // The writer may have stopped waiting (after an error); nothing to do.
                        let _ = reply.send(Formatted { batch, text, error });
                    }
                });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(_) => break,
            }
        }
        if handles.is_empty() {
            return None;
        }
        Some(Pool {
            jobs: Some(tx),
            threads: handles,
        })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs = None;
        for handle in self.threads.drain(..) {
            let _ = handle.join();
        }
    }
}

/// Writes records as SAM text (as [`write_sam`] formats them) to `W`, in large chunks, with the
/// formatting done on `threads` worker threads when `threads > 0` (started when the first batch
/// is full: a small output is formatted on the calling thread). Output order is the order of
/// [`SamWriter::write_record`] calls either way.
///
/// With workers, corrupt aux data is found by the call that writes the record, as without
/// workers; any other failure of a worker surfaces from a later call or from
/// [`SamWriter::finish`]. The text written is exactly that of the records before the failing one. Call [`SamWriter::finish`] at the end (also after a failure elsewhere, so
/// that the records before it are written); dropping the writer discards pending text.
///
/// ```
/// use bam::header::{Header, Reference};
/// use bam::record::Record;
/// use bam::sam::SamWriter;
///
/// let refs = vec![Reference { name: b"chr1".to_vec(), len: 1000 }];
/// let header = Header::from_parts(Vec::new(), refs).unwrap();
/// let mut data = Vec::new();
/// for word in [0u32, 9, 4681 << 16 | 60 << 8 | 2, 0, 0, u32::MAX, u32::MAX, 0] {
///     data.extend_from_slice(&word.to_le_bytes());
/// }
/// data.extend_from_slice(b"r\0");
/// let record = Record::decode(data, 1).unwrap();
/// let mut w = SamWriter::new(Vec::new(), &header, 2);
/// for _ in 0..3 {
///     w.write_record(&record).unwrap();
/// }
/// let out = w.finish().unwrap();
/// assert_eq!(out, b"r\t0\tchr1\t10\t60\t*\t*\t0\t0\t*\t*\n".repeat(3));
/// ```
pub struct SamWriter<W: Write> {
    out: W,
    header: Arc<Header>,
    /// Text not yet written (formatted here, or received from workers).
    text: Vec<u8>,
    /// Text gathered before it is written (on the calling thread).
    write_size: usize,
    /// Formatting threads asked for; they start when the first batch is full, so a small
    /// output costs no thread start-up.
    threads: usize,
    pool: Option<Pool>,
    spawn_tried: bool,
    /// The batch being filled.
    batch: Batch,
    /// Batches with the workers, oldest first.
    in_flight: VecDeque<Receiver<Formatted>>,
    spare_batches: Vec<Batch>,
    spare_texts: Vec<Vec<u8>>,
    /// Set after an error: nothing more is written.
    failed: bool,
}

impl<W: Write> SamWriter<W> {
    /// A writer to `out`, formatting on `threads` worker threads (0: on the calling thread).
    pub fn new(out: W, header: &Header, threads: usize) -> SamWriter<W> {
        let header = Arc::new(header.clone());
        SamWriter {
            out,
            header,
            text: Vec::new(),
            write_size: DEFAULT_WRITE_SIZE,
            threads,
            pool: None,
            spawn_tried: false,
            batch: Batch::default(),
            in_flight: VecDeque::new(),
            spare_batches: Vec::new(),
            spare_texts: Vec::new(),
            failed: false,
        }
    }

    /// Gathers `size` bytes of text (at least 1) before writing when formatting on the calling
    /// thread; with workers each batch's text is written as it comes back.
    pub fn with_write_size(mut self, size: usize) -> SamWriter<W> {
        self.write_size = size.max(1);
        self
    }

    /// Writes one record (owned or read in place).
    pub fn write_record<D: AsRef<[u8]>>(
        &mut self,
        record: &Record<D>,
    ) -> Result<(), SamWriteError> {
        if self.failed {
            return Err(stopped());
        }
        if self.threads == 0 {
            if let Err(e) = write_sam(record, &self.header, &mut self.text) {
                return Err(self.fail_after_text(SamWriteError::Record(e)));
            }
            if self.text.len() >= self.write_size {
                self.write_text()?;
            }
        } else {
            // Corrupt aux data, the one fault formatting finds, is looked for here: the call
            // with the failing record fails, so that the caller can say which record it is
            // (where it lies in the input). The records before it are written first.
            if let Err(e) = record.check_aux() {
                self.flush()?;
                self.failed = true;
                return Err(SamWriteError::Record(e));
            }
            self.batch.push(record);
            if self.batch.byte_len() >= BATCH_BYTES {
                self.dispatch()?;
            }
        }
        Ok(())
    }

    /// Writes all the text of the records so far (waiting for the workers) and flushes the
    /// output: for a reader of the output waiting on records that come slowly.
    pub fn flush(&mut self) -> Result<(), SamWriteError> {
        if self.failed {
            return Err(stopped());
        }
        if !self.batch.is_empty() {
            self.send_batch();
        }
        while !self.in_flight.is_empty() {
            self.receive_oldest()?;
        }
        self.write_text()?;
        self.out.flush().map_err(|e| {
            self.failed = true;
            SamWriteError::Io(e)
        })
    }

    /// Writes everything still pending and returns the output (not flushed further: a
    /// `BufWriter` around it is the caller's to flush).
    pub fn finish(mut self) -> Result<W, SamWriteError> {
        if !self.failed {
            if !self.batch.is_empty() {
                self.send_batch();
            }
            while !self.in_flight.is_empty() {
                self.receive_oldest()?;
            }
            self.write_text()?;
        }
        let pool = self.pool.take();
        drop(pool);
        Ok(self.out)
    }

    /// Sends the current batch to the workers, then writes what they have finished, waiting
    /// for the oldest batch while too many are in flight.
    fn dispatch(&mut self) -> Result<(), SamWriteError> {
        if !self.spawn_tried {
            self.spawn_tried = true;
            self.pool = Pool::new(self.threads, &self.header);
        }
        self.send_batch();
        let limit = BATCHES_PER_WORKER * self.pool.as_ref().map_or(1, |p| p.threads.len());
        while self.in_flight.len() > limit {
            self.receive_oldest()?;
        }
        while self.in_flight.front().is_some_and(|rx| !rx.is_empty()) {
            self.receive_oldest()?;
        }
        Ok(())
    }

    fn send_batch(&mut self) {
        let next = self.spare_batches.pop().unwrap_or_default();
        let batch = std::mem::replace(&mut self.batch, next);
        let text = self.spare_texts.pop().unwrap_or_default();
        let (reply, answer) = crossbeam_channel::bounded(1);
        let job = Job { batch, text, reply };
        let unsent = match self.pool.as_ref().and_then(|p| p.jobs.as_ref()) {
            Some(jobs) => jobs.send(job).err().map(|e| e.into_inner()),
            None => Some(job),
        };
        if let Some(Job {
            batch,
            mut text,
            reply,
        }) = unsent
        {
            // No worker left: format here, keeping the order.
            text.clear();
            let error = format(&batch, &self.header, &mut text).err();
            let _ = reply.send(Formatted { batch, text, error });
        }
        self.in_flight.push_back(answer);
    }

    /// Waits for the oldest batch in flight and writes its text.
    fn receive_oldest(&mut self) -> Result<(), SamWriteError> {
        let Some(answer) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let Ok(Formatted {
            mut batch,
            text,
            error,
        }) = answer.recv()
        else {
            self.failed = true;
            return Err(SamWriteError::Io(io::Error::other(
                "a SAM formatting thread stopped unexpectedly",
            )));
        };
        let written = self.out.write_all(&text);
        batch.clear();
        self.spare_batches.push(batch);
        self.spare_texts.push(text);
        if let Err(e) = written {
            self.failed = true;
            return Err(SamWriteError::Io(e));
        }
        if let Some(e) = error {
            self.failed = true;
            self.in_flight.clear();
            return Err(SamWriteError::Record(e));
        }
        Ok(())
    }

    fn write_text(&mut self) -> Result<(), SamWriteError> {
        let written = self.out.write_all(&self.text);
        self.text.clear();
        written.map_err(|e| {
            self.failed = true;
            SamWriteError::Io(e)
        })
    }

    /// Writes the text of the records before a failing one, then reports the failure.
    fn fail_after_text(&mut self, error: SamWriteError) -> SamWriteError {
        match self.write_text() {
            Ok(()) => {
                self.failed = true;
                error
            }
            Err(io) => io,
        }
    }
}
