//! Reading BGZF (and, sequentially, plain gzip or uncompressed) data from a [`Source`].

use std::fmt;
use std::io::{self, SeekFrom};
use std::sync::Arc;

use flate2::read::MultiGzDecoder;
use hfile::HFile;

use crate::block::{EOF_MARKER, HEADER_LEN};
use crate::blocked::BgzfState;
use crate::raw_block::source_error;
use crate::sniff::sniff;
use crate::{Error, Result, Source, VirtualOffset};

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
/// # Examples
///
/// ```
/// let mut w = bgzf::Writer::new(Vec::new());
/// std::io::Write::write_all(&mut w, b"hello").unwrap();
/// let bytes = w.finish().unwrap();
/// let mut r = bgzf::Reader::new(hfile::HFile::from_bytes("demo", bytes)).unwrap();
/// let mut buf = [0u8; 5];
/// r.read_exact_data(&mut buf).unwrap();
/// assert_eq!(&buf, b"hello");
/// assert!(!r.read_exact_or_eof(&mut buf).unwrap(), "clean end of data");
/// assert!(r.check_eof_marker().unwrap());
/// ```
pub struct Reader<S = HFile> {
    name: Arc<str>,
    inner: Inner<S>,
}

enum Inner<S> {
    Bgzf(Box<BgzfState<S>>),
    Gzip(Stream<MultiGzDecoder<S>>),
    Raw(Stream<S>),
}

/// Size of the buffer of a stream without blocks (plain gzip or uncompressed).
const STREAM_BUFFER: usize = 64 * 1024;

/// A stream without blocks, buffered so that records can be parsed in place as with BGZF.
struct Stream<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    /// Bytes handed to the caller so far.
    upos: u64,
}

impl<R: io::Read> Stream<R> {
    fn new(inner: R) -> Stream<R> {
        Stream {
            inner,
            buf: Vec::new(),
            pos: 0,
            upos: 0,
        }
    }

    fn buffer(&self) -> &[u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.buf.len() {
            self.buf.resize(STREAM_BUFFER, 0);
            self.pos = 0;
            loop {
                match self.inner.read(&mut self.buf) {
                    Ok(n) => {
                        self.buf.truncate(n);
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.buf.clear();
                        return Err(e);
                    }
                }
            }
        }
        Ok(self.buffer())
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.buf.len().saturating_sub(self.pos));
        self.pos += n;
        self.upos += n as u64;
    }

    fn take_buffered(&mut self, n: usize) -> &[u8] {
        let start = self.pos;
        self.consume(n);
        self.buf.get(start..self.pos).unwrap_or_default()
    }

    fn taken(&self, n: usize) -> &[u8] {
        let end = self.pos.min(self.buf.len());
        &self.buf[end - n.min(end)..end]
    }
}

/// Virtual offsets of a stream without blocks: the uncompressed position split into 64 KiB
/// pages, which is what htslib reports for such files. Not seekable.
fn stream_offset(upos: u64) -> VirtualOffset {
    VirtualOffset::new(upos & !0xffff, (upos & 0xffff) as u16)
}

impl<S: Source> Reader<S> {
    /// Detects the container and prepares to read from the current position of `src`
    /// (normally 0: BGZF offsets are file offsets). Messages name the file [`Source::name`].
    pub fn new(src: S) -> Result<Reader<S>> {
        let name = src.name().to_string();
        Reader::with_name(src, &name)
    }

