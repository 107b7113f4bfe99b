//! The facade: a BAM file opened from a path, URL or pipe, with the persistent cache
//! ([`crate::opened`]), the index locator ([`crate::location`]) and its records read through a
//! [`RecordReader`], the one record-reading path.

use bgzf::VirtualOffset;
use index::{Index, Wanted};

use crate::header::Header;
use crate::index_source::IndexHint;
use crate::location::Locator;
use crate::opened::Opened;
use crate::query::{FetchPlan, Planner};
use crate::record_reader::RecordReader;
use crate::{Error, Result};

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
    /// The index queries will use: for a remote file its first bytes are fetched while the
    /// header is, and [`Reader::load_index`] with the same choice uses them.
    pub index: IndexHint,
    /// Leave the persistent cache of remote headers and index prefixes alone (it is also off
    /// with `HTS_CACHE=off`).
    pub no_cache: bool,
    /// How many distinct references the query will name (0: not known). The first request
    /// for a remote index, made beside the header's, asks for about that many references'
    /// worth, so a query over many references does not learn a round trip later that it needs
    /// more.
    pub query_refs: usize,
}

/// An open BAM file: its header, its index, and records in file order or by region through a
/// [`crate::Query`] ([`Reader::records`], [`Reader::query`]).
///
/// The header (and index) of a remote file may come from the persistent cache; before any
/// record is read, a response the query makes anyway shows them current. Records come only
/// from a query, which does that first: a reader itself has no method that reads a record, so
/// records cannot be read from cached bytes not yet shown current.
///
/// ```compile_fail
/// let mut reader = bam::Reader::open("x.bam", &bam::OpenOptions::default())?;
/// // No such method: a record is read only through a query, made after the cached parts of
/// // the file are confirmed.
/// let record = reader.read_record_ref()?;
/// # Ok::<(), bam::Error>(())
/// ```
///
/// The same through a query compiles:
///
/// ```no_run
/// let mut reader = bam::Reader::open("x.bam", &bam::OpenOptions::default())?;
/// let mut records = reader.records()?; // confirms cached parts, then reads in file order
/// let record = records.next_record_ref()?;
/// # Ok::<(), bam::Error>(())
/// ```
pub struct Reader {
    /// The transport, the cache, and whether cached parts are shown current.
    opened: Opened,
    /// Which index, and as far as it is loaded.
    locator: Locator,
    /// The header and records; its location is the BAM's for messages (a signed URL's query
    /// string hidden).
    records: RecordReader,
    options: OpenOptions,
}

/// A reader whose cached parts are shown current ([`Reader::confirm`]): what may be shown of
/// its header and index. A reader's index is not reachable without it, so counts from a stale
/// cached index cannot be printed:
///
/// ```compile_fail
/// let mut reader = bam::Reader::open("x.bam", &bam::OpenOptions::default())?;
/// reader.load_index(None)?;
/// let index = reader.index(); // private: the index is shown only once confirmed
/// # Ok::<(), bam::Error>(())
/// ```
///
/// ```no_run
/// let mut reader = bam::Reader::open("x.bam", &bam::OpenOptions::default())?;
/// reader.load_index(None)?;
/// let confirmed = reader.confirm()?;
/// let unplaced = confirmed.index().and_then(|i| i.n_no_coor());
/// # Ok::<(), bam::Error>(())
/// ```
pub struct Confirmed<'r> {
    reader: &'r Reader,
}

impl Confirmed<'_> {
    /// The header.
    pub fn header(&self) -> &Header {
        self.reader.header()
    }

    /// The loaded index, if any.
    pub fn index(&self) -> Option<&Index> {
        self.reader.index()
    }

    /// The file's location, as shown in messages.
    pub fn location(&self) -> &str {
        self.reader.location()
    }
}

impl Reader {
    /// Opens a local path or URL (or `-`, standard input, or a named pipe: read in order, no
    /// index) and reads its header. Input that is not BAM is refused with [`Error::NotBam`], naming what it is.
    /// `FILE##idx##INDEX` names the index too (see [`hfile::split_index`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let mut reader = bam::Reader::open("https://example.org/x.bam", &Default::default())?;
    /// println!("{} references", reader.header().refs().len());
    /// # Ok::<(), bam::Error>(())
    /// ```
    pub fn open(location: &str, options: &OpenOptions) -> Result<Reader> {
        if location == "-" {
            let (opened, stdin) = Opened::stdin();
            return Reader::from_hfile(stdin, opened, Locator::new(location), options);
        }
        if let Some(pipe) = Opened::pipe(location) {
            let (opened, file) = pipe?;
            return Reader::from_hfile(file, opened, Locator::new(location), options);
        }
        let mut locator = Locator::new(location);
        // Three requests at once for a remote file: the header (unless cached), the EOF marker
        // (which also shows a cached header current), the index.
        let (opened, file) = Opened::open(locator.source(), None, options)?;
        locator.start(options, opened.cache());
        Reader::from_hfile(file, opened, locator, options)
    }

