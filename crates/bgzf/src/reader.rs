//! Reading BGZF (and, sequentially, plain gzip or uncompressed) data from an [`HFile`].

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::sync::Arc;

use crossbeam_channel::Receiver;
use flate2::bufread::MultiGzDecoder;
use hfile::HFile;
use libdeflater::Decompressor;

use crate::block::{self, EOF_MARKER, FIXED_HEADER_LEN, HEADER_LEN};
use crate::limit::{byte_limit, BlockStarts};
use crate::pool::{Inflated, Pool, RawBlock};
use crate::{Error, Result, VirtualOffset};

/// The container a [`Reader`] found at the start of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Blocked gzip: random access by virtual offset.
    Bgzf,
    /// A gzip stream that is not BGZF (possibly several members): sequential reading only.
    Gzip,
    /// No gzip container (or an empty file): the bytes are passed through, sequentially.
    Raw,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Bgzf => "BGZF",
            Format::Gzip => "plain gzip",
            Format::Raw => "uncompressed",
        })
    }
}

/// Reads the uncompressed data of a BGZF file, with seeks by virtual offset, bounded seeks that
/// tell the byte source how far to read, and optional multi-threaded inflation.
///
/// The container is detected from the first bytes as htslib does: BGZF; other gzip (decompressed
/// as one stream, no seeking); or no gzip magic at all (passed through, no seeking).
///
/// ```
/// let mut w = bgzf::Writer::new(Vec::new());
/// std::io::Write::write_all(&mut w, b"hello").unwrap();
/// let bytes = w.finish().unwrap();
/// let mut r = bgzf::Reader::new(hfile::HFile::from_bytes("demo", bytes)).unwrap();
/// let mut buf = [0u8; 5];
/// r.read_exact(&mut buf).unwrap();
/// assert_eq!(&buf, b"hello");
/// assert!(!r.read_exact_or_eof(&mut buf).unwrap(), "clean end of data");
/// assert!(r.check_eof_marker().unwrap());
/// ```
pub struct Reader {
    name: Arc<str>,
    inner: Inner,
}

enum Inner {
    Bgzf(Box<BgzfState>),
    Gzip(GzipState),
    Raw(RawState),
}

struct GzipState {
    decoder: MultiGzDecoder<HFile>,
    upos: u64,
}

struct RawState {
    hfile: HFile,
    upos: u64,
}

/// Virtual offsets of a stream without blocks: the uncompressed position split into 64 KiB
/// pages, which is what htslib reports for such files. Not seekable.
fn stream_offset(upos: u64) -> VirtualOffset {
    VirtualOffset::new(upos & !0xffff, (upos & 0xffff) as u16)
}

impl Reader {
    /// Detects the container and prepares to read from the current position of `hfile`
    /// (normally 0: BGZF offsets are file offsets).
    pub fn new(mut hfile: HFile) -> Result<Reader> {
        let name: Arc<str> = Arc::from(hfile.name());
        let start = hfile.tell();
        let mut prefix = vec![0u8; HEADER_LEN];
        let n = hfile.read_full(&mut prefix)?;
        prefix.truncate(n);
        // htslib calls data compressed only when a whole 18-byte header is there.
        let format = if n == HEADER_LEN && block::has_gzip_magic(&prefix) {
            let xlen = usize::from(u16::from_le_bytes([prefix[10], prefix[11]]));
            if prefix[3] & 0x04 != 0 && FIXED_HEADER_LEN + xlen > HEADER_LEN {
                prefix.resize(FIXED_HEADER_LEN + xlen, 0);
                let more = hfile.read_full(&mut prefix[HEADER_LEN..])?;
                prefix.truncate(HEADER_LEN + more);
            }
            if block::is_bgzf_header(&prefix) {
                Format::Bgzf
            } else {
                Format::Gzip
            }
        } else {
            Format::Raw
        };
        hfile.seek_to(start)?;
        let inner = match format {
            Format::Bgzf => Inner::Bgzf(Box::new(BgzfState::new(hfile, Arc::clone(&name), start))),
            Format::Gzip => Inner::Gzip(GzipState {
                decoder: MultiGzDecoder::new(hfile),
                upos: 0,
            }),
            Format::Raw => Inner::Raw(RawState { hfile, upos: 0 }),
        };
        Ok(Reader { name, inner })
    }

