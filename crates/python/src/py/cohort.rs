//! `hts.Cohort`: the same regions from many BAM and CRAM files (a manifest's samples) in one
//! process, every file on one shared client, `jobs` files at once, without the GIL; counts per
//! sample, or every sample's records as one Arrow stream with a `sample` column first.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeWarning, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyString};

use super::arrow_stream::{stream_capsule, Batches};
use super::HtsError;
use crate::cohort::{self, Columns, Report};
use crate::producer::Producer;

create_exception!(
    _hts,
    CohortError,
    HtsError,
    "Samples of a cohort failed (the others completed): the message names each failed sample \
     and why; `Cohort.failed` holds the same as a dict."
);

/// The same regions from every sample of a cohort: `Cohort(manifest, regions=None, *,
/// jobs=64, fetchers=128, reference_filename=None, threads=0, strict=True, **transport)`.
#[pyclass(module = "hts._hts", name = "Cohort", frozen)]
pub struct Cohort {
    cohort: Arc<hts::cohort::Cohort>,
    strict: bool,
    report: Arc<Mutex<Report>>,
}

fn lock(report: &Mutex<Report>) -> std::sync::MutexGuard<'_, Report> {
    report.lock().unwrap_or_else(|p| p.into_inner())
}

/// The samples of `manifest`: a path (str or path-like) to a manifest file, or a sequence of
/// `(sample, file[, index])` tuples.
fn samples(manifest: &Bound<'_, PyAny>) -> PyResult<Vec<hts::cohort::Sample>> {
    if manifest.cast::<PyString>().is_ok() || manifest.hasattr("__fspath__")? {
        let path: PathBuf = manifest.extract()?;
        let path = path.to_string_lossy().into_owned();
        return hts::cohort::read_manifest(&path).map_err(|e| PyValueError::new_err(e.to_string()));
    }
    let mut out = Vec::new();
    for item in manifest.try_iter()? {
        let item = item?;
        let row: Vec<String> = item.extract().map_err(|_| {
            PyTypeError::new_err("a cohort's sample is a (sample, file[, index]) tuple")
        })?;
        let (name, file, index) = match row.as_slice() {
            [name, file] => (name, file, None),
            [name, file, index] => (name, file, Some(index.clone())),
            _ => {
                return Err(PyValueError::new_err(
                    "a cohort's sample is a (sample, file[, index]) tuple",
                ))
            }
        };
        out.push(hts::cohort::Sample {
            name: name.clone(),
            file: file.clone(),
            index,
        });
    }
    cohort::check_samples(&out)?;
    Ok(out)
}

/// Warns (`RuntimeWarning`) about each failed sample.
fn warn_failed(py: Python<'_>, report: &Report) -> PyResult<()> {
    let category = py.get_type::<PyRuntimeWarning>();
    for (_, name, message) in &report.failed {
        let text = std::ffi::CString::new(format!("hts.Cohort: sample {name}: {message}"))
            .unwrap_or_default();
        PyErr::warn(py, &category, &text, 1)?;
    }
    Ok(())
}

