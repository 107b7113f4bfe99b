//! `TabixFile`: pysam's class for tabix-indexed text, lines as `str`.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::batches;
use crate::lending::Lender;
use crate::producer::Producer;
use crate::variants::{Fetch, Variants};
use crate::Error;

/// A bgzipped, tabix-indexed text file (VCF, BED, GFF, any tab-separated columns), local or
/// remote: `TabixFile(path_or_url, index=None, **transport)`.
#[pyclass(module = "hts._hts", name = "TabixFile", frozen)]
pub struct TabixFile {
    readers: Arc<Lender<Variants>>,
    contigs: Vec<String>,
    filename: String,
}

#[pymethods]
impl TabixFile {
    #[new]
    #[pyo3(signature = (filename, mode = "r", parser = None, index = None, encoding = "ascii",
        **transport))]
    fn new(
        py: Python<'_>,
        filename: String,
        mode: &str,
        parser: Option<Bound<'_, PyAny>>,
        index: Option<String>,
        encoding: &str,
        transport: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<TabixFile> {
        if mode != "r" {
            return Err(Error::Argument(format!("mode '{mode}': TabixFile only reads")).into());
        }
        if parser.is_some_and(|p| !p.is_none()) {
            return Err(pyo3::exceptions::PyNotImplementedError::new_err(
                "TabixFile(parser=...): lines are given as str",
            ));
        }
        let _ = encoding;
        let mut options = hfile::OpenOptions::default();
        // The tabix reader has no persistent cache yet: `cache` is accepted and ignored.
        let _cache = super::options::transport(transport, &mut options)?;
        let first = py.detach(|| Variants::open(&filename, index.as_deref(), &options))?;
        let contigs = first.contigs().to_vec();
        let (location, index_at) = (filename.clone(), index.clone());
        let reopen = move || Variants::open(&location, index_at.as_deref(), &options);
        Ok(TabixFile {
            readers: Arc::new(Lender::new(first, reopen)),
            contigs,
            filename,
        })
    }

    /// The sequence names of the index.
    #[getter]
    fn contigs(&self) -> Vec<String> {
        self.contigs.clone()
    }

    /// The path or URL as given.
    #[getter]
    fn filename(&self) -> &str {
        &self.filename
    }

    /// The header lines (those starting with the index's comment character).
    #[getter]
    fn header(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let readers = Arc::clone(&self.readers);
        let lines = py.detach(move || -> Result<Vec<Vec<u8>>, Error> {
            let mut reader = readers.lend()?;
            let lines = reader.header()?;
            readers.give_back(reader);
            Ok(lines)
        })?;
        Ok(lines
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect())
    }

    /// The lines overlapping `reference:start-end` (0-based, half-open) or `region` (tabix's
    /// syntax); neither: every line. An unknown sequence raises ValueError, as in pysam.
    #[pyo3(signature = (reference = None, start = None, end = None, region = None,
        parser = None, multiple_iterators = false))]
    fn fetch(
        &self,
        py: Python<'_>,
        reference: Option<String>,
        start: Option<i64>,
        end: Option<i64>,
        region: Option<String>,
        parser: Option<Bound<'_, PyAny>>,
        multiple_iterators: bool,
    ) -> PyResult<TabixIterator> {
        let _ = multiple_iterators;
        if parser.is_some_and(|p| !p.is_none()) {
            return Err(pyo3::exceptions::PyNotImplementedError::new_err(
                "fetch(parser=...): lines are given as str",
            ));
        }
        let fetch = Fetch {
            reference,
            start,
            end,
            region,
        };
        let readers = Arc::clone(&self.readers);
        let producer = py.detach(move || -> Result<Producer<Vec<String>>, Error> {
            let reader = readers.lend()?;
            let target = reader.target(&fetch);
            readers.give_back(reader);
            batches::lines(readers, target?)
        })?;
        Ok(TabixIterator {
            producer: Some(producer),
            at: Vec::new().into_iter(),
        })
    }

    /// Closes the file.
    fn close(&self) {
        self.readers.close();
    }

    /// Whether the file is closed.
    #[getter]
    fn closed(&self) -> bool {
        self.readers.is_closed()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, PyTuple>) -> bool {
        self.readers.close();
        false
    }
}

/// The lines of one `TabixFile.fetch`.
#[pyclass(module = "hts._hts", name = "TabixIterator")]
pub struct TabixIterator {
    producer: Option<Producer<Vec<String>>>,
    at: std::vec::IntoIter<String>,
}

#[pymethods]
impl TabixIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<String>> {
        loop {
            if let Some(line) = self.at.next() {
                return Ok(Some(line));
            }
            let Some(producer) = &self.producer else {
                return Ok(None);
            };
            match py.detach(|| producer.next()) {
                Some(Ok(lines)) => self.at = lines.into_iter(),
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