    /// Reads a local regular file the caller has opened already (to look at its first bytes
    /// without opening it twice), from its start, as [`Reader::open`] of `location` (its path,
    /// which index names are derived from; `FILE##idx##INDEX` names the index too).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::io::{Read, Seek};
    /// let mut file = std::fs::File::open("x.bam")?;
    /// let mut magic = [0u8; 4];
    /// file.read_exact(&mut magic)?; // e.g. to tell CRAM apart
    /// file.rewind()?;
    /// let reader = bam::Reader::open_file("x.bam", file, &Default::default())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_file(location: &str, file: std::fs::File, options: &OpenOptions) -> Result<Reader> {
        let mut locator = Locator::new(location);
        let backend = hfile::FileBackend::from_file(locator.source(), file)?;
        let (opened, file) = Opened::open(locator.source(), Some(Box::new(backend)), options)?;
        locator.start(options, opened.cache());
        Reader::from_hfile(file, opened, locator, options)
    }

    /// Reads a BAM file held in memory.
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<Reader> {
        let (opened, file) = Opened::memory(name, bytes);
        Reader::from_hfile(file, opened, Locator::new(name), &OpenOptions::default())
    }

    /// Reads the header of `file`.
    fn from_hfile(
        file: hfile::HFile,
        opened: Opened,
        locator: Locator,
        options: &OpenOptions,
    ) -> Result<Reader> {
        let display = hfile::redact_url(locator.source());
        // The BGZF layer names the file as the transport does; records' messages, redacted.
        let mut records = RecordReader::read_header(file, None, display)?;
        if opened.is_stream() {
            records.set_stream();
        }
        // Threads only now: read-ahead while reading the header would fetch blocks past it.
        records.set_threads(options.threads);
        Ok(Reader {
            opened,
            locator,
            records,
            options: options.clone(),
        })
    }

    /// The path or URL this reader was opened on, as shown in messages (without a query string
    /// that may hold a signature).
    pub fn location(&self) -> &str {
        self.records.location()
    }

    /// Inflates BGZF blocks on `threads` threads besides the reading one from now on (as
    /// [`OpenOptions::threads`] does from the start; 0 leaves the reader as it is). For a
    /// caller that chooses per query: the Python package's bulk reads (`to_arrow`) inflate on
    /// a thread of their own while the query's thread builds columns.
    pub fn set_threads(&mut self, threads: usize) {
        self.records.set_threads(threads);
    }

    /// The virtual offset of the last record read (of the first, before any), so that a
    /// problem found later (corrupt aux data met while printing) can say where the record is.
    pub fn last_record_offset(&self) -> VirtualOffset {
        self.records.last_record_offset()
    }

    /// The header.
    pub fn header(&self) -> &Header {
        self.records.header()
    }

    /// Checks for the 28-byte BGZF end-of-file marker; `false` means the file is probably
    /// truncated. A pipe cannot be checked and counts as having one (samtools says nothing).
    pub fn has_eof_marker(&mut self) -> Result<bool> {
        self.records.has_eof_marker()
    }

    /// Loads the whole index: `explicit` if given, else the first of
    /// [`hfile::index_candidates`] that exists (`x.bam.csi`, `x.csi`, `x.bam.bai`,
    /// `x.bai`, as htslib looks; for a URL the suffix goes before any query string).
    pub fn load_index(&mut self, explicit: Option<&str>) -> Result<()> {
        self.select_index(explicit)?;
        self.ensure_index(&Wanted::all())
    }

    /// Finds the index (as [`Reader::load_index`]: `explicit` if given, else the one named with
    /// `##idx##`, else the names samtools looks for; a pre-signed URL's index is never derived)
    /// but loads only what queries ask for: the references they name, read from the start of
    /// the file as far as the last of them. For a remote index that is usually a small part.
    pub fn select_index(&mut self, explicit: Option<&str>) -> Result<()> {
        if self.opened.is_stream() {
            return Err(Error::NoIndex {
                name: self.location().to_string(),
            });
        }
        let cache = self.opened.cache();
        let (name, header) = (self.records.location(), self.records.header());
        self.locator
            .select(explicit, name, header, &self.options, cache)?;
        if let (true, Some(index)) = (self.opened.is_confirmed(), self.locator.loaded_mut()) {
            // Output has begun: what the index's choice rests on is shown now.
            self.opened.confirm_index(index)?;
        }
        Ok(())
    }

    /// Makes sure the index holds `wanted` (loading more of it if needed).
    pub(crate) fn ensure_index(&mut self, wanted: &Wanted) -> Result<()> {
        self.loaded_index()?;
        let Some(source) = self.locator.loaded_mut() else {
            return Ok(());
        };
        if source.index().require(wanted).is_ok() {
            return Ok(());
        }
        source.extend(wanted, self.records.header(), &mut |_, _| {})?;
        self.locator.update_block_starts();
        Ok(())
    }

    /// Loads the references in `needed` for a query of the regions `planner` holds (on
    /// references `needed` holds). When a remote index must be read on to reach them, the
    /// regions on each reference are planned as soon as it is loaded and their spans asked for
    /// while the rest of the index arrives; those plans are parts of the query's
    /// ([`Planner::finish`]).
    pub(crate) fn ensure_index_for(
        &mut self,
        needed: &Wanted,
        planner: &mut Planner,
    ) -> Result<()> {
        let remote = self.locator.is_remote();
        let planned =
            self.options.fetch_plan == FetchPlan::Planned && !planner.regions().is_empty();
        // A server that does not tell the size waits for the query's own plan.
        let size = if remote && planned {
            self.size().ok()
        } else {
            None
        };
        let (Some(size), Some(source)) = (size, self.locator.loaded_mut()) else {
            return self.ensure_index(needed);
        };
        if source.index().require(needed).is_ok() {
            return Ok(());
        }
        let options = self.options.plan;
        let (header, bgzf) = self.records.header_and_bgzf();
        let mut each = |tid: usize, index: &Index| {
            if let Some(advice) = planner.arrived(tid, index, size, &options) {
                bgzf.advise(&advice);
            }
        };
        source.extend(needed, header, &mut each)?;
        self.locator.update_block_starts();
        Ok(())
    }

    /// Shows that the parts of the file that came from the cache (header, index prefix) still
    /// describe it, from responses already on their way (the EOF marker's, the index's), and
    /// keeps what was read in the cache for the next run. What may be printed from those parts
    /// (the index's counts) is reached through the [`Confirmed`] it returns; records through a
    /// [`crate::Query`], which calls this before its first record. A [`Error::Changed`] means
    /// the cache entry was stale and was dropped: open the file again.
    pub fn confirm(&mut self) -> Result<Confirmed<'_>> {
        if !self.opened.is_confirmed() {
            // The header's blocks: to the end of the block holding the first record (the byte
            // end of a chunk from the start to it, as the planner computes every byte end).
            let header = index::Chunk::new(VirtualOffset::default(), self.records.first_record());
            let options = index::plan::Options::default();
            let plan = index::plan::plan_chunks(&[header], &[], u64::MAX, &options);
            let header_end = plan.spans.last().map_or(0, |s| s.end);
            let index = self.locator.loaded_mut();
            self.opened
                .confirm(self.records.bgzf_mut().get_mut(), index, header_end)?;
        }
        Ok(Confirmed { reader: self })
    }

    /// The loaded index, if any (a partly loaded one holds the references queries needed).
    /// Outside the crate it is reached through [`Confirmed::index`].
    pub(crate) fn index(&self) -> Option<&Index> {
        self.locator.index()
    }

    /// The index as far as it is loaded; [`Error::NoIndex`] when none was found.
    pub(crate) fn loaded_index(&self) -> Result<&Index> {
        self.index().ok_or_else(|| Error::NoIndex {
            name: self.location().to_string(),
        })
    }

    /// [`Reader::size`], `None` when the server does not tell it.
    pub(crate) fn known_size(&mut self) -> Result<Option<u64>> {
        match self.size() {
            Err(e) if e.is_size_unknown() => Ok(None),
            other => Ok(Some(other?)),
        }
    }

    /// The size of the file (for a remote file, as the server told it).
    pub(crate) fn size(&mut self) -> Result<u64> {
        // A header from the cache comes with the size its entry recorded (shown current by
        // [`Reader::confirm`]); asking the file would wait for a response.
        if let Some(size) = self.opened.cached_size() {
            return Ok(size);
        }
        self.records.size()
    }

    pub(crate) fn fetch_plan(&self) -> FetchPlan {
        self.options.fetch_plan
    }

    pub(crate) fn plan_options(&self) -> index::plan::Options {
        self.options.plan
    }

    pub(crate) fn block_starts(&self) -> &[u64] {
        self.locator.block_starts()
    }

    /// The header and records.
    pub(crate) fn record_reader(&self) -> &RecordReader {
        &self.records
    }

    /// The header and records, to read: only a query holds it, made once cached parts are
    /// shown current ([`Reader::confirm`]).
    pub(crate) fn record_reader_mut(&mut self) -> &mut RecordReader {
        &mut self.records
    }

    /// The virtual offset of the next byte the reader will read (just past the last record
    /// read).
    pub fn virtual_offset(&self) -> VirtualOffset {
        self.records.virtual_offset()
    }
}
