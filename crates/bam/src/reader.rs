use bgzf::VirtualOffset;
use hfile::Hints;
use index::{Index, Wanted};

use crate::header::Header;
use crate::index_source::IndexHint;
use crate::lengths;
use crate::location::Locator;
use crate::opened::Opened;
use crate::query::{FetchPlan, Planner};
use crate::record::{Record, RecordRef};
use crate::{Error, RecordError, Result};

/// How a count steps over records (the quick check).
mod count;

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

/// The bytes of the header's first read: the first block of a typical header (a BGZF block is
/// at most 64 KiB, and writers end the header's blocks before the first record). A longer
/// header costs further bounded requests, growing in size, never an open-ended one.
const HEADER_READAHEAD: u64 = 16 * 1024;

/// Records larger than this are read in pieces, so that a hostile `block_size` meets the end of
/// the file before it meets an allocation.
const RECORD_READ_STEP: usize = 1 << 20;

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
    /// The BAM's location for messages (a signed URL's query string hidden).
    location: String,
    /// The transport, the cache, and whether cached parts are shown current.
    opened: Opened,
    /// Which index, and as far as it is loaded.
    locator: Locator,
    bgzf: bgzf::Reader,
    header: Header,
    /// Where the first record starts (just after the header).
    first_record: VirtualOffset,
    /// Where the last record read starts, for messages about it.
    last_record: VirtualOffset,
    options: OpenOptions,
    /// A record that crosses a block boundary, copied whole.
    straddling: Vec<u8>,
    /// A long-CIGAR record rewritten with its real CIGAR.
    rewritten: Vec<u8>,
    /// The last record read in place: its fields, and where its bytes are.
    last: Option<Record<Held>>,
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

/// Where the bytes of the last record read in place are, so that it can be handed out again
/// ([`Reader::last_record_ref`]).
#[derive(Debug, Clone, Copy)]
enum Held {
    /// In the current block, just before the read position: this many bytes.
    Block(usize),
    Straddling,
    Rewritten,
}

