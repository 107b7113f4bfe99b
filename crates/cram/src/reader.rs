//! Reading a CRAM file from start to end: the header container, then each container's slices
//! decoded into whole records, with reference bases from a FASTA (checked against each slice's
//! MD5), from the slice itself (embedded), or none (reference-less files).

mod ahead;
mod decode;
mod laid;
mod refs;
mod slices;
mod source;
pub(crate) mod spare;
mod threads;
mod walk;

pub use ahead::MAX_SLICES as REFERENCES_AHEAD;
pub use laid::{LaidOut, Layout};
use laid::{Laying, Made};
use source::{read_at, Plain};
pub use source::{ReadSeek, Source};
pub use walk::HEADER_PEEK;

use std::collections::BTreeMap;
use std::io::{Read, Seek};

use hfile::Hints;

use crate::alignment::Alignment;
use crate::fasta::Fasta;
use crate::header::SamHeader;
use crate::mates::{self, Link};
use crate::num::Cursor;
use crate::rebuild::{alignment_end, rebuild, Rebuilt, RefView};
use crate::record::{cf, read_slice_until, Record};
use crate::series::{Bits, Streams};
use crate::{Block, CompressionHeader, ContainerHeader, ContentType, Error, FileDefinition};
use crate::{SliceHeader, Version};

/// Bytes read ahead for a container header: enough for any header samtools writes; a longer
/// one is read again whole.
const HEADER_GUESS: usize = 4096;

/// The most bytes of a container read at once.
const READ_STEP: usize = 4 << 20;

/// Bytes first read of the header container: enough for the whole container of a small
/// header (the benchmark's is 1.6 KB: 25 `@SQ` lines with M5 and UR), so that a remote file
/// takes one round trip for it; a longer one is read on exactly. What is read past the header
/// container (the first data container's first bytes) costs 8 ms on a 2 MB/s link, a round
/// trip 20 to 120 ms.
const OPENING_GUESS: usize = 16 << 10;

const UNMAPPED: u16 = 0x4;

/// Reads a CRAM file container by container and yields its records made whole.
///
/// # Examples
///
/// ```no_run
/// // Without a reference: bases of mapped reads are not rebuilt (as `flagstat` reads).
/// let file = std::fs::File::open("sample.cram")?;
/// let mut reader = cram::reader::Reader::open(file, "sample.cram", None)?;
/// reader.without_bases();
/// let mut records = 0;
/// while let Some(batch) = reader.next_container()? {
///     records += batch.len();
/// }
/// println!("{records} records");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Reader {
    file: Box<dyn Source + Send>,
    file_len: u64,
    /// The source is read once in order (standard input): `file_len` is learnt at its end.
    stream: bool,
    /// The containers left to read of a planned range ([`Reader::read_containers`]), each
    /// its exact bytes, in the order read; `None`: containers are read one after another.
    planned: Option<std::collections::VecDeque<std::ops::Range<u64>>>,
    /// The ranges to read after the current one ([`Reader::read_ranges`]), each from its
    /// containers, and how many were begun: queued containers carry their range's number.
    later: std::collections::VecDeque<(Vec<std::ops::Range<u64>>, Range)>,
    pass: u64,
    /// Reads of the current container stay below this offset (its end, when planned).
    limit: u64,
    version: Version,
    header: SamHeader,
    at: u64,
    reference: Option<Fasta>,
    /// The reference was given (`-T`): nothing else is looked for.
    explicit: bool,
    /// Prefix of generated read names: the file's name, as htslib uses it.
    prefix: String,
    /// The reference bases of the current multi-reference slice, by id: bases and the
    /// 1-based position of the first.
    whole: BTreeMap<i32, (Vec<u8>, i64)>,
    eof_marker: bool,
    /// The region being read (htslib's `CRAM_OPT_RANGE`), once [`Reader::seek_range`] set it.
    range: Option<Range>,
    /// The range's end was reached.
    range_done: bool,
    /// Offset of the first container after the header's.
    first_container: u64,
    /// A container's blocks ran past its length (read leniently, as htslib reads them): from
    /// then on no container is skipped by its length alone.
    long_blocks: bool,
    /// Records are wanted without their bases (flags, positions, mates): no reference is
    /// read, as htslib reads none when `SAM_SEQ` is not among the required fields.
    without_bases: bool,
    /// MD and NM are made again when missing (htslib's `decode_md`, on unless
    /// `--input-fmt-option decode_md=0`).
    decode_md: bool,
    /// The slices' reference MD5s are not checked (`ignore_md5`).
    ignore_md5: bool,
    /// The transport for references at URLs (`REF_PATH` entries), if any.
    remote: Option<std::sync::Arc<dyn crate::remote::Remote>>,
    /// What workers make records whole with, once made ([`Reader::context`]).
    context: Option<std::sync::Arc<decode::Context>>,
    /// Decoding threads and the containers queued for them ([`Reader::set_threads`]).
    pool: Option<threads::Pool>,
    /// The caller's record layout, when records are laid out where they are made whole
    /// ([`Reader::set_layout`]).
    laying: Option<laid::Laying>,
    /// Reference bases read before their slices came ([`Reader::read_references_ahead`]).
    ahead: ahead::Spans,
    /// The `.crai`'s lines by container offset ([`Reader::set_index`]).
    index: BTreeMap<u64, Vec<crate::crai::CraiEntry>>,
    /// The next container read is the first of a planned range (the index led there).
    fresh: bool,
    /// `limit` is the end of a planned byte range (not a header's peek past the plan).
    in_plan: bool,
}

