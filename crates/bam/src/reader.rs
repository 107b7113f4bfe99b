use std::sync::Arc;

use bgzf::VirtualOffset;
use index::Index;

use crate::header::Header;
use crate::query::FetchPlan;
use crate::record::Record;
use crate::{Error, RecordError, Result};

/// How to open a BAM file.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Transport settings (request headers, verbosity, retries) for remote files.
    pub transport: hfile::OpenOptions,
    /// Threads for BGZF inflation besides the calling one (samtools' `-@`); 0: none.
    pub threads: usize,
    /// How region queries turn chunks into requests.
    pub fetch_plan: FetchPlan,
    /// The limits of a query's plan (gap merging, span cap, tight ends).
    pub plan: index::plan::Options,
}

/// The bytes of the header's first read: one BGZF block at most, which holds most headers; a
/// larger one costs further bounded requests, never an open-ended one.
const HEADER_READAHEAD: u64 = 64 * 1024;

/// Records larger than this are read in pieces, so that a hostile `block_size` meets the end of
/// the file before it meets an allocation.
const RECORD_READ_STEP: usize = 1 << 20;

/// An open BAM file: its header, and records in file order or by region.
pub struct Reader {
    /// The BAM's location for messages (a signed URL's query string hidden).
    location: String,
    /// The BAM's location as given (before any `##idx##`), for deriving index names.
    source: String,
    /// The index named with `##idx##`, used verbatim.
    index_hint: Option<String>,
    bgzf: bgzf::Reader,
    header: Header,
    index: Option<Index>,
    /// Where the first record starts (just after the header).
    first_record: VirtualOffset,
    /// Every block start the index knows, for the span planner.
    block_starts: Arc<bgzf::BlockStarts>,
    options: OpenOptions,
}

impl Reader {
    /// Opens a local path or URL and reads its header. `FILE##idx##INDEX` names the index too
    /// (see [`crate::split_index`]).
    pub fn open(location: &str, options: &OpenOptions) -> Result<Reader> {
        let (source, index_hint) = crate::split_index(location);
        let display = hfile::redact_url(source);
        let mut file = hfile::open(source, &options.transport)?;
        file.set_readahead_limit(Some(HEADER_READAHEAD));
        let mut bgzf = bgzf::Reader::new(file)?;
        let header = Header::read(&mut bgzf, &display)?;
        let first_record = bgzf.virtual_offset();
        // Back to streaming (no limit) for a whole-file read; a query sets its own limits. The
        // seek is lazy, and for a remote file its bytes are still in the response window.
        if bgzf.format() == bgzf::Format::Bgzf {
            bgzf.seek(first_record)?;
        }
        // Threads only now: read-ahead while reading the header would fetch blocks past it.
        if options.threads > 0 {
            bgzf.set_threads(options.threads + 1);
        }
        Ok(Reader {
            location: display,
            source: source.to_string(),
            index_hint: index_hint.map(str::to_string),
            bgzf,
            header,
            index: None,
            first_record,
            block_starts: Arc::default(),
            options: options.clone(),
        })
    }

    /// The path or URL this reader was opened on, as shown in messages (without a query string
    /// that may hold a signature).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Checks for the 28-byte BGZF end-of-file marker; `false` means the file is probably truncated.
    pub fn has_eof_marker(&mut self) -> Result<bool> {
        Ok(self.bgzf.check_eof_marker()?)
    }

    /// Loads the index: `explicit` if given, else the one named with `##idx##`, else
    /// `LOCATION.csi` then `LOCATION.bai` (samtools' order; for a URL the suffix goes on the path,
    /// before any query string). A pre-signed URL's index is never derived: it must be given.
    pub fn load_index(&mut self, explicit: Option<&str>) -> Result<()> {
        let explicit = explicit
            .map(str::to_string)
            .or_else(|| self.index_hint.clone());
        let index = match explicit.as_deref() {
            Some(loc) => load_index_at(loc, &self.options.transport)?,
            None => {
                let mut found = None;
                for ext in [".csi", ".bai"] {
                    let loc = crate::derived_index(&self.source, ext).ok_or_else(|| {
                        Error::IndexNotGiven {
                            name: self.location.clone(),
                        }
                    })?;
                    match load_index_at(&loc, &self.options.transport) {
                        Ok(idx) => {
                            found = Some(idx);
                            break;
                        }
                        Err(e) if e.is_not_found() => continue,
                        // An object store that hides absence answers 403 for a missing key
                        // (S3 without list permission): the .bai may still be there.
                        Err(e) if ext == ".csi" && hidden_absence(&loc, &e) => continue,
                        Err(e) => return Err(e),
                    }
                }
                found.ok_or_else(|| Error::NoIndex {
                    name: self.location.clone(),
                })?
            }
        };
        self.block_starts = Arc::new(bgzf::BlockStarts::new(index.block_starts()));
        self.index = Some(index);
        Ok(())
    }

