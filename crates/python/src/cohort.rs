//! The cohort query of the Python package (`hts.Cohort`): the same regions from many BAM and
//! CRAM files through the facade's cohort engine ([`hts::cohort`]: one shared client, `jobs`
//! files at once, a failing file reported while the others go on), as counts or as one Arrow
//! stream whose first column names the sample.
//!
//! The Arrow stream is built on a thread of its own ([`Producer`]) which runs the cohort; each
//! file's rows are built by the existing batch builder ([`Layout`], with that file's header for
//! the reference names) and the `sample` column is put beside its columns. A sample's batches
//! go out together: one sample at a time holds the turn (`Turn`) and hands its batches to the
//! bounded channel; the others, reading meanwhile, keep at most [`PENDING`] batches each and
//! then wait for the turn. Memory is so bounded by the files under way, and samples come in
//! about the order they are ready, each one's records contiguous and in samtools' order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use arrow_array::{ArrayRef, DictionaryArray, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use bam::Header;
use hts::cohort::{Cohort, Done, Sample};

use crate::arrow::Layout;
use crate::producer::{Hand, Producer};
use crate::Error;

/// Batches a sample waiting for its turn may hold before it stops reading.
pub const PENDING: usize = 2;

/// The columns of a cohort table after `sample`: as `AlignmentFile.to_arrow` takes them.
#[derive(Debug, Clone)]
pub struct Columns {
    /// oxbow's names (`None`: all of them).
    pub columns: Option<Vec<String>>,
    /// Tag columns: a name and, optionally, its type.
    pub tags: Vec<(String, Option<String>)>,
    /// `"11"` (1-based positions) or `"01"`.
    pub coords: String,
}

impl Columns {
    fn layout(&self, header: &Header) -> Result<Layout, Error> {
        Layout::new(self.columns.as_deref(), &self.tags, &self.coords, header)
    }

    /// The schema of every batch: `sample` (a dictionary of the samples' names), then the
    /// columns `AlignmentFile.to_arrow` gives. Errors are the arguments' (an unknown column).
    pub fn schema(&self) -> Result<SchemaRef, Error> {
        // The schema does not depend on the header: the reference names are a dictionary's
        // values, which each batch carries.
        let empty = Header::from_parts(Vec::new(), Vec::new())
            .map_err(|e| Error::Argument(format!("cannot make an empty header: {e}")))?;
        let inner = self.layout(&empty)?.schema();
        let mut fields = vec![Arc::new(Field::new("sample", sample_type(), false))];
        fields.extend(inner.fields().iter().cloned());
        Ok(Arc::new(Schema::new(fields)))
    }
}

fn sample_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// What a cohort run came to besides its results: the samples that failed and the warnings.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// `(index, sample, message)` of each failed sample, in manifest order once the run ends.
    pub failed: Vec<(usize, String, String)>,
    /// Warnings (regions a file's header does not know), each prefixed `[sample]`.
    pub warnings: Vec<String>,
}

impl Report {
    fn note<T, E: std::fmt::Display>(&mut self, done: &Done<T, E>) {
        let name = &done.sample.name;
        self.warnings
            .extend(done.warnings.iter().map(|w| format!("[{name}] {w}")));
        if let Err(e) = &done.result {
            self.failed.push((done.index, name.clone(), e.to_string()));
            self.failed.sort_by_key(|f| f.0);
        }
    }

    /// One line naming every failed sample and why, or `None` when none failed.
    pub fn summary(&self, samples: usize) -> Option<String> {
        if self.failed.is_empty() {
            return None;
        }
        let each: Vec<String> = self
            .failed
            .iter()
            .map(|(_, name, message)| format!("{name}: {message}"))
            .collect();
        Some(format!(
            "{} of {samples} samples failed: {}",
            self.failed.len(),
            each.join("; ")
        ))
    }
}

/// Checks a list of samples as a manifest's are checked: names not empty and unique.
pub fn check_samples(samples: &[Sample]) -> Result<(), Error> {
    let mut seen = std::collections::HashSet::new();
    for s in samples {
        if s.name.is_empty() {
            return Err(Error::Argument("a sample's name is empty".into()));
        }
        if !seen.insert(s.name.as_str()) {
            return Err(Error::Argument(format!(
                "sample '{}' is listed twice",
                s.name
            )));
        }
    }
    Ok(())
}

