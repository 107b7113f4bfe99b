//! The record reader: BAM records from any [`bgzf::Source`] (a local file, bytes in memory, a
//! remote [`hfile::HFile`]), with queries through an index the caller passes in
//! ([`RecordReader::query`]). The facade [`crate::Reader`] (opening paths and URLs, the cache,
//! the index locator) reads its records through one of these: there is one record-reading path.

use bgzf::{Source, VirtualOffset};
use hfile::HFile;

use crate::header::Header;
use crate::lengths;
use crate::record::{Record, RecordRef};
use crate::{Error, RecordError, Result};

/// How a count steps over records (the quick check).
mod count;

/// The bytes of the header's first read: the first block of a typical header (a BGZF block is
/// at most 64 KiB, and writers end the header's blocks before the first record). A longer
/// header costs further bounded requests, growing in size, never an open-ended one.
const HEADER_READAHEAD: u64 = 16 * 1024;

/// Records larger than this are read in pieces, so that a hostile `block_size` meets the end of
/// the file before it meets an allocation.
const RECORD_READ_STEP: usize = 1 << 20;

/// A BAM file's header and records, read from any seekable byte source: records in file order
/// ([`RecordReader::records`]) or by region through an [`index::Index`] the caller loaded
/// ([`RecordReader::query`]), both as a [`crate::Query`].
///
/// Any `Read + Seek` with [`hfile::Hints`] is a [`bgzf::Source`]: [`std::fs::File`] and
/// [`std::io::Cursor`] are, with hints they ignore; an [`hfile::HFile`] takes them (bounded
/// range requests, spans fetched ahead). [`crate::Reader`] adds opening paths and URLs, the
/// persistent cache and finding the index.
///
/// # Examples
///
/// Every record of a file, in file order:
///
/// ```no_run
/// let file = std::fs::File::open("x.bam")?;
/// let mut reader = bam::RecordReader::with_name(file, "x.bam")?;
/// for record in reader.records() {
///     println!("{:?}", record?.pos());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A region, through an index loaded by the caller:
///
/// ```no_run
/// let bytes = std::fs::read("x.bam")?;
/// let index = index::read("x.bam.bai")?;
/// let mut reader = bam::RecordReader::with_name(std::io::Cursor::new(bytes), "x.bam")?;
/// let target = region::parse_region("chr1:10,001-20,000", reader.header())?;
/// let mut query = reader.query(&index, target)?;
/// while let Some(record) = query.next_record_ref()? {
///     println!("{:?}", record.pos());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RecordReader<S = HFile> {
    /// The file's location for messages (a signed URL's query string hidden).
    location: String,
    bgzf: bgzf::Reader<S>,
    header: Header,
    /// Where the first record starts (just after the header).
    first_record: VirtualOffset,
    /// Where the last record read starts, for messages about it.
    last_record: VirtualOffset,
    /// Read in order from a pipe: its end cannot be looked at for the EOF marker.
    stream: bool,
    /// A record that crosses a block boundary, copied whole.
    straddling: Vec<u8>,
    /// A long-CIGAR record rewritten with its real CIGAR.
    rewritten: Vec<u8>,
    /// The last record read in place: its fields, and where its bytes are.
    last: Option<Record<Held>>,
}

/// Where the bytes of the last record read in place are, so that it can be handed out again
/// ([`RecordReader::last_record_ref`]).
#[derive(Debug, Clone, Copy)]
enum Held {
    /// In the current block, just before the read position: this many bytes.
    Block(usize),
    Straddling,
    Rewritten,
}

impl<S: Source> RecordReader<S> {
    /// Reads the header from `src` (at its start); messages name the file [`Source::name`].
    /// Input that is not BAM is refused with [`Error::NotBam`], naming what it is.
    pub fn new(src: S) -> Result<RecordReader<S>> {
        let name = src.name().to_string();
        RecordReader::with_name(src, &name)
    }

    /// [`RecordReader::new`], with `name` (a path or URL) for messages.
    pub fn with_name(src: S, name: &str) -> Result<RecordReader<S>> {
        RecordReader::read_header(src, Some(name), name.to_string())
    }

