//! The queries the Python classes run: records in batches, Arrow record batches, counts. Each
//! lends the file's reader ([`Shared::lend`]) for its life and gives it back at the end (a
//! reader whose query failed is dropped: the next query opens the file again).

use std::sync::Arc;

use arrow_array::RecordBatch;
use bam::{Header, Record};

use crate::alignments::{Scope, Shared};
use crate::arrow::{workers, Layout};
use crate::lending::Lender;
use crate::producer::{Producer, Sizer};
use crate::variants::Variants;
use crate::Error;

/// A batch of records and the header they were read with.
pub struct Records {
    /// The header (for reference names and SAM text).
    pub header: Arc<Header>,
    /// The records, in the order the query gives them.
    pub records: Vec<Record>,
}

/// The records of `scope`, in batches, read on a thread of their own. The reader is lent
/// here, before the thread starts: a file closed after this call does not stop the query.
///
/// A CRAM is decoded on at least one thread besides the query's: its decoding is most of what
/// reading it costs, and the query's thread then lays records into batches while the next
/// container is decoded (chr22 of the benchmark CRAM iterated from Python: 0.94 s at none,
/// 0.51 s at one; pysam 0.72 s at either).
pub fn records(shared: Arc<Shared>, scope: Scope) -> Result<Producer<Records>, Error> {
    let mut reader = shared.lend()?;
    if reader.is_cram() {
        reader.use_threads(1);
    }
    Producer::spawn("hts-records", move |hand| {
        let mut sizer = Sizer::default();
        let mut batch = Vec::with_capacity(Sizer::FIRST);
        let mut header = Arc::clone(reader.header());
        let mut gone = false;
        let result = reader.run(&scope, &mut |h, record| {
            if !Arc::ptr_eq(h, &header) {
                // A stale cache entry made the reader open the file again before the first
                // record: its header is the one.
                header = Arc::clone(h);
            }
            // Aux data is checked as samtools checks it before printing a record: a record
            // whose tags cannot be read ends the query with an error naming it.
            record.check_aux()?;
            batch.push(record.to_owned_record());
            if sizer.full(batch.len()) {
                sizer.next_batch();
                let records = std::mem::take(&mut batch);
                if !hand.give(Records {
                    header: Arc::clone(&header),
                    records,
                }) {
                    gone = true;
                    return Ok(false);
                }
            }
            Ok(true)
        });
        if result.is_ok() {
            if !gone && !batch.is_empty() {
                hand.give(Records {
                    header,
                    records: batch,
                });
            }
            shared.give_back(reader);
        }
        result
    })
}

/// The records of `scope` as Arrow record batches of up to `rows` rows, laid out on `threads`
/// worker threads (at least one) while as many more inflate blocks or decode containers and the
/// query's own thread walks the records ([`crate::arrow::workers`]).
pub fn arrow(
    shared: Arc<Shared>,
    scope: Scope,
    layout: Arc<Layout>,
    rows: usize,
    threads: usize,
) -> Result<Producer<RecordBatch>, Error> {
    let mut reader = shared.lend()?;
    reader.use_threads(threads);
    let workers = threads.max(1);
    Producer::spawn("hts-arrow", move |hand| {
        // Aux data is read (and so checked, as samtools checks it) only for tag columns.
        let tags = layout.has_tags();
        workers::run(&layout, rows, workers, hand, |sink| {
            reader.run(&scope, &mut |_, record| {
                if tags {
                    record.check_aux()?;
                }
                Ok(sink.push(record))
            })
        })?;
        shared.give_back(reader);
        Ok(())
    })
}

/// Which records `count` counts (pysam's `read_callback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Every record (`"nofilter"`).
    All,
    /// Records neither unmapped, secondary, QC-failed nor duplicates (`"all"`).
    Good,
}

/// How many records of `scope` pass `filter`, counted on the calling thread.
pub fn count(shared: &Shared, scope: &Scope, filter: Filter) -> Result<u64, Error> {
    let mut reader = shared.lend()?;
    let mut n = 0u64;
    reader.run(scope, &mut |_, record| {
        let bad = record.flags().bits() & (0x4 | 0x100 | 0x200 | 0x400) != 0;
        if filter == Filter::All || !bad {
            n += 1;
        }
        // samtools view -c counts a record whose aux data is corrupt: not checked here.
        Ok(true)
    })?;
    shared.give_back(reader);
    Ok(n)
}

/// The lines of a tabix query, in batches, read on a thread of their own.
pub fn lines(
    readers: Arc<Lender<Variants>>,
    target: ::region::Region,
) -> Result<Producer<Vec<String>>, Error> {
    let mut reader = readers.lend()?;
    Producer::spawn("hts-lines", move |hand| {
        let mut sizer = Sizer::default();
        let mut batch = Vec::with_capacity(Sizer::FIRST);
        let mut gone = false;
        reader.run(target, &mut |line| {
            batch.push(String::from_utf8_lossy(line).into_owned());
            if sizer.full(batch.len()) {
                sizer.next_batch();
                if !hand.give(std::mem::take(&mut batch)) {
                    gone = true;
                    return false;
                }
            }
            true
        })?;
        if !gone && !batch.is_empty() {
            hand.give(batch);
        }
        readers.give_back(reader);
        Ok(())
    })
}