/// Every sample's count of records (`hts view -c --manifest`: every record the regions give,
/// no filter), in manifest order, `None` for a sample that failed; and the run's report.
pub fn count(cohort: &Cohort) -> (Vec<Option<u64>>, Report) {
    let mut counts = vec![None; cohort.samples().len()];
    let mut report = Report::default();
    cohort.run(
        |_, _, records| records.count().map_err(Error::from),
        |done: Done<u64, Error>| {
            report.note(&done);
            if let Ok(n) = done.result {
                counts[done.index] = Some(n);
            }
        },
    );
    (counts, report)
}

/// Every sample's records as Arrow record batches of up to `rows` rows with a `sample` column
/// first, built on a thread of its own. The run's report is kept in `report` as samples
/// complete; with `strict`, the stream ends with an error naming the failed samples.
pub fn arrow(
    cohort: Arc<Cohort>,
    columns: Arc<Columns>,
    rows: usize,
    strict: bool,
    report: Arc<Mutex<Report>>,
) -> Result<Producer<RecordBatch>, Error> {
    let rows = rows.max(1);
    let schema = columns.schema()?;
    let names: ArrayRef = Arc::new(StringArray::from_iter_values(
        cohort.samples().iter().map(|s| s.name.as_str()),
    ));
    *lock(&report) = Report::default();
    Producer::spawn("hts-cohort", move |hand| {
        let baton = Baton::default();
        let stop = AtomicBool::new(false);
        let work = |sample: &Sample, _: &Header, records: &mut hts::alignment::Records<'_>| {
            let key = index_of(&cohort, sample);
            let mut turn = Turn {
                baton: &baton,
                hand,
                stop: &stop,
                holding: false,
                pending: Vec::new(),
            };
            let with_sample = |batch: RecordBatch| -> Result<RecordBatch, Error> {
                let keys = Int32Array::from(vec![key; batch.num_rows()]);
                let column = DictionaryArray::try_new(keys, Arc::clone(&names))
                    .map_err(|e| Error::Read(format!("cannot make an Arrow batch: {e}")))?;
                let mut arrays: Vec<ArrayRef> = vec![Arc::new(column)];
                arrays.extend(batch.columns().iter().cloned());
                RecordBatch::try_new(Arc::clone(&schema), arrays)
                    .map_err(|e| Error::Read(format!("cannot make an Arrow batch: {e}")))
            };
            // The query's header: a stale cached one was replaced when the file was opened
            // again.
            let layout = Arc::new(columns.layout(records.header())?);
            let tags = layout.has_tags();
            let mut batch = layout.batch();
            loop {
                let fault = match records.next_record_ref()? {
                    None => break,
                    // Aux data is checked, as samtools checks it, only for tag columns.
                    Some(record) => match tags.then(|| record.check_aux()) {
                        Some(Err(kind)) => Some(kind),
                        _ => {
                            batch.push(&record)?;
                            None
                        }
                    },
                };
                if let Some(kind) = fault {
                    return Err(Error::from(records.record_error(kind)));
                }
                if batch.is_full(rows) && !turn.give(with_sample(batch.finish()?)?) {
                    return Ok(());
                }
            }
            if !batch.is_empty() && !turn.give(with_sample(batch.finish()?)?) {
                return Ok(());
            }
            turn.finish();
            Ok(())
        };
        cohort.run_until(&stop, work, |done: Done<(), Error>| {
            lock(&report).note(&done)
        });
        match lock(&report).summary(cohort.samples().len()) {
            Some(summary) if strict && !stop.load(Ordering::Relaxed) => Err(Error::Read(summary)),
            _ => Ok(()),
        }
    })
}

/// The sample's place in the manifest (the key of its `sample` value).
fn index_of(cohort: &Cohort, sample: &Sample) -> i32 {
    let samples = cohort.samples();
    let at = samples
        .iter()
        .position(|s| std::ptr::eq(s, sample))
        .or_else(|| samples.iter().position(|s| s.name == sample.name))
        .unwrap_or(0);
    i32::try_from(at).unwrap_or(i32::MAX)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Which sample may hand batches over now.
#[derive(Default)]
struct Baton {
    held: Mutex<bool>,
    freed: Condvar,
}

/// One sample's way to the channel: its batches go out only while it holds the baton.
struct Turn<'a> {
    baton: &'a Baton,
    hand: &'a Hand<RecordBatch>,
    stop: &'a AtomicBool,
    holding: bool,
    pending: Vec<RecordBatch>,
}