    /// The name of the file (path or URL), for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The container found at the start of the file.
    pub fn format(&self) -> Format {
        match self.inner {
            Inner::Bgzf(_) => Format::Bgzf,
            Inner::Gzip(_) => Format::Gzip,
            Inner::Raw(_) => Format::Raw,
        }
    }

    /// Reads up to `buf.len()` bytes, never past the end of the current block, so that data
    /// before a damaged block is always delivered before the error. Returns 0 at the end of the
    /// data (or when `buf` is empty).
    pub fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match &mut self.inner {
            Inner::Bgzf(s) => s.read(buf),
            Inner::Raw(s) => {
                let n = s.hfile.read_some(buf)?;
                s.upos += n as u64;
                Ok(n)
            }
            Inner::Gzip(s) => match io::Read::read(&mut s.decoder, buf) {
                Ok(n) => {
                    s.upos += n as u64;
                    Ok(n)
                }
                Err(e) => Err(gzip_error(e, &self.name, s.decoder.get_ref().tell())),
            },
        }
    }

    /// Fills `buf` completely; [`Error::UnexpectedEof`] (naming the virtual offset the read
    /// started at) if the data ends first.
    pub fn read_exact(&mut self, buf: &mut [u8]) -> Result<()> {
        let at = self.virtual_offset();
        let got = self.read_full(buf)?;
        if got < buf.len() {
            return Err(self.eof_error(at, buf.len(), got));
        }
        Ok(())
    }

    /// Like [`Reader::read_exact`], but `Ok(false)` when the data ends before the first byte:
    /// a clean end at a record boundary. Ending part-way is still an error.
    pub fn read_exact_or_eof(&mut self, buf: &mut [u8]) -> Result<bool> {
        let at = self.virtual_offset();
        let got = self.read_full(buf)?;
        if got == 0 && !buf.is_empty() {
            return Ok(false);
        }
        if got < buf.len() {
            return Err(self.eof_error(at, buf.len(), got));
        }
        Ok(true)
    }

    fn read_full(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut got = 0;
        while got < buf.len() {
            let n = self.read(&mut buf[got..])?;
            if n == 0 {
                break;
            }
            got += n;
        }
        Ok(got)
    }

    fn eof_error(&self, at: VirtualOffset, wanted: usize, got: usize) -> Error {
        Error::UnexpectedEof {
            name: self.name.to_string(),
            at,
            wanted,
            got,
        }
    }

    /// The virtual offset of the next byte to be read. After the last byte of a block this is
    /// the next block's start with in-block offset 0, as in htslib. For gzip and uncompressed
    /// files it is the uncompressed position split into 64 KiB pages (not seekable).
    pub fn virtual_offset(&self) -> VirtualOffset {
        match &self.inner {
            Inner::Bgzf(s) => s.virtual_offset(),
            Inner::Gzip(s) => stream_offset(s.upos),
            Inner::Raw(s) => stream_offset(s.upos),
        }
    }

    /// Moves to `target`, with no read-ahead bound (the byte source may stream to the end).
    ///
    /// Nothing is read until the next read, so a damaged block is reported only when it is
    /// needed. An in-block offset equal to the block's length is allowed (the next read starts
    /// at the following block); a larger one is [`Error::SeekPastBlock`], from this call when
    /// the target block is the current one, else from the next read.
    pub fn seek(&mut self, target: VirtualOffset) -> Result<()> {
        let s = self.bgzf_mut()?;
        s.set_limit(None);
        s.seek(target)
    }

    /// Moves to `start` and tells the byte source that reading the chunk `[start, end)` needs
    /// only the bytes before [`byte_limit`]`(start, end, known block starts, file size)`.
    ///
    /// The limit is a hint: reading on past it (the record that straddles the chunk end) still
    /// works. Read-ahead by worker threads never goes past it.
    pub fn seek_limit(&mut self, start: VirtualOffset, end: VirtualOffset) -> Result<()> {
        let s = self.bgzf_mut()?;
        let size = s.size()?;
        let known = s
            .block_starts
            .as_deref()
            .map_or(&[][..], BlockStarts::as_slice);
        let end = byte_limit(start, end, known, size);
        // The limit goes down before the seek, so the byte source never starts an unbounded
        // request for this chunk.
        s.set_limit(Some(end));
        s.seek(start)
    }

    /// The read-ahead byte limit in force (`None` after a plain [`Reader::seek`]).
    pub fn readahead_limit(&self) -> Option<u64> {
        match &self.inner {
            Inner::Bgzf(s) => s.limit,
            _ => None,
        }
    }

    /// Gives the known block starts used by [`Reader::seek_limit`] to find where a chunk's last
    /// block ends.
    pub fn set_block_starts(&mut self, starts: Arc<BlockStarts>) {
        if let Inner::Bgzf(s) = &mut self.inner {
            s.block_starts = Some(starts);
        }
    }

    /// Inflates blocks on `threads` worker threads when `threads >= 2`; 0 or 1 inflates on the
    /// calling thread. Only BGZF files use threads. Read-ahead in progress is discarded (and
    /// redone as needed), so this may be called at any point.
    pub fn set_threads(&mut self, threads: usize) {
        if let Inner::Bgzf(s) = &mut self.inner {
            s.set_threads(threads);
        }
    }

    /// True when the file ends with the 28-byte BGZF EOF marker block. Reads the last 28 bytes
    /// and returns to the current position. A file shorter than 28 bytes has no marker.
    pub fn check_eof_marker(&mut self) -> Result<bool> {
        let (hfile, limit) = match &mut self.inner {
            Inner::Bgzf(s) => (&mut s.hfile, s.limit),
            Inner::Gzip(s) => (s.decoder.get_mut(), None),
            Inner::Raw(s) => (&mut s.hfile, None),
        };
        let size = hfile.size()?;
        if size < EOF_MARKER.len() as u64 {
            return Ok(false);
        }
        let saved = hfile.tell();
        hfile.set_readahead_limit(Some(size));
        let mut tail = [0u8; EOF_MARKER.len()];
        let read = hfile
            .seek_to(size - EOF_MARKER.len() as u64)
            .and_then(|()| hfile.read_full(&mut tail));
        hfile.set_readahead_limit(limit);
        let restored = hfile.seek_to(saved);
        let n = read?;
        restored?;
        Ok(n == EOF_MARKER.len() && tail == EOF_MARKER)
    }

    fn bgzf_mut(&mut self) -> Result<&mut BgzfState> {
        let format = self.format();
        match &mut self.inner {
            Inner::Bgzf(s) => Ok(s),
            _ => Err(Error::SeekUnsupported {
                name: self.name.to_string(),
                format,
            }),
        }
    }
}