#[pymethods]
impl Cohort {
    #[new]
    #[pyo3(signature = (manifest, regions = None, *, jobs = None, fetchers = None,
        reference_filename = None, threads = 0, strict = true, **transport))]
    fn new(
        manifest: &Bound<'_, PyAny>,
        regions: Option<&Bound<'_, PyAny>>,
        jobs: Option<usize>,
        fetchers: Option<usize>,
        reference_filename: Option<String>,
        threads: usize,
        strict: bool,
        transport: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Cohort> {
        let samples = samples(manifest)?;
        let regions: Vec<String> = match regions {
            None => Vec::new(),
            Some(r) if r.is_none() => Vec::new(),
            Some(r) => match r.cast::<PyString>() {
                Ok(s) => vec![s.to_string()],
                Err(_) => r.extract().map_err(|_| {
                    PyTypeError::new_err("regions: a list of region strings (samtools' syntax)")
                })?,
            },
        };
        let mut open = hfile::OpenOptions::default();
        let cache = super::options::transport(transport, &mut open)?;
        let client = hfile::Client::new(hfile::ClientOptions {
            max_in_flight: fetchers.unwrap_or(hts::cohort::DEFAULT_IN_FLIGHT).max(1),
            transport: open,
            ..hfile::ClientOptions::default()
        });
        let mut options = hts::Options::new().threads(threads).no_cache(!cache);
        if let Some(reference) = reference_filename {
            options = options.reference(reference);
        }
        let cohort = hts::cohort::Cohort::new(samples, regions)
            .jobs(jobs.unwrap_or(hts::cohort::DEFAULT_JOBS))
            .client(client)
            .options(options);
        Ok(Cohort {
            cohort: Arc::new(cohort),
            strict,
            report: Arc::default(),
        })
    }

    /// The samples' names, in manifest order.
    #[getter]
    fn samples(&self) -> Vec<String> {
        self.cohort
            .samples()
            .iter()
            .map(|s| s.name.clone())
            .collect()
    }

    fn __len__(&self) -> usize {
        self.cohort.samples().len()
    }

    /// `{sample: message}` of the samples that failed in the last run, in manifest order.
    #[getter]
    fn failed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (_, name, message) in &lock(&self.report).failed {
            dict.set_item(name, message)?;
        }
        Ok(dict)
    }

    /// The last run's warnings (regions a file's header does not know, skipped as samtools
    /// skips them), each starting `[sample]`.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        lock(&self.report).warnings.clone()
    }

    /// `{sample: count}` in manifest order: every record the regions give in each file, as
    /// `hts view -c --manifest` counts them. A failed sample is left out, warned about and
    /// kept in `failed`; with `strict` (the default) `CohortError` is raised after the others
    /// are counted.
    fn count<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let cohort = Arc::clone(&self.cohort);
        let (counts, report) = py.detach(move || cohort::count(&cohort));
        *lock(&self.report) = report.clone();
        let dict = PyDict::new(py);
        for (sample, n) in self.cohort.samples().iter().zip(counts) {
            if let Some(n) = n {
                dict.set_item(&sample.name, n)?;
            }
        }
        if let Some(summary) = report.summary(self.cohort.samples().len()) {
            if self.strict {
                return Err(CohortError::new_err(summary));
            }
            warn_failed(py, &report)?;
        }
        Ok(dict)
    }

    /// Every sample's records as one Arrow stream (`__arrow_c_stream__`): a `sample` column
    /// (a dictionary of the manifest's names), then the columns `AlignmentFile.to_arrow` gives
    /// for the same `columns`, `tags`, `coords`. Samples come about in the order they are
    /// ready, each sample's records together and in samtools' order. A failed sample is kept
    /// in `failed` (rows it gave before failing stay); with `strict` the stream ends with an
    /// `OSError` naming the failed samples once the others are read, else each is warned about.
    #[pyo3(signature = (columns = None, tags = None, coords = "11", batch_size = 65536))]
    fn to_arrow(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        tags: Option<&Bound<'_, PyAny>>,
        coords: &str,
        batch_size: usize,
    ) -> PyResult<CohortStream> {
        let tag_defs = super::arrow_stream::tag_columns(tags)?;
        let columns = Arc::new(Columns {
            columns,
            tags: tag_defs,
            coords: coords.to_string(),
        });
        let schema = columns.schema()?;
        let (cohort, report, strict) = (
            Arc::clone(&self.cohort),
            Arc::clone(&self.report),
            self.strict,
        );
        let start = {
            let report = Arc::clone(&report);
            move || {
                let (cohort, columns, report) = (
                    Arc::clone(&cohort),
                    Arc::clone(&columns),
                    Arc::clone(&report),
                );
                cohort::arrow(cohort, columns, batch_size, strict, report)
            }
        };
        let first = py.detach(&start)?;
        Ok(CohortStream {
            batches: Batches::new(schema, first, Box::new(start)),
            report,
            strict,
        })
    }

    fn __repr__(&self) -> String {
        format!("<hts.Cohort ({} samples)>", self.cohort.samples().len())
    }
}

/// A cohort's records as an Arrow stream (`Cohort.to_arrow`): pass it to `pyarrow.table(...)`,
/// `polars.from_arrow(...)`, DuckDB. The run starts at once; a consumer that asks for the
/// stream again gets the cohort run again.
#[pyclass(module = "hts._hts", name = "CohortStream", frozen)]
pub struct CohortStream {
    batches: Batches,
    report: Arc<Mutex<Report>>,
    strict: bool,
}

/// The batches of one run, read as the consumer asks for them.
struct BatchReader {
    schema: SchemaRef,
    producer: Producer<RecordBatch>,
    report: Arc<Mutex<Report>>,
    strict: bool,
}

impl Iterator for BatchReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.producer.next() {
            Some(Ok(batch)) => Some(Ok(batch)),
            // An I/O error (EIO across the C interface): pyarrow raises it as an OSError.
            Some(Err(e)) => {
                let message = e.to_string();
                Some(Err(ArrowError::IoError(
                    message.clone(),
                    std::io::Error::other(message),
                )))
            }
            None => {
                if !self.strict {
                    let report = lock(&self.report).clone();
                    if !report.failed.is_empty() {
                        // The consumer may read without the GIL: take it for the warnings.
                        // A warning turned into an error cannot be raised from here: the
                        // failures stay in `Cohort.failed`.
                        Python::attach(|py| {
                            let _ = warn_failed(py, &report);
                        });
                    }
                }
                None
            }
        }
    }
}

impl RecordBatchReader for BatchReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

#[pymethods]
impl CohortStream {
    /// The Arrow C stream of the batches (the Arrow PyCapsule interface). `requested_schema`
    /// is not applied: the stream has its own.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = BatchReader {
            schema: self.batches.schema(),
            producer: self.batches.producer(py)?,
            report: Arc::clone(&self.report),
            strict: self.strict,
        };
        stream_capsule(py, reader)
    }

    /// The schema (the Arrow PyCapsule interface).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        self.batches.schema_capsule(py)
    }

    /// The column names.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.batches.column_names()
    }
}
