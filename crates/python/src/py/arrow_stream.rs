//! Arrow record batches handed to Python through the Arrow PyCapsule interface: an object with
//! `__arrow_c_stream__`, which `pyarrow.table`, `polars.from_arrow`, pandas and DuckDB take
//! without copying.

use std::sync::Mutex;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::producer::Producer;
use crate::Error;

/// The batches of one query, read as the consumer asks for them.
struct BatchReader {
    schema: SchemaRef,
    producer: Producer<RecordBatch>,
}

impl Iterator for BatchReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        // The consumer (pyarrow, polars) reads with the GIL released; the batches are built on
        // the query's own thread.
        self.producer
            .next()
            .map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for BatchReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// Starts the query again, for a consumer that reads the stream more than once.
pub type Restart = Box<dyn Fn() -> Result<Producer<RecordBatch>, Error> + Send + Sync>;

/// What a stream object holds: its schema, the run started with it, and how to run it again.
/// [`ArrowStream`] and the cohort's stream are each one of these.
pub struct Batches {
    schema: SchemaRef,
    first: Mutex<Option<Producer<RecordBatch>>>,
    restart: Restart,
}

impl Batches {
    pub fn new(schema: SchemaRef, first: Producer<RecordBatch>, restart: Restart) -> Batches {
        Batches {
            schema,
            first: Mutex::new(Some(first)),
            restart,
        }
    }

    /// The schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The batches to hand out next: the run started with the stream, else a new run (for a
    /// consumer that reads the stream more than once).
    pub fn producer(&self, py: Python<'_>) -> PyResult<Producer<RecordBatch>> {
        let first = self.first.lock().unwrap_or_else(|p| p.into_inner()).take();
        match first {
            Some(producer) => Ok(producer),
            None => Ok(py.detach(|| (self.restart)())?),
        }
    }

    /// The schema, in a capsule named `arrow_schema` (the Arrow PyCapsule interface).
    pub fn schema_capsule<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = FFI_ArrowSchema::try_from(self.schema.as_ref())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        PyCapsule::new_with_value(py, schema, c"arrow_schema")
    }

    /// The column names.
    pub fn column_names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }
}

/// `reader`'s batches as an Arrow C stream, in a capsule named `arrow_array_stream`.
pub fn stream_capsule<'py>(
    py: Python<'py>,
    reader: impl RecordBatchReader + Send + 'static,
) -> PyResult<Bound<'py, PyCapsule>> {
    let stream = FFI_ArrowArrayStream::new(Box::new(reader));
    PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
}

/// The records of a query as an Arrow stream (`to_arrow`): pass it to `pyarrow.table(...)`,
/// `polars.DataFrame(...)`, `pyarrow.RecordBatchReader.from_stream(...)`, DuckDB. The query
/// starts at once; a consumer that asks for the stream again (DuckDB reads the schema, then
/// scans) gets the query run again.
#[pyclass(module = "hts._hts", name = "ArrowStream", frozen)]
pub struct ArrowStream(Batches);

impl ArrowStream {
    pub fn new(schema: SchemaRef, first: Producer<RecordBatch>, restart: Restart) -> ArrowStream {
        ArrowStream(Batches::new(schema, first, restart))
    }
}

#[pymethods]
impl ArrowStream {
    /// The Arrow C stream of the batches, in a capsule named `arrow_array_stream` (the Arrow
    /// PyCapsule interface). `requested_schema` is not applied: the stream has its own.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = BatchReader {
            schema: self.0.schema(),
            producer: self.0.producer(py)?,
        };
        stream_capsule(py, reader)
    }

    /// The schema, in a capsule named `arrow_schema` (the Arrow PyCapsule interface).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        self.0.schema_capsule(py)
    }

    /// The column names.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.0.column_names()
    }
}

/// `to_arrow`'s `tags`: each a tag name (its type read from the records) or a `(name, type)`
/// pair.
pub fn tag_columns(tags: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, Option<String>)>> {
    let mut defs = Vec::new();
    if let Some(tags) = tags {
        for item in tags.try_iter()? {
            let item = item?;
            if let Ok(name) = item.extract::<String>() {
                defs.push((name, None));
            } else {
                let (name, ty): (String, String) = item.extract()?;
                defs.push((name, Some(ty)));
            }
        }
    }
    Ok(defs)
}