/// Keeps transport errors as they are; anything else is a decompression failure.
fn gzip_error(e: io::Error, name: &str, offset: u64) -> Error {
    let kind = e.kind();
    match e.into_inner() {
        Some(inner) => match inner.downcast::<hfile::Error>() {
            Ok(h) => Error::Io(*h),
            Err(other) => Error::Gzip {
                name: name.to_string(),
                offset,
                source: io::Error::new(kind, other),
            },
        },
        None => Error::Gzip {
            name: name.to_string(),
            offset,
            source: io::Error::from(kind),
        },
    }
}

impl io::Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Reader::read(self, buf).map_err(io::Error::from)
    }
}

impl fmt::Debug for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("name", &self.name)
            .field("format", &self.format())
            .field("virtual_offset", &self.virtual_offset())
            .finish()
    }
}

/// The next block to fetch from the file, and the part of it read so far (read-ahead may stop
/// part-way to stay inside the limit).
struct Cursor {
    coffset: u64,
    bytes: Vec<u8>,
    header_len: Option<usize>,
    total: Option<usize>,
}

impl Cursor {
    fn at(coffset: u64) -> Cursor {
        Cursor {
            coffset,
            bytes: Vec::new(),
            header_len: None,
            total: None,
        }
    }
}

enum Fetched {
    Block(RawBlock),
    Eof,
    /// The next bytes lie at or past the limit.
    Stopped,
}

