//! `AlignedSegment`: one record with pysam's names for what users read. The record owns its
//! bytes (decoded on the producing thread); fields are read from them on each access, as
//! pysam reads its `bam1_t`.

use std::sync::Arc;

use bam::{Header, Record};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use super::HtsError;
use crate::tag::{self, Elements, Value};

/// One alignment record (pysam's `AlignedSegment`, read-only). The `is_*` properties of the
/// flag are added by the package's Python half (`hts/__init__.py`), from one table.
#[pyclass(module = "hts._hts", name = "AlignedSegment", frozen)]
pub struct AlignedSegment {
    record: Record,
    header: Arc<Header>,
}

impl AlignedSegment {
    pub fn new(record: Record, header: Arc<Header>) -> AlignedSegment {
        AlignedSegment { record, header }
    }

    fn ref_name(&self, id: i32) -> Option<String> {
        let r = self.header.refs().get(usize::try_from(id).ok()?)?;
        Some(String::from_utf8_lossy(&r.name).into_owned())
    }

    fn flag_set(&self, bit: u16) -> bool {
        self.record.flags().bits() & bit != 0
    }
}

/// `array.array(typecode, values)`.
fn array<'py, T: IntoPyObject<'py>>(
    py: Python<'py>,
    typecode: &str,
    values: impl IntoIterator<Item = T>,
) -> PyResult<Bound<'py, PyAny>> {
    let list = PyList::new(py, values)?;
    py.import("array")?
        .getattr("array")?
        .call1((typecode, list))
}

/// A tag's value as pysam gives it: `A`, `Z`, `H` as `str`, integers as `int`, floats as
/// `float`, `B` arrays as `array.array` of the matching typecode.
fn value_to_py<'py>(py: Python<'py>, value: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Char(c) => char::from(*c).to_string().into_pyobject(py)?.into_any(),
        Value::Text(t) | Value::Hex(t) => String::from_utf8_lossy(t).into_pyobject(py)?.into_any(),
        Value::Int(i, _) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f64::from(*f).into_pyobject(py)?.into_any(),
        Value::Double(d) => d.into_pyobject(py)?.into_any(),
        Value::Array(sub, Elements::Ints(v)) => {
            let typecode = match sub {
                b'c' => "b",
                b'C' => "B",
                b's' => "h",
                b'S' => "H",
                b'i' => "i",
                _ => "I",
            };
            array(py, typecode, v.iter().copied())?
        }
        Value::Array(_, Elements::Floats(v)) => array(py, "f", v.iter().map(|f| f64::from(*f)))?,
    })
}

/// The type letter pysam's `with_value_type=True` gives.
fn value_type(value: &Value<'_>) -> String {
    let letter = match value {
        Value::Char(_) => b'A',
        Value::Text(_) => b'Z',
        Value::Hex(_) => b'H',
        Value::Int(_, t) => *t,
        Value::Float(_) => b'f',
        Value::Double(_) => b'd',
        Value::Array(_, _) => b'B',
    };
    char::from(letter).to_string()
}

fn tag_bytes(tag: &str) -> PyResult<[u8; 2]> {
    match tag.as_bytes() {
        [a, b] => Ok([*a, *b]),
        _ => Err(PyValueError::new_err(format!(
            "a tag is two characters, not '{tag}'"
        ))),
    }
}

#[pymethods]
impl AlignedSegment {
    /// The read name.
    #[getter]
    fn query_name(&self) -> Option<String> {
        Some(String::from_utf8_lossy(self.record.name()).into_owned())
    }

    /// FLAG.
    #[getter]
    fn flag(&self) -> u16 {
        self.record.flags().bits()
    }

    /// The reference's number (-1: none).
    #[getter]
    fn reference_id(&self) -> i32 {
        self.record.stored_coordinates().ref_id
    }

    /// The reference's name (None: none).
    #[getter]
    fn reference_name(&self) -> Option<String> {
        self.ref_name(self.record.stored_coordinates().ref_id)
    }

    /// The 0-based leftmost position (-1: none).
    #[getter]
    fn reference_start(&self) -> i32 {
        self.record.stored_coordinates().pos
    }

    /// The 0-based end, exclusive: None for an unmapped read or one without a CIGAR.
    #[getter]
    fn reference_end(&self) -> Option<i64> {
        if self.flag_set(0x4) || self.record.cigar().is_empty() {
            return None;
        }
        Some(self.record.stored_end_pos())
    }

    /// MAPQ.
    #[getter]
    fn mapping_quality(&self) -> u8 {
        self.record.mapq()
    }

