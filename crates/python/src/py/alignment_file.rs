//! `AlignmentFile`: pysam's class for reading BAM and CRAM (told apart by content), local or
//! remote, with `fetch_many` and `to_arrow` beside pysam's methods.

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use super::arrow_stream::ArrowStream;
use super::header::{names, AlignmentHeader};
use super::iterator::AlignmentIterator;
use crate::alignments::{Options, Scope, Shared};
use crate::arrow::Layout;
use crate::batches::{self, Filter};
use crate::region::{self, FetchArgs, RegionSpec};
use crate::Error;

/// A BAM or CRAM file opened for reading: `AlignmentFile(path_or_url, mode="rb",
/// index_filename=None, reference_filename=None, threads=0, **transport)`.
#[pyclass(module = "hts._hts", name = "AlignmentFile", frozen)]
pub struct AlignmentFile {
    shared: Arc<Shared>,
    filename: String,
    threads: usize,
}

impl AlignmentFile {
    fn open_shared(&self) -> PyResult<&Arc<Shared>> {
        if self.shared.is_closed() {
            return Err(Error::Closed.into());
        }
        Ok(&self.shared)
    }

    fn records(&self, py: Python<'_>, scope: Scope) -> PyResult<AlignmentIterator> {
        let shared = Arc::clone(self.open_shared()?);
        let producer = py.detach(|| batches::records(shared, scope))?;
        Ok(AlignmentIterator::new(producer))
    }
}

/// The regions of `fetch_many` and `to_arrow`: one region string, or a sequence of region
/// strings and `(contig, start, stop)` tuples (`start`, `stop` optional).
fn region_specs(regions: &Bound<'_, PyAny>) -> PyResult<Vec<RegionSpec>> {
    if let Ok(s) = regions.cast::<PyString>() {
        return Ok(vec![RegionSpec::Text(s.to_string())]);
    }
    let mut out = Vec::new();
    for item in regions.try_iter()? {
        let item = item?;
        if let Ok(s) = item.cast::<PyString>() {
            out.push(RegionSpec::Text(s.to_string()));
        } else if let Ok(t) = item.cast::<PyTuple>() {
            let contig: String = t.get_item(0)?.extract()?;
            let bound = |i: usize| -> PyResult<Option<i64>> {
                match t.get_item(i) {
                    Ok(v) => v.extract(),
                    Err(_) => Ok(None),
                }
            };
            if t.len() > 3 {
                return Err(PyValueError::new_err(
                    "a region tuple is (contig, start, stop)",
                ));
            }
            out.push(RegionSpec::Bounds(contig, bound(1)?, bound(2)?));
        } else {
            return Err(PyTypeError::new_err(
                "a region is a string (samtools' syntax) or a (contig, start, stop) tuple",
            ));
        }
    }
    Ok(out)
}