    /// Like [`Reader::new`], with `name` (a path or URL) for messages.
    pub fn with_name(mut src: S, name: &str) -> Result<Reader<S>> {
        let name: Arc<str> = Arc::from(name);
        let start = src
            .stream_position()
            .map_err(|e| source_error(e, &name, 0))?;
        let sniffed = sniff(&mut src).map_err(|e| source_error(e, &name, start))?;
        // htslib calls data compressed only when a whole 18-byte header is there.
        let format = if sniffed.peeked.len() < HEADER_LEN {
            Format::Raw
        } else {
            sniffed.format
        };
        src.seek(SeekFrom::Start(start))
            .map_err(|e| source_error(e, &name, start))?;
        let inner = match format {
            Format::Bgzf => Inner::Bgzf(Box::new(BgzfState::new(src, Arc::clone(&name), start))),
            Format::Gzip => Inner::Gzip(Stream::new(MultiGzDecoder::new(src))),
            Format::Raw => Inner::Raw(Stream::new(src)),
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

    /// Reads up to `buf.len()` bytes, never past the end of the current block (as [`io::Read`],
    /// with this crate's [`Error`], which names the offset), so that data
    /// before a damaged block is always delivered before the error. Returns 0 at the end of the
    /// data (or when `buf` is empty).
    pub fn read_data(&mut self, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let avail = self.fill_block()?;
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        self.advance(n);
        Ok(n)
    }

    /// The unread data of the current block (for a file without blocks, of the reader's
    /// buffer), after loading the next one when the current one is used up; empty at the end of
    /// the data. With [`Reader::advance`] this reads in place, with no copy.
    #[inline]
    pub fn fill_block(&mut self) -> Result<&[u8]> {
        match &mut self.inner {
            Inner::Bgzf(s) => s.fill_buf(),
            Inner::Raw(s) => {
                let upos = s.upos;
                s.fill_buf().map_err(|e| source_error(e, &self.name, upos))
            }
            Inner::Gzip(s) => {
                let upos = s.upos;
                s.fill_buf().map_err(|e| gzip_error(e, &self.name, upos))
            }
        }
    }

    /// What [`Reader::fill_block`] would return, without loading anything: empty when the
    /// current block is used up.
    #[inline]
    pub fn buffer(&self) -> &[u8] {
        match &self.inner {
            Inner::Bgzf(s) => s.buffer(),
            Inner::Raw(s) => s.buffer(),
            Inner::Gzip(s) => s.buffer(),
        }
    }

    /// Marks `n` bytes of [`Reader::buffer`] as read (never more than it holds).
    #[inline]
    pub fn advance(&mut self, n: usize) {
        match &mut self.inner {
            Inner::Bgzf(s) => s.consume(n),
            Inner::Raw(s) => s.consume(n),
            Inner::Gzip(s) => s.consume(n),
        }
    }

    /// The last `n` bytes consumed from the current block (fewer if less of it was consumed),
    /// still in place: what [`Reader::take_buffered`] returned, handed out again.
    #[inline]
    pub fn taken(&self, n: usize) -> &[u8] {
        match &self.inner {
            Inner::Bgzf(s) => s.taken(n),
            Inner::Raw(s) => s.taken(n),
            Inner::Gzip(s) => s.taken(n),
        }
    }

    /// Consumes up to `n` bytes of [`Reader::buffer`] and returns them: after checking with
    /// [`Reader::fill_block`] that a record lies whole in the current block, this hands it out in
    /// place.
    #[inline]
    pub fn take_buffered(&mut self, n: usize) -> &[u8] {
        match &mut self.inner {
            Inner::Bgzf(s) => s.take_buffered(n),
            Inner::Raw(s) => s.take_buffered(n),
            Inner::Gzip(s) => s.take_buffered(n),
        }
    }

    /// Fills `buf` completely; [`Error::UnexpectedEof`] (naming the virtual offset the read
    /// started at) if the data ends first.
    pub fn read_exact_data(&mut self, buf: &mut [u8]) -> Result<()> {
        let at = self.virtual_offset();
        let got = self.read_full(buf)?;
        if got < buf.len() {
            return Err(self.eof_error(at, buf.len(), got));
        }
        Ok(())
    }

    /// Like [`Reader::read_exact_data`], but `Ok(false)` when the data ends before the first byte:
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
            let n = self.read_data(&mut buf[got..])?;
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
    #[inline]
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
        let s = self.bgzf_mut(target)?;
        s.set_limit(None);
        s.seek(target)
    }

    /// Moves to `start` and tells the byte source that reading on from there needs only the
    /// bytes before `byte_end` (the end a query planner computed for the span holding this
    /// chunk, e.g. with [`crate::byte_end`]).
    ///
    /// The limit is a hint: reading on past it (the record that straddles the chunk end, a region
    /// that goes on) still works, at the cost of a further request. Read-ahead by worker threads
    /// never goes past it.
    pub fn seek_limit(&mut self, start: VirtualOffset, byte_end: u64) -> Result<()> {
        let s = self.bgzf_mut(start)?;
        // The limit goes down before the seek, so the byte source never starts an unbounded
        // request for this chunk.
        s.set_limit(Some(byte_end.max(start.coffset())));
        s.seek(start)
    }

    /// Tells the byte source which byte ranges will be read next, in order (see
    /// [`Hints::advise`](hfile::Hints::advise)): a remote source fetches them ahead, several at once.
    pub fn advise(&mut self, ranges: &[std::ops::Range<u64>]) {
        match &mut self.inner {
            Inner::Bgzf(s) => s.input.src.advise(ranges),
            Inner::Gzip(s) => s.inner.get_mut().advise(ranges),
            Inner::Raw(s) => s.inner.advise(ranges),
        }
    }

    /// The read-ahead byte limit in force (`None` after a plain [`Reader::seek`]).
    pub fn readahead_limit(&self) -> Option<u64> {
        match &self.inner {
            Inner::Bgzf(s) => s.limit,
            _ => None,
        }
    }

    /// Inflates blocks on `threads` worker threads when `threads >= 2`; 0 or 1 inflates on the
    /// calling thread. While the block it needs is not ready, the calling thread inflates blocks
    /// read ahead after it rather than sleep. Only BGZF files use threads. Read-ahead in
    /// progress is discarded (and redone as needed), so this may be called at any point.
    pub fn set_threads(&mut self, threads: usize) {
        if let Inner::Bgzf(s) = &mut self.inner {
            s.set_threads(threads);
        }
    }

    /// True when the file ends with the 28-byte BGZF EOF marker block. Reads the last 28 bytes
    /// and returns to the current position. A file shorter than 28 bytes has no marker.
    pub fn check_eof_marker(&mut self) -> Result<bool> {
        let name = Arc::clone(&self.name);
        let src = self.source_mut();
        let tail = src
            .read_tail(EOF_MARKER.len() as u64)
            .map_err(|e| source_error(e, &name, 0))?;
        Ok(tail == EOF_MARKER)
    }

    /// Tells the byte source to fetch the bytes [`Reader::check_eof_marker`] will read now,
    /// beside whatever else it is fetching.
    pub fn advise_eof_check(&mut self) {
        self.source_mut().advise_tail(EOF_MARKER.len() as u64);
    }

    /// The byte source, for what only it can tell (a remote object's validators, say). Reading
    /// or seeking it directly is allowed: the reader finds its place again.
    pub fn get_mut(&mut self) -> &mut S {
        self.source_mut()
    }

    fn source_mut(&mut self) -> &mut S {
        match &mut self.inner {
            Inner::Bgzf(s) => {
                // Someone else moves the source: forget where it was.
                s.input.moved();
                &mut s.input.src
            }
            Inner::Gzip(s) => s.inner.get_mut(),
            Inner::Raw(s) => &mut s.inner,
        }
    }

    /// The size of the file in bytes (compressed, as stored).
    pub fn size(&mut self) -> Result<u64> {
        let name = Arc::clone(&self.name);
        self.source_mut()
            .size()
            .map_err(|e| source_error(e, &name, 0))
    }

    /// The byte source.
    pub fn get_ref(&self) -> &S {
        match &self.inner {
            Inner::Bgzf(s) => &s.input.src,
            Inner::Gzip(s) => s.inner.get_ref(),
            Inner::Raw(s) => &s.inner,
        }
    }

    fn bgzf_mut(&mut self, target: VirtualOffset) -> Result<&mut BgzfState<S>> {
        let format = self.format();
        match &mut self.inner {
            Inner::Bgzf(s) => Ok(s),
            _ => Err(Error::SeekUnsupported {
                name: self.name.to_string(),
                format,
                target,
                since: 0,
            }),
        }
    }
}

/// Keeps transport errors as they are; anything else is a decompression failure, at
/// uncompressed byte `upos` (the compressed position is hidden inside the decoder).
fn gzip_error(e: io::Error, name: &str, upos: u64) -> Error {
    if e.get_ref().is_some_and(|inner| inner.is::<hfile::Error>()) {
        return source_error(e, name, upos);
    }
    Error::Gzip {
        name: name.to_string(),
        offset: upos,
        source: e,
    }
}

impl<S: Source> io::Read for Reader<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Reader::read_data(self, buf).map_err(io::Error::from)
    }
}

impl<S: Source> io::BufRead for Reader<S> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Reader::fill_block(self).map_err(io::Error::from)
    }

    fn consume(&mut self, amt: usize) {
        Reader::advance(self, amt);
    }
}

impl<S: Source> fmt::Debug for Reader<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("name", &self.name)
            .field("format", &self.format())
            .field("virtual_offset", &self.virtual_offset())
            .finish()
    }
}