/// A region as htslib's CRAM reader filters records by it: reference `ref_id` (-1: the
/// unplaced reads), 1-based `start..=end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The reference id (-1: the unplaced reads).
    pub ref_id: i32,
    /// The 1-based start.
    pub start: i64,
    /// The 1-based end (inclusive).
    pub end: i64,
}

impl Reader {
    /// Opens a CRAM file, reading its definition and header. `prefix` names generated reads.
    pub fn open(
        file: impl Read + Seek + Send + 'static,
        prefix: &str,
        reference: Option<Fasta>,
    ) -> Result<Reader, Error> {
        Reader::open_source(Plain(file), prefix, reference)
    }

    /// [`Reader::open`] on a byte source that takes advice (a remote file): a planned range
    /// query tells it up front which bytes it will read ([`Reader::advise`]), and each
    /// container's end as it reads it.
    pub fn open_source(
        file: impl Source + Send + 'static,
        prefix: &str,
        reference: Option<Fasta>,
    ) -> Result<Reader, Error> {
        let mut file: Box<dyn Source + Send> = Box::new(file);
        // A remote file is asked for the definition and a header's worth, not its first
        // megabytes: a region query fetches only the containers it needs.
        file.set_readahead_limit(Some((FileDefinition::LEN + OPENING_GUESS) as u64));
        // The opening is asked for before the size: a remote file learns its size from that
        // response's headers, where asking first would cost a round trip of its own.
        let mut def = [0u8; FileDefinition::LEN];
        let n = read_at(file.as_mut(), 0, &mut def)?;
        // A stream (standard input) has no known size: it ends where its bytes do.
        let size = file.size().map_err(|e| Error::at(0, e.to_string()))?;
        let stream = size.is_none();
        let file_len = size.unwrap_or(u64::MAX);
        let def = FileDefinition::parse(&def[..n])?;
        let mut r = Reader {
            file,
            file_len,
            stream,
            planned: None,
            later: std::collections::VecDeque::new(),
            pass: 0,
            limit: (FileDefinition::LEN + OPENING_GUESS) as u64,
            version: def.version,
            header: SamHeader::from_text(Vec::new()),
            at: FileDefinition::LEN as u64,
            explicit: reference.is_some(),
            reference,
            prefix: prefix.to_string(),
            whole: BTreeMap::new(),
            eof_marker: false,
            range: None,
            range_done: false,
            first_container: 0,
            long_blocks: false,
            without_bases: false,
            decode_md: true,
            ignore_md5: false,
            remote: None,
            context: None,
            pool: None,
            laying: None,
            ahead: ahead::Spans::default(),
            index: BTreeMap::new(),
            fresh: false,
            in_plan: false,
        };
        let (_, body) = r
            .container(&|_| false)?
            .ok_or_else(|| Error::at(FileDefinition::LEN as u64, "no header container"))?;
        let (body, body_at) =
            body.ok_or_else(|| Error::at(FileDefinition::LEN as u64, "no header container"))?;
        r.header = SamHeader::read(&body, body_at, r.version)?;
        r.first_container = r.at;
        r.file.set_readahead_limit(None);
        r.limit = u64::MAX;
        Ok(r)
    }

