//! The native module `hts._hts`: the classes and exceptions the Python package `hts`
//! re-exports (`python/hts/__init__.py`).

mod alignment_file;
mod arrow_stream;
mod cohort;
mod header;
mod iterator;
mod options;
mod segment;
mod tabix_file;

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use crate::Error;

create_exception!(
    _hts,
    HtsError,
    PyOSError,
    "A file, its index or the transport failed: the message is the one line the hts command \
     line prints, naming the file (a URL without its query string) and the byte."
);

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Read(m) => HtsError::new_err(m),
            Error::Argument(m) => PyValueError::new_err(m),
            Error::Closed => PyValueError::new_err("I/O operation on closed file"),
        }
    }
}

/// Stops every remote request still running, so that no thread is inside libcurl or OpenSSL
/// when the interpreter exits (the package registers it with `atexit`).
#[pyfunction]
fn _shutdown(py: Python<'_>) {
    py.detach(|| hfile::shutdown(std::time::Duration::from_secs(2)));
}

/// The native half of the `hts` package.
#[pymodule]
fn _hts(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("HtsError", m.py().get_type::<HtsError>())?;
    m.add_class::<alignment_file::AlignmentFile>()?;
    m.add_class::<header::AlignmentHeader>()?;
    m.add_class::<segment::AlignedSegment>()?;
    m.add_class::<iterator::AlignmentIterator>()?;
    m.add_class::<arrow_stream::ArrowStream>()?;
    m.add_class::<tabix_file::TabixFile>()?;
    m.add_class::<cohort::Cohort>()?;
    m.add_class::<cohort::CohortStream>()?;
    m.add("CohortError", m.py().get_type::<cohort::CohortError>())?;
    m.add_class::<tabix_file::TabixIterator>()?;
    m.add_function(wrap_pyfunction!(_shutdown, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
