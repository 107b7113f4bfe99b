//! `AlignmentHeader`: the names and lengths of the references, and the header text.

use std::sync::Arc;

use bam::Header;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The header of an alignment file (pysam's `AlignmentHeader`, read-only): `references`,
/// `lengths`, `str()` (the text as `samtools view -H` prints it) and `to_dict()`.
#[pyclass(module = "hts._hts", name = "AlignmentHeader", frozen)]
pub struct AlignmentHeader {
    pub(crate) header: Arc<Header>,
}

impl AlignmentHeader {
    pub fn new(header: Arc<Header>) -> AlignmentHeader {
        AlignmentHeader { header }
    }
}

/// The reference names, as pysam gives them.
pub fn names(header: &Header) -> Vec<String> {
    header
        .refs()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.name).into_owned())
        .collect()
}

#[pymethods]
impl AlignmentHeader {
    /// The reference names, in `refID` order.
    #[getter]
    fn references(&self) -> Vec<String> {
        names(&self.header)
    }

    /// The reference lengths, in `refID` order.
    #[getter]
    fn lengths(&self) -> Vec<u32> {
        self.header.refs().iter().map(|r| r.len).collect()
    }

    /// How many references the header holds.
    #[getter]
    fn nreferences(&self) -> usize {
        self.header.refs().len()
    }

    /// The `refID` of a reference name, -1 when unknown.
    fn get_tid(&self, reference: &str) -> i64 {
        self.header.tid(reference).map_or(-1, |t| t.get() as i64)
    }

    /// The name of reference `tid`.
    fn get_reference_name(&self, tid: i64) -> Option<String> {
        let r = self.header.refs().get(usize::try_from(tid).ok()?)?;
        Some(String::from_utf8_lossy(&r.name).into_owned())
    }

    /// The length of a reference, by name.
    fn get_reference_length(&self, reference: &str) -> PyResult<u32> {
        let tid = self.header.tid(reference).ok_or_else(|| {
            pyo3::exceptions::PyKeyError::new_err(format!("unknown reference {reference}"))
        })?;
        Ok(self.header.refs()[tid.get()].len)
    }

    /// The header as pysam's two-level dictionary: `HD` a dict; `SQ`, `RG`, `PG` (and any other
    /// record type) lists of dicts, `LN` an int; `CO` a list of strings. A `CL` field takes the
    /// rest of its line, tabs included, as pysam reads it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let text = String::from_utf8_lossy(&self.header.text_for_output()).into_owned();
        let result = PyDict::new(py);
        let append = |record: &str, item: Bound<'py, PyAny>| -> PyResult<()> {
            match result.get_item(record)? {
                Some(list) => list.cast::<PyList>()?.append(item),
                None => result.set_item(record, PyList::new(py, [item])?),
            }
        };
        for line in text.split('\n') {
            let line = line.trim_matches(|c| c == ' ' || c == '\0');
            if line.is_empty() {
                continue;
            }
            let rest = line.strip_prefix('@').ok_or_else(|| {
                PyValueError::new_err(format!("header line without '@': '{line}'"))
            })?;
            let fields: Vec<&str> = rest.split('\t').collect();
            let record = fields[0];
            if record == "CO" {
                append(record, fields[1..].join("\t").into_pyobject(py)?.into_any())?;
                continue;
            }
            let x = PyDict::new(py);
            for (i, field) in fields.iter().enumerate().skip(1) {
                let (key, value) = field
                    .split_once(':')
                    .ok_or_else(|| PyValueError::new_err("malformatted header: no ':' in field"))?;
                if key == "CL" {
                    let rest = fields[i..].join("\t");
                    let (key, value) = rest.split_once(':').unwrap_or((key, value));
                    x.set_item(key, value)?;
                    break;
                }
                if record == "SQ" && key == "LN" {
                    let n: i64 = value.parse().map_err(|_| {
                        PyValueError::new_err(format!("invalid LN in header: '{value}'"))
                    })?;
                    x.set_item(key, n)?;
                } else {
                    x.set_item(key, value)?;
                }
            }
            if record == "HD" {
                if result.contains(record)? {
                    return Err(PyValueError::new_err(
                        "multiple 'HD' lines are not permitted",
                    ));
                }
                result.set_item(record, x)?;
            } else {
                append(record, x.into_any())?;
            }
        }
        Ok(result)
    }

    fn __str__(&self) -> String {
        String::from_utf8_lossy(&self.header.text_for_output()).into_owned()
    }

    fn __len__(&self) -> usize {
        self.header.refs().len()
    }
}