    /// Decodes with `reference` (as `-T` gives it), set after the opening: a caller may fetch
    /// a remote reference's index while the file's opening is read.
    pub fn set_reference(&mut self, reference: Fasta) {
        self.forget_ahead();
        self.reference = Some(reference);
        self.explicit = true;
    }

    /// The reference `-T` gave ([`Reader::open`], [`Reader::set_reference`]), if any.
    pub fn reference(&self) -> Option<&Fasta> {
        self.reference.as_ref().filter(|_| self.explicit)
    }

    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The SAM header.
    pub fn header(&self) -> &SamHeader {
        &self.header
    }

    /// The CRAM version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Whether the file ended in the EOF container (known once every slice has been read).
    pub fn has_eof_marker(&self) -> bool {
        self.eof_marker
    }

    /// The whole file was read and it did not end in the EOF container (htslib warns at
    /// close: the input is probably truncated).
    pub fn ended_without_eof_marker(&self) -> bool {
        self.at >= self.file_len && !self.eof_marker && self.version.has_eof_container()
    }

    /// Makes records without reading any reference: their bases are wrong (`=` where the
    /// reference would give them) and they carry no MD/NM made again, but flags, positions,
    /// CIGARs, mates and tags are whole. For counting (`flagstat`), not for printing.
    pub fn without_bases(&mut self) {
        self.without_bases = true;
    }

    /// htslib's `decode_md` option: whether missing MD and NM are made again.
    pub fn set_decode_md(&mut self, on: bool) {
        self.decode_md = on;
        self.context = None;
    }

    /// htslib's `ignore_md5` option: whether the slices' reference MD5s go unchecked.
    pub fn set_ignore_md5(&mut self, on: bool) {
        self.ignore_md5 = on;
    }

    /// The transport for references found at URLs (`REF_PATH`'s `http(s)://` entries).
    pub fn set_remote(&mut self, remote: std::sync::Arc<dyn crate::remote::Remote>) {
        self.remote = Some(remote);
    }

    /// Reads every record again from the first container.
    pub fn rewind(&mut self) {
        self.drop_queued();
        self.forget_ahead();
        self.later.clear();
        self.at = self.first_container;
        self.planned = None;
        self.limit = u64::MAX;
        self.range = None;
        self.range_done = false;
    }

    /// Reads `range` from here on, starting at the container at `offset` (from the index).
    pub fn seek_range(&mut self, offset: u64, range: Range) {
        self.drop_queued();
        self.later.clear();
        self.at = offset;
        self.planned = None;
        self.limit = u64::MAX;
        self.range = Some(range);
        self.range_done = false;
    }

    /// Reads `range` from the first of these containers (their byte ranges, from
    /// [`crate::crai::containers_for`]) on, as [`Reader::read_ranges`] does.
    pub fn read_containers(&mut self, containers: Vec<std::ops::Range<u64>>, range: Range) {
        self.read_ranges(vec![(containers, range)]);
    }

    /// Reads each range from its containers ([`crate::crai::containers_for`]'s), one range
    /// after another, and yields their records in that order. A range is read as htslib
    /// reads one from `cram_seek_to_refpos`: from its first container on, each container's
    /// own header deciding whether it is skipped, read, or ends the range, so that an index
    /// wrong about the later containers loses nothing; the containers given bound each read
    /// and are what a remote file was told to fetch ([`Reader::advise`]), with the first
    /// [`HEADER_PEEK`] bytes past the last, where the reading usually meets the container
    /// that ends the range. With workers, the containers of the later ranges are
    /// read and decoded while the earlier ones are taken: a query of several regions keeps
    /// every thread busy, where one range at a time leaves them idle between ranges.
    pub fn read_ranges(&mut self, ranges: Vec<(Vec<std::ops::Range<u64>>, Range)>) {
        self.drop_queued();
        self.later = ranges.into();
        self.planned = Some(std::collections::VecDeque::new());
        self.range_done = true;
        self.next_range();
    }

    /// Begins the next of the ranges given to [`Reader::read_ranges`]; false when none is
    /// left.
    fn next_range(&mut self) -> bool {
        let Some((containers, range)) = self.later.pop_front() else {
            return false;
        };
        self.planned = Some(containers.into());
        self.range = Some(range);
        self.range_done = false;
        self.fresh = true;
        self.pass += 1;
        true
    }

