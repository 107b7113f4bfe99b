//! The iterator `fetch`, `fetch_many` and iteration return: records arrive in batches from the
//! query's thread; Python waits for a batch with the GIL released, then takes its records one
//! by one without crossing into the query again.

use pyo3::prelude::*;

use super::segment::AlignedSegment;
use crate::batches::Records;
use crate::producer::Producer;

/// An iterator over the records of one query (pysam's `IteratorRow`).
#[pyclass(module = "hts._hts", name = "AlignmentIterator")]
pub struct AlignmentIterator {
    producer: Option<Producer<Records>>,
    batch: Option<Records>,
    at: std::vec::IntoIter<bam::Record>,
}

impl AlignmentIterator {
    pub fn new(producer: Producer<Records>) -> AlignmentIterator {
        AlignmentIterator {
            producer: Some(producer),
            batch: None,
            at: Vec::new().into_iter(),
        }
    }
}

#[pymethods]
impl AlignmentIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<AlignedSegment>> {
        self.next_record(py)
    }
}

impl AlignmentIterator {
    /// The next record; `None` at the end.
    pub fn next_record(&mut self, py: Python<'_>) -> PyResult<Option<AlignedSegment>> {
        loop {
            if let (Some(record), Some(batch)) = (self.at.next(), &self.batch) {
                return Ok(Some(AlignedSegment::new(
                    record,
                    std::sync::Arc::clone(&batch.header),
                )));
            }
            let Some(producer) = &self.producer else {
                return Ok(None);
            };
            match py.detach(|| producer.next()) {
                Some(Ok(mut records)) => {
                    self.at = std::mem::take(&mut records.records).into_iter();
                    self.batch = Some(records);
                }
                Some(Err(e)) => {
                    self.producer = None;
                    return Err(e.into());
                }
                None => {
                    self.producer = None;
                    return Ok(None);
                }
            }
        }
    }
}