#[pymethods]
impl AlignmentFile {
    #[new]
    #[pyo3(signature = (filepath_or_url = None, mode = "rb", index_filename = None,
        reference_filename = None, threads = 0, filename = None, **transport))]
    fn new(
        py: Python<'_>,
        filepath_or_url: Option<String>,
        mode: &str,
        index_filename: Option<String>,
        reference_filename: Option<String>,
        threads: usize,
        filename: Option<String>,
        transport: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<AlignmentFile> {
        let location = filepath_or_url
            .or(filename)
            .ok_or_else(|| PyTypeError::new_err("AlignmentFile needs a path or URL"))?;
        match mode {
            // BAM or CRAM is told by content, whatever the mode says.
            "r" | "rb" | "rc" => {}
            m if m.starts_with('w') || m.starts_with('a') => {
                return Err(PyValueError::new_err(format!(
                    "mode '{m}': hts reads alignment files, it does not write them"
                )))
            }
            m => return Err(PyValueError::new_err(format!("invalid mode '{m}'"))),
        }
        let mut options = Options {
            index: index_filename,
            reference: reference_filename,
            threads,
            ..Default::default()
        };
        options.cache = super::options::transport(transport, &mut options.transport)?;
        // Only `cache` given: each format keeps its own default transport.
        options.transport_given = transport.is_some_and(|kwargs| {
            kwargs
                .keys()
                .iter()
                .any(|k| k.extract::<String>().map_or(true, |k| k != "cache"))
        });
        let shared = py.detach(|| Shared::open(&location, &options))?;
        Ok(AlignmentFile {
            shared: Arc::new(shared),
            filename: location,
            threads,
        })
    }

    /// The header.
    #[getter]
    fn header(&self) -> AlignmentHeader {
        AlignmentHeader::new(Arc::clone(self.shared.header()))
    }

    /// The reference names.
    #[getter]
    fn references(&self) -> Vec<String> {
        names(self.shared.header())
    }

    /// The reference lengths.
    #[getter]
    fn lengths(&self) -> Vec<u32> {
        self.shared.header().refs().iter().map(|r| r.len).collect()
    }

    /// How many references the header holds.
    #[getter]
    fn nreferences(&self) -> usize {
        self.shared.header().refs().len()
    }

    /// The path or URL as given.
    #[getter]
    fn filename(&self) -> &str {
        &self.filename
    }

    /// Whether the file is closed.
    #[getter]
    fn closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// Whether the file is open.
    #[getter]
    fn is_open(&self) -> bool {
        !self.shared.is_closed()
    }

    /// The `refID` of a reference name, -1 when unknown.
    fn get_tid(&self, reference: &str) -> i64 {
        self.shared
            .header()
            .tid(reference)
            .map_or(-1, |t| t.get() as i64)
    }

    /// The name of reference `tid`.
    fn get_reference_name(&self, tid: i64) -> Option<String> {
        let r = self
            .shared
            .header()
            .refs()
            .get(usize::try_from(tid).ok()?)?;
        Some(String::from_utf8_lossy(&r.name).into_owned())
    }

    /// The records of a region, in file order (0-based, half-open `start`, `stop`; `region` in
    /// samtools' syntax). Without a region: every reference in turn, or with `until_eof=True`
    /// every record in file order, unmapped ones included.
    #[pyo3(signature = (contig = None, start = None, stop = None, region = None, tid = None,
        until_eof = false, multiple_iterators = true, reference = None, end = None))]
    fn fetch(
        &self,
        py: Python<'_>,
        contig: Option<String>,
        start: Option<i64>,
        stop: Option<i64>,
        region: Option<String>,
        tid: Option<i64>,
        until_eof: bool,
        multiple_iterators: bool,
        reference: Option<String>,
        end: Option<i64>,
    ) -> PyResult<AlignmentIterator> {
        // Every iterator has its own reader: pysam's multiple_iterators=True, always.
        let _ = multiple_iterators;
        let args = FetchArgs {
            contig: contig.or(reference),
            start,
            stop: stop.or(end),
            region,
            tid,
            until_eof,
        };
        let scope = region::scope(&args, self.open_shared()?.header())?;
        self.records(py, scope)
    }

    /// The records of many regions as one query (one plan: a remote file's spans are fetched
    /// together), region by region in the order given, as `samtools view FILE REGION...`
    /// prints them. Each region is a string in samtools' syntax or a `(contig, start, stop)`
    /// tuple.
    fn fetch_many(
        &self,
        py: Python<'_>,
        regions: &Bound<'_, PyAny>,
    ) -> PyResult<AlignmentIterator> {
        let specs = region_specs(regions)?;
        let targets = region::targets(&specs, self.open_shared()?.header())?;
        self.records(py, Scope::Targets(targets))
    }

    /// How many records `fetch` with the same arguments gives (`read_callback="all"`: not
    /// counting unmapped, secondary, QC-failed and duplicate reads; a callable: those it
    /// accepts). Counted with the GIL released, unless a callable decides.
    #[pyo3(signature = (contig = None, start = None, stop = None, region = None,
        until_eof = false, read_callback = None, reference = None, end = None))]
    fn count(
        &self,
        py: Python<'_>,
        contig: Option<String>,
        start: Option<i64>,
        stop: Option<i64>,
        region: Option<String>,
        until_eof: bool,
        read_callback: Option<Bound<'_, PyAny>>,
        reference: Option<String>,
        end: Option<i64>,
    ) -> PyResult<u64> {
        let args = FetchArgs {
            contig: contig.or(reference),
            start,
            stop: stop.or(end),
            region,
            tid: None,
            until_eof,
        };
        let shared = self.open_shared()?;
        let scope = region::scope(&args, shared.header())?;
        let filter = match &read_callback {
            None => Filter::All,
            Some(cb) if cb.is_callable() => {
                let mut n = 0;
                let mut records = self.records(py, scope)?;
                while let Some(record) = records.next_record(py)? {
                    if cb.call1((record,))?.is_truthy()? {
                        n += 1;
                    }
                }
                return Ok(n);
            }
            Some(cb) => match cb.extract::<String>()?.as_str() {
                "nofilter" => Filter::All,
                "all" => Filter::Good,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "read_callback '{other}': 'nofilter', 'all' or a callable"
                    )))
                }
            },
        };
        let shared = Arc::clone(shared);
        Ok(py.detach(|| batches::count(&shared, &scope, filter))?)
    }

    /// The records as an Arrow stream (`__arrow_c_stream__`): `f.to_arrow().read_all()`,
    /// `pyarrow.table(f.to_arrow())`, `polars.from_arrow(...)`. `regions`: None (every record,
    /// in file order), a region string or a sequence as `fetch_many` takes; `columns`: oxbow's
    /// names (`qname flag rname pos mapq cigar rnext pnext tlen seq qual end`; default all);
    /// `tags`: tag columns, each a name (the value as SAM text) or `(name, type)` as oxbow's
    /// `tag_defs`; `coords`: "11" (1-based `pos`, oxbow's default) or "01"; `threads`: threads
    /// inflating blocks, and as many laying batches into columns, while the query's thread
    /// walks the records (default: the file's `threads`, at least 1: a bulk read keeps two
    /// cores busy). The stream has pyarrow's `read_all()` and `read_pandas()`.
    #[pyo3(signature = (regions = None, columns = None, tags = None, coords = "11",
        batch_size = 65536, threads = None))]
    fn to_arrow(
        &self,
        py: Python<'_>,
        regions: Option<&Bound<'_, PyAny>>,
        columns: Option<Vec<String>>,
        tags: Option<&Bound<'_, PyAny>>,
        coords: &str,
        batch_size: usize,
        threads: Option<usize>,
    ) -> PyResult<ArrowStream> {
        let threads = threads.unwrap_or(self.threads.max(1));
        let shared = Arc::clone(self.open_shared()?);
        let header = shared.header();
        let scope = match regions {
            None => Scope::File,
            Some(r) if r.is_none() => Scope::File,
            Some(r) => Scope::Targets(region::targets(&region_specs(r)?, header)?),
        };
        let tag_defs = super::arrow_stream::tag_columns(tags)?;
        let layout = Arc::new(Layout::new(columns.as_deref(), &tag_defs, coords, header)?);
        let schema = layout.schema();
        let start = move || {
            let (scope, layout) = (scope.clone(), Arc::clone(&layout));
            batches::arrow(Arc::clone(&shared), scope, layout, batch_size, threads)
        };
        let first = py.detach(&start)?;
        Ok(ArrowStream::new(schema, first, Box::new(start)))
    }

    /// Every record in file order (pysam iterates from the current position; a fresh
    /// iterator here always starts at the first record).
    fn __iter__(&self, py: Python<'_>) -> PyResult<AlignmentIterator> {
        self.records(py, Scope::File)
    }

    /// Closes the file; iterators still running finish with their own reader.
    fn close(&self) {
        self.shared.close();
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, PyTuple>) -> bool {
        self.shared.close();
        false
    }

    fn __repr__(&self) -> String {
        format!(
            "<hts.AlignmentFile '{}' ({} references){}>",
            self.shared.display_name(),
            self.shared.header().refs().len(),
            if self.shared.is_closed() {
                ", closed"
            } else {
                ""
            }
        )
    }
}
