//! Reading a CRAM file from start to end: the header container, then each container's slices
//! decoded into whole records, with reference bases from a FASTA (checked against each slice's
//! MD5), from the slice itself (embedded), or none (reference-less files).

mod refs;

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};

use crate::alignment::Alignment;
use crate::fasta::Fasta;
use crate::header::SamHeader;
use crate::mates::{self, Link};
use crate::num::Cursor;
use crate::rebuild::{rebuild, RefView};
use crate::record::{cf, read_slice, Record};
use crate::series::{Bits, Streams};
use crate::{Block, CompressionHeader, ContainerHeader, ContentType, Error, FileDefinition};
use crate::{SliceHeader, Version};

/// Bytes read ahead for a container header: enough for any header samtools writes; a longer
/// one is read again whole.
const HEADER_GUESS: usize = 4096;

/// The most bytes of a container read at once.
const READ_STEP: usize = 4 << 20;

/// Bytes first read of the header container: its header (about 20 bytes), so that a remote
/// file is asked for no byte past the header container.
const OPENING_GUESS: usize = 64;

const UNMAPPED: u16 = 0x4;

pub struct Reader {
    file: Box<dyn Source>,
    file_len: u64,
    /// The source is read once in order (standard input): `file_len` is learnt at its end.
    stream: bool,
    /// The containers left to read of a planned range ([`Reader::read_containers`]), each
    /// its exact bytes, in the order read; `None`: containers are read one after another.
    planned: Option<std::collections::VecDeque<std::ops::Range<u64>>>,
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
    /// Whole references read for multi-reference slices, by id.
    whole: BTreeMap<i32, Vec<u8>>,
    eof_marker: bool,
    /// The region being read (htslib's `CRAM_OPT_RANGE`), once [`Reader::seek_range`] set it.
    range: Option<Range>,
    /// The range's end was reached.
    range_done: bool,
    /// Offset of the first container after the header's.
    first_container: u64,
    /// Records are wanted without their bases (flags, positions, mates): no reference is
    /// read, as htslib reads none when `SAM_SEQ` is not among the required fields.
    without_bases: bool,
    /// MD and NM are made again when missing (htslib's `decode_md`, on unless
    /// `--input-fmt-option decode_md=0`).
    decode_md: bool,
    /// The slices' reference MD5s are not checked (`ignore_md5`).
    ignore_md5: bool,
}

/// A region as htslib's CRAM reader filters records by it: reference `ref_id` (-1: the
/// unplaced reads), 1-based `start..=end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub ref_id: i32,
    pub start: i64,
    pub end: i64,
}

impl Reader {
    /// Opens a CRAM file, reading its definition and header. `prefix` names generated reads.
    pub fn open(
        file: impl Read + Seek + 'static,
        prefix: &str,
        reference: Option<Fasta>,
    ) -> Result<Reader, Error> {
        Reader::open_source(Plain(file), prefix, reference)
    }