impl Turn<'_> {
    /// Hands `batch` over, or keeps it while another sample has the turn (waiting for the turn
    /// once [`PENDING`] are kept); `false` when the consumer is gone.
    fn give(&mut self, batch: RecordBatch) -> bool {
        if !self.holding {
            let held = lock(&self.baton.held);
            if *held && self.pending.len() < PENDING {
                self.pending.push(batch);
                return !self.stop.load(Ordering::Relaxed);
            }
            if !self.take_turn(held) {
                return false;
            }
        }
        self.pending.push(batch);
        self.flush()
    }

    /// Waits for the turn (`held` locked); `false` when the consumer is gone.
    fn take_turn(&mut self, mut held: MutexGuard<'_, bool>) -> bool {
        while *held && !self.stop.load(Ordering::Relaxed) {
            held = self
                .baton
                .freed
                .wait(held)
                .unwrap_or_else(|p| p.into_inner());
        }
        if self.stop.load(Ordering::Relaxed) {
            return false;
        }
        *held = true;
        self.holding = true;
        true
    }

    fn flush(&mut self) -> bool {
        for batch in self.pending.drain(..) {
            if !self.hand.give(batch) {
                self.stop.store(true, Ordering::Relaxed);
                return false;
            }
        }
        true
    }

    /// Hands over what is kept, waiting for the turn if need be.
    fn finish(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        if !self.holding && !self.take_turn(lock(&self.baton.held)) {
            return;
        }
        self.flush();
    }
}

impl Drop for Turn<'_> {
    /// Gives the turn up (a failed sample's kept batches are dropped with it).
    fn drop(&mut self) {
        if self.holding {
            *lock(&self.baton.held) = false;
            self.baton.freed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    fn cohort(names: &[&str], jobs: usize) -> Cohort {
        let rand = testkit::workspace_root().join("fixtures/conformance/data/rand.bam");
        let samples = names
            .iter()
            .map(|name| Sample {
                name: name.to_string(),
                file: rand.display().to_string(),
                index: None,
            })
            .collect();
        Cohort::new(
            samples,
            vec!["chr1:10000-10500".into(), "chr2:5000-5400".into()],
        )
        .jobs(jobs)
    }

    #[test]
    fn each_samples_batches_come_together() {
        let names = ["a", "b", "c", "d", "e"];
        let (counts, report) = count(&cohort(&names, 2));
        assert!(report.failed.is_empty());
        let n = counts[0].unwrap();
        assert!(n > 0 && counts.iter().all(|c| *c == Some(n)));
        let columns = Arc::new(Columns {
            columns: Some(vec!["pos".into()]),
            tags: Vec::new(),
            coords: "11".into(),
        });
        let report = Arc::new(Mutex::new(Report::default()));
        let cohort = Arc::new(cohort(&names, 4));
        let producer = arrow(cohort, columns, 3, true, Arc::clone(&report)).unwrap();
        let mut keys = Vec::new();
        while let Some(batch) = producer.next() {
            let batch = batch.unwrap();
            assert!(batch.num_rows() <= 3);
            let sample = batch.column(0);
            let sample = sample
                .as_any()
                .downcast_ref::<DictionaryArray<arrow_array::types::Int32Type>>()
                .unwrap();
            keys.extend(sample.keys().values().iter().copied());
        }
        assert_eq!(keys.len() as u64, n * names.len() as u64);
        // Every sample's rows in one run.
        let mut runs: Vec<i32> = keys.clone();
        runs.dedup();
        runs.sort();
        assert_eq!(runs, vec![0, 1, 2, 3, 4]);
        assert!(lock(&report).failed.is_empty());
    }

    #[test]
    fn a_missing_file_is_reported_and_the_others_complete() {
        let mut cohort = cohort(&["a", "b"], 2);
        let mut samples = cohort.samples().to_vec();
        samples.insert(
            1,
            Sample {
                name: "gone".into(),
                file: "/nonexistent/x.bam".into(),
                index: None,
            },
        );
        cohort = Cohort::new(samples, vec!["chr1:10000-10500".into()]);
        let (counts, report) = count(&cohort);
        assert!(counts[0].is_some() && counts[1].is_none() && counts[2].is_some());
        let summary = report.summary(3).unwrap();
        assert!(
            summary.starts_with("1 of 3 samples failed: gone: "),
            "{summary}"
        );
        assert!(summary.contains("/nonexistent/x.bam"), "{summary}");
    }
}