    /// The CIGAR as text (None when there is none).
    #[getter]
    fn cigarstring(&self) -> Option<String> {
        let cigar = self.record.cigar();
        if cigar.is_empty() {
            return None;
        }
        let mut s = String::new();
        for op in cigar.iter() {
            s.push_str(&op.len().to_string());
            s.push(char::from(op.letter()));
        }
        Some(s)
    }

    /// The CIGAR as `(operation, length)` pairs, operations numbered as in BAM (None when
    /// there is none).
    #[getter]
    fn cigartuples(&self) -> Option<Vec<(u8, u32)>> {
        let cigar = self.record.cigar();
        if cigar.is_empty() {
            return None;
        }
        Some(cigar.iter().map(|op| (op.code(), op.len())).collect())
    }

    /// The bases (None when the record has none).
    #[getter]
    fn query_sequence(&self) -> Option<String> {
        if self.record.seq_len() == 0 {
            return None;
        }
        Some(String::from_utf8_lossy(&self.record.seq()).into_owned())
    }

    /// The base qualities as `array.array('B')` without the +33 (None when missing).
    #[getter]
    fn query_qualities<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let qual = self.record.qual();
        if qual.is_empty() || qual[0] == 0xff {
            return Ok(None);
        }
        let bytes = PyBytes::new(py, qual);
        let array = py.import("array")?.getattr("array")?.call1(("B", bytes))?;
        Ok(Some(array))
    }

    /// The number of bases (`l_seq`).
    #[getter]
    fn query_length(&self) -> usize {
        self.record.seq_len()
    }

    /// The mate's reference name (None: none).
    #[getter]
    fn next_reference_name(&self) -> Option<String> {
        self.ref_name(self.record.stored_coordinates().mate_ref_id)
    }

    /// The mate's reference number (-1: none).
    #[getter]
    fn next_reference_id(&self) -> i32 {
        self.record.stored_coordinates().mate_ref_id
    }

    /// The mate's 0-based position (-1: none).
    #[getter]
    fn next_reference_start(&self) -> i32 {
        self.record.stored_coordinates().mate_pos
    }

    /// TLEN.
    #[getter]
    fn template_length(&self) -> i32 {
        self.record.tlen()
    }

    /// Whether the record has the tag.
    fn has_tag(&self, tag: &str) -> PyResult<bool> {
        let tag = tag_bytes(tag)?;
        Ok(matches!(tag::find(self.record.aux(), tag), Ok(Some(_))))
    }

    /// The tag's value (with its type letter when `with_value_type`); KeyError when absent.
    #[pyo3(signature = (tag, with_value_type = false))]
    fn get_tag<'py>(
        &self,
        py: Python<'py>,
        tag: &str,
        with_value_type: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let key = tag_bytes(tag)?;
        let value = tag::find(self.record.aux(), key)
            .map_err(|at| self.corrupt_aux(at))?
            .ok_or_else(|| PyKeyError::new_err(format!("tag '{tag}' not present")))?;
        let v = value_to_py(py, &value)?;
        if with_value_type {
            Ok(PyTuple::new(py, [v, value_type(&value).into_pyobject(py)?.into_any()])?.into_any())
        } else {
            Ok(v)
        }
    }

    /// Every tag as `(tag, value)` pairs (or `(tag, value, type)`), in the record's order.
    #[pyo3(signature = (with_value_type = false))]
    fn get_tags<'py>(
        &self,
        py: Python<'py>,
        with_value_type: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for field in bam::aux::fields(self.record.aux()) {
            let field = field.map_err(|at| self.corrupt_aux(at))?;
            let Some(value) = Value::of(&field) else {
                continue;
            };
            let name = String::from_utf8_lossy(&field.tag).into_owned();
            let v = value_to_py(py, &value)?;
            if with_value_type {
                out.append((name, v, value_type(&value)))?;
            } else {
                out.append((name, v))?;
            }
        }
        Ok(out)
    }

    /// The SAM line `samtools view` prints for the record, without its line end.
    fn to_string(&self) -> PyResult<String> {
        let mut out = Vec::with_capacity(self.record.data().len() * 2);
        bam::write_sam(&self.record, &self.header, &mut out).map_err(|e| {
            HtsError::new_err(format!(
                "record {}: {e}",
                String::from_utf8_lossy(self.record.name())
            ))
        })?;
        if out.last() == Some(&b'\n') {
            out.pop();
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn __repr__(&self) -> PyResult<String> {
        self.to_string()
    }
}

impl AlignedSegment {
    fn corrupt_aux(&self, at: usize) -> PyErr {
        HtsError::new_err(format!(
            "record {}: corrupt aux data at byte {} of the record",
            String::from_utf8_lossy(self.record.name()),
            self.record.aux_offset() + at
        ))
    }
}