/// Reads the block at the cursor, stopping before any byte at or past `limit`.
fn fetch(hfile: &mut HFile, name: &str, cur: &mut Cursor, limit: Option<u64>) -> Result<Fetched> {
    loop {
        let target = match (cur.header_len, cur.total) {
            (None, _) => FIXED_HEADER_LEN,
            (Some(h), None) => h,
            (Some(_), Some(t)) => t,
        };
        let have = cur.bytes.len();
        if have < target {
            if limit.is_some_and(|l| cur.coffset.saturating_add(target as u64) > l) {
                return Ok(Fetched::Stopped);
            }
            let pos = cur.coffset + have as u64;
            if hfile.tell() != pos {
                hfile.seek_to(pos)?;
            }
            cur.bytes.resize(target, 0);
            let n = match hfile.read_full(&mut cur.bytes[have..]) {
                Ok(n) => n,
                Err(e) => {
                    cur.bytes.truncate(have);
                    return Err(e.into());
                }
            };
            cur.bytes.truncate(have + n);
            if have + n < target {
                if have + n == 0 {
                    return Ok(Fetched::Eof);
                }
                return Err(Error::TruncatedBlock {
                    name: name.to_string(),
                    offset: cur.coffset,
                    needed: target,
                    available: have + n,
                });
            }
        }
        match (cur.header_len, cur.total) {
            (None, _) => {
                let mut fixed = [0u8; FIXED_HEADER_LEN];
                fixed.copy_from_slice(&cur.bytes[..FIXED_HEADER_LEN]);
                let xlen = block::parse_fixed_header(&fixed, name, cur.coffset)?;
                cur.header_len = Some(FIXED_HEADER_LEN + xlen);
            }
            (Some(h), None) => {
                let extra = &cur.bytes[FIXED_HEADER_LEN..h];
                cur.total = Some(block::block_size(extra, name, cur.coffset)?);
            }
            (Some(header_len), Some(total)) => {
                let next = Cursor::at(cur.coffset + total as u64);
                let done = std::mem::replace(cur, next);
                return Ok(Fetched::Block(RawBlock {
                    coffset: done.coffset,
                    bytes: done.bytes,
                    header_len,
                }));
            }
        }
    }
}

/// A block handed to the workers, or the outcome that stopped read-ahead.
enum Ahead {
    Block {
        coffset: u64,
        clen: u64,
        answer: Receiver<Inflated>,
    },
    Failed(Error),
    Eof,
}

struct BgzfState {
    hfile: HFile,
    name: Arc<str>,
    /// The inflated data of the current block.
    block: Vec<u8>,
    block_coffset: u64,
    /// Compressed size of the current block (0: none loaded).
    block_clen: u64,
    pos: usize,
    /// After a seek to another block: the in-block offset to apply once it is loaded.
    pending_uoffset: Option<u16>,
    /// Where the next block comes from: the block after the last one queued or delivered.
    cursor: Cursor,
    limit: Option<u64>,
    size: Option<u64>,
    block_starts: Option<Arc<BlockStarts>>,
    decompressor: Decompressor,
    pool: Option<Pool>,
    /// Blocks after the current one, in file order.
    queue: VecDeque<Ahead>,
    /// Read-ahead reached the end or an error; it resumes once the consumer gets there.
    halted: bool,
}