    /// Reads the header of `src`: the BGZF layer names the file `bgzf_name` (else
    /// [`Source::name`]), records' messages `location`.
    pub(crate) fn read_header(
        mut src: S,
        bgzf_name: Option<&str>,
        location: String,
    ) -> Result<RecordReader<S>> {
        src.set_readahead_limit(Some(HEADER_READAHEAD));
        let mut bgzf = match bgzf_name {
            Some(name) => bgzf::Reader::with_name(src, name)?,
            None => bgzf::Reader::new(src)?,
        };
        let header = crate::format::read_header(&mut bgzf, &location)?;
        let first_record = bgzf.virtual_offset();
        // Back to streaming (no limit) for a whole-file read; a query sets its own limits. The
        // seek is lazy, and for a remote file its bytes are still in the response window.
        if bgzf.format() == bgzf::Format::Bgzf {
            bgzf.seek(first_record)?;
        }
        Ok(RecordReader {
            location,
            bgzf,
            header,
            first_record,
            last_record: first_record,
            stream: false,
            straddling: Vec::new(),
            rewritten: Vec::new(),
            last: None,
        })
    }

    /// Inflates blocks on `threads` threads besides the calling one (samtools' `-@`; 0: on
    /// the calling one alone). Best set before the first record: blocks are read ahead.
    pub fn set_threads(&mut self, threads: usize) {
        if threads > 0 {
            self.bgzf.set_threads(threads + 1);
        }
    }

    /// Marks the source as a pipe: its EOF marker cannot be checked ([`RecordReader::has_eof_marker`]).
    pub(crate) fn set_stream(&mut self) {
        self.stream = true;
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file's name or location, as shown in messages.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The virtual offset of the last record read (of the first, before any), so that a
    /// problem found later (corrupt aux data met while printing) can say where the record is.
    pub fn last_record_offset(&self) -> VirtualOffset {
        self.last_record
    }

    /// The virtual offset of the next byte the reader will read (just past the last record
    /// read).
    pub fn virtual_offset(&self) -> VirtualOffset {
        self.bgzf.virtual_offset()
    }

    /// Checks for the 28-byte BGZF end-of-file marker; `false` means the file is probably
    /// truncated. A pipe cannot be checked and counts as having one (samtools says nothing).
    pub fn has_eof_marker(&mut self) -> Result<bool> {
        if self.stream {
            return Ok(true);
        }
        match self.bgzf.check_eof_marker() {
            // A server that ignores Range cannot give the last bytes alone: as for a pipe,
            // there is no telling (htslib then says nothing either).
            Err(bgzf::Error::Io(e)) if e.is_range_ignored() => Ok(true),
            other => Ok(other?),
        }
    }

    /// Where the first record starts.
    pub(crate) fn first_record(&self) -> VirtualOffset {
        self.first_record
    }

    /// The size of the file (for a remote file, as the server tells it).
    pub(crate) fn size(&mut self) -> Result<u64> {
        Ok(self.bgzf.size()?)
    }

    /// [`RecordReader::size`], `None` when the source does not tell it.
    pub(crate) fn known_size(&mut self) -> Result<Option<u64>> {
        match self.size() {
            Err(e) if e.is_size_unknown() => Ok(None),
            other => Ok(Some(other?)),
        }
    }

    /// The BGZF reader, to seek or advise; the last record read is no longer held.
    pub(crate) fn bgzf_mut(&mut self) -> &mut bgzf::Reader<S> {
        self.last = None;
        &mut self.bgzf
    }

    /// The header and the BGZF reader at once (advice given while the index is read needs the
    /// header too).
    pub(crate) fn header_and_bgzf(&mut self) -> (&Header, &mut bgzf::Reader<S>) {
        self.last = None;
        (&self.header, &mut self.bgzf)
    }

    /// Reads the next record in file order in place: it borrows the block it lies in (a record
    /// that crosses a block boundary is the one that is copied, into a buffer the reader keeps),
    /// so reading allocates nothing. `None` at the end of the file. Only a [`crate::Query`]
    /// calls it (the facade's once cached parts are shown current).
    #[inline]
    pub(crate) fn read_record_ref(&mut self) -> Result<Option<RecordRef<'_>>> {
        self.read_next(false)
    }

    /// [`RecordReader::read_record_ref`] that also keeps the record's fields, for
    /// [`RecordReader::last_record_ref`] (a query looks at a record before handing it out).
    #[inline]
    pub(crate) fn read_record_ref_held(&mut self) -> Result<Option<RecordRef<'_>>> {
        self.read_next(true)
    }

    /// Reads the next record in place; `hold`: keep its fields for [`RecordReader::last_record_ref`]
    /// (a copy of them per record, which reading in file order does not need).
    #[inline(always)]
    fn read_next(&mut self, hold: bool) -> Result<Option<RecordRef<'_>>> {
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

    /// The record the last [`RecordReader::read_record_ref_held`] returned, again (for a caller that
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
}