    /// [`Reader::open`] on a byte source that takes advice (a remote file): a planned range
    /// query tells it up front which bytes it will read ([`Reader::advise`]), and each
    /// container's end as it reads it.
    pub fn open_source(
        file: impl Source + 'static,
        prefix: &str,
        reference: Option<Fasta>,
    ) -> Result<Reader, Error> {
        let mut file: Box<dyn Source> = Box::new(file);
        // A remote file is asked for the definition and a header's worth, not its first
        // megabytes: a region query fetches only the containers it needs.
        file.set_readahead_limit(Some((FileDefinition::LEN + OPENING_GUESS) as u64));
        // A stream (standard input) has no known size: it ends where its bytes do.
        let size = file.size().map_err(|e| Error::at(0, e.to_string()))?;
        let stream = size.is_none();
        let file_len = size.unwrap_or(u64::MAX);
        let mut def = [0u8; FileDefinition::LEN];
        let n = read_at(file.as_mut(), 0, &mut def)?;
        let def = FileDefinition::parse(&def[..n])?;
        let mut r = Reader {
            file,
            file_len,
            stream,
            planned: None,
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
            without_bases: false,
            decode_md: true,
            ignore_md5: false,
        };
        let (h, body, body_at) = r
            .container()?
            .ok_or_else(|| Error::at(FileDefinition::LEN as u64, "no header container"))?;
        let _ = h;
        r.header = SamHeader::read(&body, body_at, r.version)?;
        r.first_container = r.at;
        r.file.set_readahead_limit(None);
        r.limit = u64::MAX;
        Ok(r)
    }

    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    pub fn header(&self) -> &SamHeader {
        &self.header
    }

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
        self.at >= self.file_len && !self.eof_marker
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
    }

    /// htslib's `ignore_md5` option: whether the slices' reference MD5s go unchecked.
    pub fn set_ignore_md5(&mut self, on: bool) {
        self.ignore_md5 = on;
    }

    /// Reads every record again from the first container.
    pub fn rewind(&mut self) {
        self.at = self.first_container;
        self.planned = None;
        self.limit = u64::MAX;
        self.range = None;
        self.range_done = false;
    }

    /// Reads `range` from here on, starting at the container at `offset` (from the index).
    pub fn seek_range(&mut self, offset: u64, range: Range) {
        self.at = offset;
        self.planned = None;
        self.limit = u64::MAX;
        self.range = Some(range);
        self.range_done = false;
    }

    /// Reads `range` from exactly these containers (their byte ranges, from
    /// [`crate::crai::containers_for`]), and nothing after them.
    pub fn read_containers(&mut self, containers: Vec<std::ops::Range<u64>>, range: Range) {
        self.planned = Some(containers.into());
        self.range = Some(range);
        self.range_done = false;
    }

    /// Tells the byte source which ranges will be read, in order ([`Source::advise`]).
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

    /// What the range makes of a container: htslib skips one that cannot hold its records
    /// unread, and ends the range at one of another single reference.
    fn container_fate(&self, h: &ContainerHeader) -> Fate {
        let Some(r) = self.range else {
            return Fate::Keep;
        };
        if h.reference_id == crate::slice::MULTI_REF {
            return Fate::Keep;
        }
        let end = i64::from(h.start) + i64::from(h.span) - 1;
        if h.reference_id < r.ref_id
            || (r.ref_id >= 0 && h.reference_id == r.ref_id && end < r.start)
        {
            return Fate::Skip;
        }
        if h.reference_id != r.ref_id {
            return Fate::End;
        }
        Fate::Keep
    }

    /// htslib's `cram_get_seq` filter: keep, skip, or end the range at this record.
    fn record_fate(r: &Range, a: &Alignment) -> Fate {
        if r.ref_id == -1 && a.ref_id != -1 {
            return Fate::Skip;
        }
        if a.ref_id < r.ref_id && a.ref_id != -1 {
            return Fate::Skip;
        }
        if a.ref_id != r.ref_id || (r.ref_id != -1 && a.pos > r.end) {
            return Fate::End;
        }
        if r.ref_id != -1 && a.end < r.start {
            return Fate::Skip;
        }
        Fate::Keep
    }

    /// The next container: its header, its body and the body's offset; `None` at the end.
    fn container(&mut self) -> Result<Option<(ContainerHeader, Vec<u8>, u64)>, Error> {
        if self.at >= self.file_len {
            return Ok(None);
        }
        let mut left = usize::try_from(self.file_len - self.at).unwrap_or(usize::MAX);
        // The first read stays within the container when its end is known; a longer header
        // or body is read on exactly.
        let bound = usize::try_from(self.limit.saturating_sub(self.at)).unwrap_or(usize::MAX);
        let mut want = left.min(HEADER_GUESS).min(bound.max(1));
        loop {
            let mut buf = vec![0u8; want];
            let n = read_at(self.file.as_mut(), self.at, &mut buf)?;
            buf.truncate(n);
            if n == 0 && self.stream {
                self.file_len = self.at;
                return Ok(None);
            }
            if n < want {
                // The end is in sight (a stream's, or a file that shrank): nothing more to
                // read for a longer header.
                left = n;
            }
            match ContainerHeader::parse_header(&buf, self.at, self.version) {
                Ok(h) => {
                    // Then exactly the rest of the container (no more than the file holds:
                    // a length past its end is refused by the full parse below).
                    let total = h.header_len.saturating_add(h.length).min(left);
                    if total > buf.len() {
                        if self.limit != u64::MAX {
                            // Exact reads (opening, planned containers): a remote file is
                            // asked for the container's bytes and none past them.
                            self.file.set_readahead_limit(Some(self.at + total as u64));
                        }
                        // In steps, so that a length a stream does not hold costs no more
                        // memory than its bytes.
                        let mut have = buf.len();
                        while have < total {
                            let step = (total - have).min(READ_STEP);
                            buf.resize(have + step, 0);
                            let at = self.at + have as u64;
                            let n = read_at(self.file.as_mut(), at, &mut buf[have..])?;
                            buf.truncate(have + n);
                            have += n;
                            if n < step {
                                break;
                            }
                        }
                    }
                    let h = ContainerHeader::parse(&buf, self.at, self.version)?;
                    let body_at = self.at + h.header_len as u64;
                    let body = buf[h.header_len..h.header_len + h.length].to_vec();
                    self.at = body_at + h.length as u64;
                    return Ok(Some((h, body, body_at)));
                }
                // A header longer than guessed: read more.
                Err(_) if buf.len() == want && want < left => want = (want * 4).min(left),
                Err(e) => return Err(e),
            }
        }
    }

    /// The records of the next container holding any; `None` at the end of the file.
    pub fn next_container(&mut self) -> Result<Option<Vec<Alignment>>, Error> {
        loop {
            if let Some(queue) = self.planned.as_mut() {
                let Some(next) = queue.pop_front() else {
                    return Ok(None);
                };
                if self.range_done {
                    return Ok(None);
                }
                self.at = next.start;
                self.limit = next.end;
                self.file.set_readahead_limit(Some(next.end));
            }
            let Some((h, body, body_at)) = self.container()? else {
                return Ok(None);
            };
            if h.records == 0 && h.landmarks.is_empty() {
                // A stream's EOF container is known as its last only when nothing follows.
                if self.at >= self.file_len || self.stream {
                    self.eof_marker = true;
                }
                continue;
            }
            self.eof_marker = false;
            if self.range_done {
                return Ok(None);
            }
            match self.container_fate(&h) {
                Fate::End => {
                    self.range_done = true;
                    return Ok(None);
                }
                Fate::Skip => continue,
                Fate::Keep => {}
            }
            let mut recs = self.decode_container(&h, &body, body_at)?;
            if let Some(r) = self.range {
                let mut kept = Vec::with_capacity(recs.len());
                for a in recs {
                    match Self::record_fate(&r, &a) {
                        Fate::Keep => kept.push(a),
                        Fate::Skip => {}
                        Fate::End => {
                            self.range_done = true;
                            break;
                        }
                    }
                }
                recs = kept;
            }
            return Ok(Some(recs));
        }
    }

    fn decode_container(
        &mut self,
        h: &ContainerHeader,
        body: &[u8],
        body_at: u64,
    ) -> Result<Vec<Alignment>, Error> {
        let mut c = Cursor::new(body, body_at);
        let b = Block::read(&mut c, self.version)?;
        let ch = CompressionHeader::parse(&b.decode()?, b.offset)?;
        let mut out = Vec::new();
        for _ in &h.landmarks {
            let b = Block::read(&mut c, self.version)?;
            let at = b.offset;
            let sh = SliceHeader::parse(&b.decode()?, b.offset, self.version)?;
            let mut blocks = Vec::new();
            for _ in 0..sh.blocks {
                let b = Block::read(&mut c, self.version)?;
                blocks.push((
                    b.content_type,
                    b.content_id,
                    b.decode()?.into_owned(),
                    b.offset,
                ));
            }
            out.extend(self.decode_slice(&ch, &sh, &blocks, at)?);
        }
        Ok(out)
    }

    fn decode_slice(
        &mut self,
        ch: &CompressionHeader,
        sh: &SliceHeader,
        blocks: &[(ContentType, i32, Vec<u8>, u64)],
        at: u64,
    ) -> Result<Vec<Alignment>, Error> {
        let core = blocks
            .iter()
            .find(|b| b.0 == ContentType::Core)
            .ok_or_else(|| Error::at(at, "slice without a core block"))?;
        let mut s = Streams {
            core: Bits::new(&core.2, core.3),
            external: blocks
                .iter()
                .filter(|b| b.0 == ContentType::External)
                .map(|b| (b.1, Cursor::new(&b.2, b.3)))
                .collect(),
        };
        let stored = read_slice(ch, sh, &mut s)?;
        // A mapped read's bases come from the reference or from the slice's blocks, so its
        // length is bounded by both together; a larger one is a lie, refused before allocating.
        let stored_bytes: i64 = blocks.iter().map(|b| b.2.len() as i64).sum();
        for r in &stored {
            let most = self
                .header
                .reference_len(r.reference_id)
                .max(i64::from(sh.span))
                + stored_bytes;
            if i64::from(r.read_length) > most {
                return Err(Error::at(
                    at,
                    format!(
                        "read length {} exceeds what the slice can hold",
                        r.read_length
                    ),
                ));
            }
        }
        // The reference bases this slice is rebuilt against.
        let slice_ref: Option<(Vec<u8>, i64, i64)> = if sh.reference_id < 0 {
            None
        } else if sh.embedded_reference >= 0 {
            let b = blocks
                .iter()
                .find(|b| b.0 == ContentType::External && b.1 == sh.embedded_reference)
                .ok_or_else(|| Error::at(at, "embedded reference block missing"))?;
            if i64::from(sh.span) > b.2.len() as i64 {
                return Err(Error::at(b.3, "embedded reference is too small"));
            }
            self.check_md5(sh, &b.2, at)?;
            let start = i64::from(sh.start);
            Some((b.2.clone(), start, start + i64::from(sh.span) - 1))
        } else if !ch.reference_required || self.without_bases {
            None
        } else {
            Some(self.slice_reference(sh, at)?)
        };
        if sh.reference_id == crate::slice::MULTI_REF
            && ch.reference_required
            && !self.without_bases
        {
            // Only the references of this slice are kept.
            self.whole.clear();
            for r in &stored {
                if r.reference_id >= 0 && r.bam_flags & i32::from(UNMAPPED) == 0 {
                    self.load_whole(r.reference_id, at)?;
                }
            }
        }
        let mut recs = Vec::with_capacity(stored.len());
        let mut links = Vec::with_capacity(stored.len());
        for (i, r) in stored.into_iter().enumerate() {
            let view = match &slice_ref {
                Some((bases, start, end)) => Some(RefView {
                    bases,
                    start: *start,
                    end: *end,
                }),
                None => self.whole.get(&r.reference_id).map(|bases| RefView {
                    bases,
                    start: 1,
                    end: bases.len() as i64,
                }),
            };
            let (a, link) = self.alignment(ch, r, view, i, at)?;
            recs.push(a);
            links.push(link);
        }
        mates::resolve(&mut recs, &mut links, at)?;
        mates::name_unnamed(&mut recs, &links, &self.prefix, sh.record_counter);
        Ok(recs)
    }

    /// One record made whole, and what mate resolution needs.
    fn alignment(
        &self,
        ch: &CompressionHeader,
        mut r: Record,
        view: Option<RefView<'_>>,
        index: usize,
        at: u64,
    ) -> Result<(Alignment, Link), Error> {
        let flags = u16::try_from(r.bam_flags)
            .map_err(|_| Error::at(at, format!("BAM flags {}", r.bam_flags)))?;
        let nref = self.header.references.len() as i32;
        if r.reference_id < -1 || r.reference_id >= nref {
            return Err(Error::at(
                at,
                format!("unknown reference id {}", r.reference_id),
            ));
        }
        let mut aux = Vec::new();
        let (mut has_md, mut has_nm) = (false, false);
        for (key, value) in &r.tags {
            if &key[..2] == b"MD" {
                has_md = true;
            }
            if &key[..2] == b"NM" {
                has_nm = true;
            }
            if key == b"cFC" && value.len() == 1 {
                // CRAM's own flags: bit 1 keeps MD from being made, bit 2 NM.
                has_md |= value[0] & 1 != 0;
                has_nm |= value[0] & 2 != 0;
                continue;
            }
            aux.extend_from_slice(key);
            aux.extend_from_slice(value);
        }
        if !self.decode_md {
            // As if both were stored: nothing is made.
            (has_md, has_nm) = (true, true);
        }
        let len = usize::try_from(r.read_length).unwrap_or(0);
        let mut a = Alignment {
            name_stored: !r.name.is_empty(),
            flags,
            ref_id: r.reference_id,
            pos: i64::from(r.position),
            end: i64::from(r.position),
            mate_ref_id: -1,
            ..Alignment::default()
        };
        if flags & UNMAPPED == 0 {
            if r.position <= 0 {
                return Err(Error::at(
                    at,
                    format!(
                        "read has alignment position {} but no unmapped flag",
                        r.position
                    ),
                ));
            }
            let ref_len = self.header.reference_len(r.reference_id);
            let built = rebuild(ch, &r, view, ref_len, has_md, has_nm, at)?;
            a.seq = built.seq;
            a.qual = if r.cram_flags & cf::QUALITY_ARRAY != 0 {
                std::mem::take(&mut r.qualities)
            } else {
                built.qual
            };
            a.cigar = built.cigar;
            a.end = built.end;
            a.mapq = u8::try_from(r.mapping_quality).unwrap_or(r.mapping_quality as u8);
            aux.extend_from_slice(&built.md_nm);
        } else {
            a.seq = if r.bases.len() == len {
                std::mem::take(&mut r.bases)
            } else {
                vec![if view.is_some() { b'N' } else { b'=' }; len]
            };
            a.qual = if r.cram_flags & cf::QUALITY_ARRAY != 0 {
                std::mem::take(&mut r.qualities)
            } else {
                vec![255; len]
            };
        }
        if flags & UNMAPPED == 0 && r.cram_flags & cf::NO_SEQUENCE != 0 {
            a.seq.clear();
            a.qual.clear();
        }
        // RG from the RG series goes last, as htslib appends it.
        let rgs = &self.header.read_groups;
        let unknown = rgs.last().is_some_and(|g| g == b"UNKNOWN");
        let rg = if unknown && r.read_group == rgs.len() as i32 - 1 {
            -1
        } else {
            r.read_group
        };
        if rg < -1 || rg >= rgs.len() as i32 {
            return Err(Error::at(at, format!("read group {rg} not in the header")));
        }
        if rg >= 0 {
            aux.extend_from_slice(b"RGZ");
            aux.extend_from_slice(&rgs[rg as usize]);
            aux.push(0);
        }
        a.aux = aux;
        a.name = std::mem::take(&mut r.name);
        let detached = r.cram_flags & cf::DETACHED != 0;
        let mut link = Link {
            mate_line: -1,
            tlen_unset: true,
            detached,
            mate_flags: 0,
        };
        if detached {
            link.mate_flags = r.mate_flags;
            a.mate_ref_id = r.mate_reference_id;
            a.mate_pos = i64::from(r.mate_position);
            a.tlen = i64::from(r.template_size);
            link.tlen_unset = false;
        } else if let Some(d) = r.mate_distance {
            link.mate_line = index as i64 + 1 + i64::from(d);
        }
        Ok((a, link))
    }
}