impl Reader {
    /// Opens a local path or URL (or `-`, standard input, or a named pipe: read in order, no
    /// index) and reads its header. Input that is not BAM is refused with [`Error::NotBam`], naming what it is.
    /// `FILE##idx##INDEX` names the index too (see [`crate::split_index`]).
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
        let (opened, file) = Opened::open(locator.source(), options)?;
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
        mut file: hfile::HFile,
        opened: Opened,
        locator: Locator,
        options: &OpenOptions,
    ) -> Result<Reader> {
        let display = hfile::redact_url(locator.source());
        file.set_readahead_limit(Some(HEADER_READAHEAD));
        let mut bgzf = bgzf::Reader::new(file)?;
        let header = crate::format::read_header(&mut bgzf, &display)?;
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
            opened,
            locator,
            bgzf,
            header,
            first_record,
            last_record: first_record,
            options: options.clone(),
            straddling: Vec::new(),
            rewritten: Vec::new(),
            last: None,
        })
    }

    /// The path or URL this reader was opened on, as shown in messages (without a query string
    /// that may hold a signature).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The virtual offset of the last record read (of the first, before any), so that a
    /// problem found later (corrupt aux data met while printing) can say where the record is.
    pub fn last_record_offset(&self) -> VirtualOffset {
        self.last_record
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Checks for the 28-byte BGZF end-of-file marker; `false` means the file is probably
    /// truncated. A pipe cannot be checked and counts as having one (samtools says nothing).
    pub fn has_eof_marker(&mut self) -> Result<bool> {
        if self.opened.is_stream() {
            return Ok(true);
        }
        match self.bgzf.check_eof_marker() {
            // A server that ignores Range cannot give the last bytes alone: as for a pipe,
            // there is no telling (htslib then says nothing either).
            Err(bgzf::Error::Io(e)) if e.is_range_ignored() => Ok(true),
            other => Ok(other?),
        }
    }

    /// Loads the whole index: `explicit` if given, else the first of
    /// [`crate::index_name::candidates`] that exists (`x.bam.csi`, `x.csi`, `x.bam.bai`,
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
                name: self.location.clone(),
            });
        }
        let cache = self.opened.cache();
        let (name, header) = (&self.location, &self.header);
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
        source.extend(wanted, &self.header, &mut |_, _| {})?;
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
        let bgzf = &mut self.bgzf;
        let mut each = |tid: usize, index: &Index| {
            if let Some(advice) = planner.arrived(tid, index, size, &options) {
                bgzf.advise(&advice);
            }
        };
        source.extend(needed, &self.header, &mut each)?;
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
            let header = index::Chunk::new(VirtualOffset::default(), self.first_record);
            let options = index::plan::Options::default();
            let plan = index::plan::plan_chunks(&[header], &[], u64::MAX, &options);
            let header_end = plan.spans.last().map_or(0, |s| s.end);
            let index = self.locator.loaded_mut();
            self.opened
                .confirm(self.bgzf.get_mut(), index, header_end)?;
        }
        Ok(Confirmed { reader: self })
    }

    /// The loaded index, if any (a partly loaded one holds the references queries needed).
    /// Outside the crate it is reached through [`Confirmed::index`].
    pub(crate) fn index(&self) -> Option<&Index> {
        self.locator.index()
    }

    /// Reads the next record in file order in place: it borrows the block it lies in (a record
    /// that crosses a block boundary is the one that is copied, into a buffer the reader keeps),
    /// so reading allocates nothing. `None` at the end of the file. Only a [`crate::Query`]
    /// calls it, once cached parts are shown current.
    #[inline]
    pub(crate) fn read_record_ref(&mut self) -> Result<Option<RecordRef<'_>>> {
        self.read_next(false)
    }

    /// [`Reader::read_record_ref`] that also keeps the record's fields, for
    /// [`Reader::last_record_ref`] (a query looks at a record before handing it out).
    #[inline]
    pub(crate) fn read_record_ref_held(&mut self) -> Result<Option<RecordRef<'_>>> {
        self.read_next(true)
    }

    /// Reads the next record in place; `hold`: keep its fields for [`Reader::last_record_ref`]
    /// (a copy of them per record, which reading in file order does not need).
    #[inline(always)]
    fn read_next(&mut self, hold: bool) -> Result<Option<RecordRef<'_>>> {
        if !self.opened.is_confirmed() {
            self.confirm()?;
        }
        let at = self.bgzf.virtual_offset();
        self.last_record = at;
        let n_ref = self.header.targets().len();
        let buffered = self.bgzf.fill_block()?;
        let available = buffered.len();
        if available == 0 {
            return Ok(None);
        }
        let block_size = buffered
            .get(..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let whole = match block_size {
            Some(block_size) => {
                self.check_block_size(block_size, at)?;
                let len = 4 + block_size as usize;
                (available >= len).then_some(len)
            }
            None => None,
        };
        self.last = None;
        let (data, scratch, held) = match whole {
            Some(len) => (
                &self.bgzf.take_buffered(len)[4..],
                &mut self.rewritten,
                Held::Block(len - 4),
            ),
            None => {
                self.read_straddling(at)?;
                (
                    self.straddling.as_slice(),
                    &mut self.rewritten,
                    Held::Straddling,
                )
            }
        };
        match Record::decode_in(data, n_ref, scratch) {
            Ok(record) => {
                // Moving a long CIGAR in always shortens the record (the tag goes), so a
                // length that changed means the bytes are the rewritten ones.
                if hold {
                    let held = if record.data().len() == data.len() {
                        held
                    } else {
                        Held::Rewritten
                    };
                    self.last = Some(record.with_data(held));
                }
                Ok(Some(record))
            }
            Err(kind) => Err(Error::Record {
                name: self.location.clone(),
                offset: at,
                kind,
            }),
        }
    }

    /// The record the last [`Reader::read_record_ref_held`] returned, again (for a caller that
    /// looked at it before deciding to hand it out); `None` after anything else moved the
    /// reader.
    pub(crate) fn last_record_ref(&self) -> Option<RecordRef<'_>> {
        let last = self.last.as_ref()?;
        let data: &[u8] = match *last.storage() {
            Held::Block(len) => self.bgzf.taken(len),
            Held::Straddling => &self.straddling,
            Held::Rewritten => &self.rewritten,
        };
        // The fields were read from exactly these bytes; anything else is not that record.
        let expected = match *last.storage() {
            Held::Block(len) => len,
            Held::Straddling | Held::Rewritten => data.len(),
        };
        (data.len() == expected && data.len() >= last.aux_offset()).then(|| last.with_data(data))
    }

    #[inline]
    fn check_block_size(&self, block_size: u32, at: VirtualOffset) -> Result<()> {
        if block_size < 32 || block_size > i32::MAX as u32 {
            return Err(Error::Record {
                name: self.location.clone(),
                offset: at,
                kind: RecordError::TooShort { block_size },
            });
        }
        Ok(())
    }

    /// Reads a record that is not whole in the current block into `self.straddling` (without
    /// its `block_size`).
    fn read_straddling(&mut self, at: VirtualOffset) -> Result<()> {
        let mut size = [0u8; 4];
        if !self.bgzf.read_exact_or_eof(&mut size)? {
            // fill_block found data, so this cannot be a clean end.
            return Err(Error::Bgzf(bgzf::Error::UnexpectedEof {
                name: self.location.clone(),
                at,
                wanted: 4,
                got: 0,
            }));
        }
        let block_size = u32::from_le_bytes(size);
        self.check_block_size(block_size, at)?;
        let block_size = block_size as usize;
        let data = &mut self.straddling;
        data.clear();
        // A hostile block_size meets the end of the file before it meets an allocation.
        while data.len() < block_size {
            let start = data.len();
            // The fixed fields first: what they promise must fit before the rest is read.
            let step = if start == 0 {
                lengths::FIXED
            } else {
                (block_size - start).min(RECORD_READ_STEP)
            };
            let record_error = |kind| Error::Record {
                name: self.location.clone(),
                offset: at,
                kind,
            };
            lengths::grow(data, start + step)
                .map_err(|_| record_error(RecordError::OutOfMemory { block_size }))?;
            if let Err(source) = self.bgzf.read_exact_data(&mut data[start..]) {
                return Err(Error::TruncatedRecord {
                    name: self.location.clone(),
                    offset: at,
                    block_size,
                    source,
                });
            }
            if start == 0 {
                lengths::check_fixed(data, block_size).map_err(record_error)?;
            }
        }
        Ok(())
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

    /// The index as far as it is loaded; [`Error::NoIndex`] when none was found.
    pub(crate) fn loaded_index(&self) -> Result<&Index> {
        self.index().ok_or_else(|| Error::NoIndex {
            name: self.location.clone(),
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
        Ok(self.bgzf.size()?)
    }

    pub(crate) fn block_starts(&self) -> &[u64] {
        self.locator.block_starts()
    }

    pub(crate) fn bgzf_mut(&mut self) -> &mut bgzf::Reader {
        self.last = None;
        &mut self.bgzf
    }

    /// The virtual offset of the next byte the reader will read (just past the last record
    /// read).
    pub fn virtual_offset(&self) -> VirtualOffset {
        self.bgzf.virtual_offset()
    }
}