impl BgzfState {
    fn new(hfile: HFile, name: Arc<str>, start: u64) -> BgzfState {
        BgzfState {
            hfile,
            name,
            block: Vec::new(),
            block_coffset: start,
            block_clen: 0,
            pos: 0,
            pending_uoffset: None,
            cursor: Cursor::at(start),
            limit: None,
            size: None,
            block_starts: None,
            decompressor: Decompressor::new(),
            pool: None,
            queue: VecDeque::new(),
            halted: false,
        }
    }

    fn size(&mut self) -> Result<u64> {
        if let Some(size) = self.size {
            return Ok(size);
        }
        let size = self.hfile.size()?;
        self.size = Some(size);
        Ok(size)
    }

    fn set_limit(&mut self, limit: Option<u64>) {
        self.limit = limit;
        self.hfile.set_readahead_limit(limit);
    }

    fn virtual_offset(&self) -> VirtualOffset {
        if let Some(u) = self.pending_uoffset {
            VirtualOffset::new(self.block_coffset, u)
        } else if self.pos < self.block.len() {
            VirtualOffset::new(self.block_coffset, self.pos as u16)
        } else {
            VirtualOffset::new(self.block_coffset + self.block_clen, 0)
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.pos >= self.block.len() && !self.load_next_block()? {
            return Ok(0);
        }
        let avail = &self.block[self.pos..];
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        self.pos += n;
        Ok(n)
    }

    /// Makes the next block with data current; false at the end of the file.
    fn load_next_block(&mut self) -> Result<bool> {
        loop {
            let Some((coffset, clen, data)) = self.take_next()? else {
                if let Some(u) = self.pending_uoffset.filter(|&u| u > 0) {
                    return Err(Error::SeekPastBlock {
                        name: self.name.to_string(),
                        target: VirtualOffset::new(self.block_coffset, u),
                        block_len: 0,
                    });
                }
                return Ok(false);
            };
            self.block = data;
            self.block_coffset = coffset;
            self.block_clen = clen;
            self.pos = 0;
            if let Some(u) = self.pending_uoffset.take() {
                if usize::from(u) > self.block.len() {
                    let block_len = self.block.len();
                    self.pos = block_len;
                    return Err(Error::SeekPastBlock {
                        name: self.name.to_string(),
                        target: VirtualOffset::new(coffset, u),
                        block_len,
                    });
                }
                self.pos = usize::from(u);
            }
            if self.pos < self.block.len() {
                return Ok(true);
            }
        }
    }

    /// The next block's (coffset, compressed size, data), from the read-ahead queue or read now.
    fn take_next(&mut self) -> Result<Option<(u64, u64, Vec<u8>)>> {
        self.fill_queue();
        if let Some(front) = self.queue.pop_front() {
            return match front {
                Ahead::Block {
                    coffset,
                    clen,
                    answer,
                } => {
                    // Keep the workers busy while this thread waits.
                    self.fill_queue();
                    match answer.recv() {
                        Ok(Ok(data)) => Ok(Some((coffset, clen, data))),
                        Ok(Err(e)) => {
                            self.rewind_to(coffset);
                            Err(e)
                        }
                        Err(_) => {
                            self.rewind_to(coffset);
                            Err(Error::Thread {
                                name: self.name.to_string(),
                                offset: coffset,
                            })
                        }
                    }
                }
                Ahead::Failed(e) => {
                    self.halted = false;
                    Err(e)
                }
                Ahead::Eof => {
                    self.halted = false;
                    Ok(None)
                }
            };
        }
        // Single-threaded, or past the read-ahead limit: read just this block, on demand.
        match fetch(&mut self.hfile, &self.name, &mut self.cursor, None)? {
            Fetched::Block(raw) => {
                let clen = raw.bytes.len() as u64;
                match raw.inflate(&mut self.decompressor, &self.name) {
                    Ok(data) => Ok(Some((raw.coffset, clen, data))),
                    Err(e) => {
                        self.rewind_to(raw.coffset);
                        Err(e)
                    }
                }
            }
            Fetched::Eof | Fetched::Stopped => Ok(None),
        }
    }

    /// Reads blocks ahead for the workers, up to twice their number, inside the limit.
    fn fill_queue(&mut self) {
        let Some(pool) = &self.pool else {
            return;
        };
        let capacity = 2 * pool.threads();
        while !self.halted && self.queue.len() < capacity {
            match fetch(&mut self.hfile, &self.name, &mut self.cursor, self.limit) {
                Ok(Fetched::Stopped) => break,
                Ok(Fetched::Eof) => {
                    self.queue.push_back(Ahead::Eof);
                    self.halted = true;
                }
                Err(e) => {
                    self.queue.push_back(Ahead::Failed(e));
                    self.halted = true;
                }
                Ok(Fetched::Block(raw)) => {
                    let coffset = raw.coffset;
                    let clen = raw.bytes.len() as u64;
                    let answer = match pool.submit(raw) {
                        Ok(answer) => answer,
                        Err(raw) => {
                            // No worker left: inflate here, keeping the order.
                            let (tx, rx) = crossbeam_channel::bounded(1);
                            let _ = tx.send(raw.inflate(&mut self.decompressor, &self.name));
                            rx
                        }
                    };
                    self.queue.push_back(Ahead::Block {
                        coffset,
                        clen,
                        answer,
                    });
                }
            }
        }
    }

    /// Drops all read-ahead; the next block comes from `coffset`.
    fn rewind_to(&mut self, coffset: u64) {
        if let Some(pool) = &self.pool {
            pool.invalidate();
        }
        self.queue.clear();
        self.halted = false;
        self.cursor = Cursor::at(coffset);
    }

    /// Drops all read-ahead, keeping the position.
    fn reset_ahead(&mut self) {
        let next = if self.pending_uoffset.is_some() {
            self.block_coffset
        } else {
            self.block_coffset + self.block_clen
        };
        self.rewind_to(next);
    }

    fn seek(&mut self, target: VirtualOffset) -> Result<()> {
        let coffset = target.coffset();
        let uoffset = target.uoffset();
        if self.pending_uoffset.is_none() && self.block_clen > 0 && coffset == self.block_coffset {
            // Inside the current block: the queue still holds exactly the blocks after it.
            if usize::from(uoffset) > self.block.len() {
                return Err(Error::SeekPastBlock {
                    name: self.name.to_string(),
                    target,
                    block_len: self.block.len(),
                });
            }
            self.pos = usize::from(uoffset);
            return Ok(());
        }
        self.block.clear();
        self.pos = 0;
        self.block_clen = 0;
        self.block_coffset = coffset;
        self.pending_uoffset = Some(uoffset);
        let queued = self
            .queue
            .iter()
            .position(|a| matches!(a, Ahead::Block { coffset: c, .. } if *c == coffset));
        if let Some(i) = queued {
            // A block already read ahead: keep it and what follows it.
            self.queue.drain(..i);
        } else if !(self.queue.is_empty() && self.cursor.coffset == coffset) {
            self.rewind_to(coffset);
        }
        Ok(())
    }

    fn set_threads(&mut self, threads: usize) {
        let wanted = if threads >= 2 { threads } else { 0 };
        if self.pool.as_ref().map_or(0, Pool::threads) == wanted {
            return;
        }
        self.reset_ahead();
        self.pool = None;
        if wanted > 0 {
            self.pool = Pool::new(wanted, Arc::clone(&self.name));
        }
    }
}