    /// Reads every record of the containers in these byte ranges, in the order given,
    /// unfiltered (the caller filters them: htslib's multi-region iterator, which reads
    /// where the index says and no further). A range holding more containers than the
    /// index named yields them all.
    pub fn read_planned(&mut self, containers: Vec<std::ops::Range<u64>>) {
        // Containers queued for an earlier plan (`-P`'s first pass) are not this one's.
        self.drop_queued();
        self.later.clear();
        self.planned = Some(containers.into());
        self.range = None;
        self.range_done = false;
        self.fresh = true;
    }

    /// Tells the byte source which ranges will be read, in order ([`Hints::advise`]).
    pub fn advise(&mut self, ranges: &[std::ops::Range<u64>]) {
        self.file.advise(ranges);
    }

    /// The file's last `len` bytes (`None` when it is shorter), read alone: where the EOF
    /// container should be.
    pub fn tail(&mut self, len: usize) -> Result<Option<Vec<u8>>, Error> {
        let Some(at) = self.file_len.checked_sub(len as u64) else {
            return Ok(None);
        };
        if self.stream {
            return Err(Error::at(at, "a stream's tail cannot be read ahead"));
        }
        self.file.set_readahead_limit(Some(self.file_len));
        let mut buf = vec![0u8; len];
        let n = read_at(self.file.as_mut(), at, &mut buf)?;
        buf.truncate(n);
        Ok(Some(buf))
    }

    /// Where the EOF container begins, if the file ends in one (else its end): the end of
    /// its last data container.
    pub fn data_end(&self) -> u64 {
        self.file_len
            .saturating_sub(self.version.eof_len() as u64)
            .max(self.first_container)
    }

    /// htslib's `cram_get_seq` filter: keep, skip, or end the range at this record.
    fn record_fate(r: &Range, ref_id: i32, pos: i64, end: i64) -> Fate {
        if r.ref_id == -1 && ref_id != -1 {
            return Fate::Skip;
        }
        if ref_id < r.ref_id && ref_id != -1 {
            return Fate::Skip;
        }
        if ref_id != r.ref_id || (r.ref_id != -1 && pos > r.end) {
            return Fate::End;
        }
        if r.ref_id != -1 && end < r.start {
            return Fate::Skip;
        }
        Fate::Keep
    }

    /// The records of the next container holding any; `None` at the end of the file.
    pub fn next_container(&mut self) -> Result<Option<Vec<Alignment>>, Error> {
        if self.pool.is_some() {
            return match self.next_decoded()? {
                None => Ok(None),
                Some(threads::Batch::Records(recs)) => Ok(Some(recs)),
                Some(threads::Batch::Laid(..)) => Err(Error::at(
                    self.at,
                    "records were laid out: read them with next_laid_out",
                )),
            };
        }
        match self.next_made(None)? {
            Some(Made::Records(recs)) => Ok(Some(recs)),
            Some(Made::Laid { .. }) | None => Ok(None),
        }
    }

    /// Whether the next container to read starts where the last one read ended: a remote
    /// file's bytes for it then come after that one's, over the same request. A region read
    /// past its planned containers reads a header's few bytes next (usually the container
    /// that ends it), which hold nothing back.
    fn next_follows(&self) -> bool {
        let Some(queue) = &self.planned else {
            return true;
        };
        if self.in_plan && self.at < self.limit {
            return true;
        }
        if queue.is_empty() && self.range.is_some() && !self.range_done {
            return false;
        }
        let next = queue
            .front()
            .or_else(|| self.later.front().and_then(|(c, _)| c.first()));
        next.is_some_and(|c| c.start == self.at)
    }
}

/// The records of a container that `range` keeps, and whether its end was reached (which
/// ends the reading of the range).
fn in_range(range: Option<&Range>, mut recs: Vec<Alignment>) -> (Vec<Alignment>, bool) {
    let Some(r) = range else {
        return (recs, false);
    };
    // Kept in place: records are large to move.
    let mut kept = 0;
    let mut ended = false;
    for i in 0..recs.len() {
        let a = &recs[i];
        match Reader::record_fate(r, a.ref_id, a.pos, a.end) {
            Fate::Keep => {
                recs.swap(kept, i);
                kept += 1;
            }
            Fate::Skip => {}
            Fate::End => {
                ended = true;
                break;
            }
        }
    }
    recs.truncate(kept);
    (recs, ended)
}

enum Fate {
    Keep,
    Skip,
    End,
}
