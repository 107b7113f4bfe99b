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

/// The records of a query as an Arrow stream (`to_arrow`): pass it to `pyarrow.table(...)`,
/// `polars.DataFrame(...)`, `pyarrow.RecordBatchReader.from_stream(...)`, DuckDB. The query
/// starts at once; a consumer that asks for the stream again (DuckDB reads the schema, then
/// scans) gets the query run again.
#[pyclass(module = "hts._hts", name = "ArrowStream", frozen)]
pub struct ArrowStream {
    schema: SchemaRef,
    first: Mutex<Option<Producer<RecordBatch>>>,
    restart: Restart,
}

impl ArrowStream {
    pub fn new(schema: SchemaRef, first: Producer<RecordBatch>, restart: Restart) -> ArrowStream {
        ArrowStream {
            schema,
            first: Mutex::new(Some(first)),
            restart,
        }
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
        let first = self.first.lock().unwrap_or_else(|p| p.into_inner()).take();
        let producer = match first {
            Some(producer) => producer,
            None => py.detach(|| (self.restart)())?,
        };
        let reader = BatchReader {
            schema: self.schema.clone(),
            producer,
        };
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// The schema, in a capsule named `arrow_schema` (the Arrow PyCapsule interface).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = FFI_ArrowSchema::try_from(self.schema.as_ref())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        PyCapsule::new_with_value(py, schema, c"arrow_schema")
    }

    /// The column names.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }
}