enum Fate {
    Keep,
    Skip,
    End,
}

/// Any byte source with a position: a local file, or a remote one through hfile.
pub trait ReadSeek: Read + Seek {}

impl<T: Read + Seek> ReadSeek for T {}

/// A byte source that may take advice on what will be read (a remote file fetches the
/// ranges ahead, several at once, and asks for no byte past the limit).
pub trait Source: Read + Seek {
    /// The byte ranges that will be read next, in order.
    fn advise(&mut self, _ranges: &[std::ops::Range<u64>]) {}
    /// Reads from here on need no byte at or past `limit`.
    fn set_readahead_limit(&mut self, _limit: Option<u64>) {}
    /// The size in bytes; `None` for a stream read once in order (its offsets only grow,
    /// except back to bytes of the container being read).
    fn size(&mut self) -> std::io::Result<Option<u64>> {
        self.seek(SeekFrom::End(0)).map(Some)
    }
}

/// A source that takes no advice (a local file, bytes in memory).
struct Plain<T>(T);

impl<T: Read> Read for Plain<T> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl<T: Seek> Seek for Plain<T> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.0.seek(pos)
    }
}

impl<T: Read + Seek> Source for Plain<T> {}

fn read_at(file: &mut dyn Source, at: u64, buf: &mut [u8]) -> Result<usize, Error> {
    file.seek(SeekFrom::Start(at))
        .map_err(|e| Error::at(at, e.to_string()))?;
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::at(at, e.to_string())),
        }
    }
    Ok(n)
}