    /// The loaded index, if any.
    pub fn index(&self) -> Option<&Index> {
        self.index.as_ref()
    }

    /// Rewinds to the first record, for reading the whole file in order.
    pub fn rewind(&mut self) -> Result<()> {
        self.bgzf.seek(self.first_record)?;
        Ok(())
    }

    /// Reads the next record in file order; `None` at the end of the file.
    pub fn read_record(&mut self) -> Result<Option<Record>> {
        let at = self.bgzf.virtual_offset();
        let mut size = [0u8; 4];
        if !self.bgzf.read_exact_or_eof(&mut size)? {
            return Ok(None);
        }
        let block_size = u32::from_le_bytes(size);
        if block_size < 32 || block_size > i32::MAX as u32 {
            return Err(Error::Record {
                name: self.location.clone(),
                offset: at,
                kind: RecordError::TooShort { block_size },
            });
        }
        let block_size = block_size as usize;
        let mut data = Vec::with_capacity(block_size.min(RECORD_READ_STEP));
        while data.len() < block_size {
            let step = (block_size - data.len()).min(RECORD_READ_STEP);
            let start = data.len();
            data.resize(start + step, 0);
            if let Err(source) = self.bgzf.read_exact(&mut data[start..]) {
                return Err(Error::TruncatedRecord {
                    name: self.location.clone(),
                    offset: at,
                    block_size,
                    source,
                });
            }
        }
        let record =
            Record::decode(data, self.header.refs().len()).map_err(|kind| Error::Record {
                name: self.location.clone(),
                offset: at,
                kind,
            })?;
        Ok(Some(record))
    }

    pub(crate) fn first_record(&self) -> VirtualOffset {
        self.first_record
    }

    pub(crate) fn fetch_plan(&self) -> FetchPlan {
        self.options.fetch_plan
    }

    pub(crate) fn plan_options(&self) -> index::plan::Options {
        self.options.plan
    }

    /// The size of the file (for a remote file, as the server told it).
    pub(crate) fn size(&mut self) -> Result<u64> {
        Ok(self.bgzf.size()?)
    }

    pub(crate) fn block_starts(&self) -> &[u64] {
        self.block_starts.as_slice()
    }

    pub(crate) fn bgzf_mut(&mut self) -> &mut bgzf::Reader {
        &mut self.bgzf
    }

    pub(crate) fn virtual_offset(&self) -> VirtualOffset {
        self.bgzf.virtual_offset()
    }
}

/// Fetches a whole index into memory (for a URL: bounded requests, nothing written to disk).
fn load_index_at(location: &str, transport: &hfile::OpenOptions) -> Result<Index> {
    // No limit: the transport reads in bounded requests of its request size, and the first
    // response tells the size, so a small index costs one request and no HEAD.
    let mut file = hfile::open(location, transport)?;
    let bytes = file.read_to_end_vec()?;
    let name = hfile::redact_url(location);
    Index::from_bytes(&name, &bytes).map_err(|source| Error::Index { name, source })
}

/// A 403 from `s3://` or `gs://`, which is what a missing key looks like without list permission.
fn hidden_absence(location: &str, error: &Error) -> bool {
    let object_store = matches!(
        hfile::scheme_of(location).as_deref(),
        Some("s3" | "s3+http" | "s3+https" | "gs" | "gs+http" | "gs+https")
    );
    let forbidden = matches!(
        error,
        Error::Transport(hfile::Error::Status { status: 403, .. })
            | Error::Bgzf(bgzf::Error::Io(hfile::Error::Status { status: 403, .. }))
    );
    object_store && forbidden
}

/// `x.bam` + `.bai` -> `x.bam.bai`; for a URL the suffix goes before `?query` and `#fragment`.
pub fn sibling(location: &str, ext: &str) -> String {
    if hfile::scheme_of(location).is_some() {
        let cut = location.find(['?', '#']).unwrap_or(location.len());
        format!("{}{}{}", &location[..cut], ext, &location[cut..])
    } else {
        format!("{location}{ext}")
    }
}
