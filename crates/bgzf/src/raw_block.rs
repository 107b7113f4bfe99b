//! Reading whole raw blocks from a source: incrementally for the [`crate::Reader`] (which may
//! have to stop part-way at a readahead limit and resume later), and as a plain iterator
//! ([`Blocks`]) for tools that walk a file's blocks without inflating them.

use std::io::{self, Read};

use libdeflater::Decompressor;

use crate::block::{self, FIXED_HEADER_LEN, MAX_BLOCK_SIZE};
use crate::input::Input;
use crate::{Error, Result, Source};

/// One whole compressed block as stored in the file, its header already checked (so it holds
/// at least its header and the CRC32/ISIZE trailer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawBlock {
    pub(crate) coffset: u64,
    pub(crate) bytes: Vec<u8>,
    pub(crate) header_len: usize,
}

impl RawBlock {
    /// The block's offset in the file.
    pub fn coffset(&self) -> u64 {
        self.coffset
    }

    /// The whole block, from the gzip magic to the end of ISIZE.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// 12 + XLEN: where the deflate data starts in [`RawBlock::bytes`].
    pub fn header_len(&self) -> usize {
        self.header_len
    }

    /// The uncompressed length the block declares (ISIZE).
    pub fn isize(&self) -> u32 {
        let n = self.bytes.len();
        u32::from_le_bytes([
            self.bytes[n - 4],
            self.bytes[n - 3],
            self.bytes[n - 2],
            self.bytes[n - 1],
        ])
    }

    /// The raw deflate data between the header and the CRC32/ISIZE trailer.
    pub fn payload(&self) -> &[u8] {
        &self.bytes[self.header_len..self.bytes.len() - block::TRAILER_LEN]
    }

    /// Inflates the block into `out` (replacing its contents), checking CRC32 and ISIZE.
    pub fn inflate_into(
        &self,
        decompressor: &mut Decompressor,
        out: &mut Vec<u8>,
        name: &str,
    ) -> Result<()> {
        block::inflate(
            &self.bytes,
            self.header_len,
            out,
            decompressor,
            name,
            self.coffset,
        )
    }

    /// Inflates the block into a new buffer.
    pub fn inflate(&self, decompressor: &mut Decompressor, name: &str) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(MAX_BLOCK_SIZE);
        self.inflate_into(decompressor, &mut out, name)?;
        Ok(out)
    }
}

/// Turns a source's I/O error into ours, keeping a transport error (which already names the
/// file and offset) as it is.
pub(crate) fn source_error(e: io::Error, name: &str, offset: u64) -> Error {
    let wrap = |source: io::Error| {
        Error::Io(hfile::Error::Io {
            name: name.to_string(),
            offset,
            source,
        })
    };
    if e.get_ref().is_none() {
        return wrap(e);
    }
    let kind = e.kind();
    match e.into_inner().map(|inner| inner.downcast::<hfile::Error>()) {
        Some(Ok(transport)) => Error::Io(*transport),
        Some(Err(other)) => wrap(io::Error::new(kind, other)),
        None => wrap(io::Error::from(kind)),
    }
}

/// Reads into `buf` until it is full or the source ends; returns the count.
pub(crate) fn read_full<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match r.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// The next block to read, and the part of it read so far (read-ahead may stop part-way to
/// stay inside the limit).
pub(crate) struct Cursor {
    pub(crate) coffset: u64,
    /// The block's bytes in `bytes[..filled]`; what follows is left from an earlier block, so
    /// that a reused buffer is not zeroed again before each read.
    bytes: Vec<u8>,
    filled: usize,
    header_len: Option<usize>,
    total: Option<usize>,
    /// What is wrong with a header that has an extra field, said once the extra field shows
    /// whether the member is BGZF at all.
    deferred: Option<Error>,
}

impl Cursor {
    pub(crate) fn at(coffset: u64) -> Cursor {
        Cursor {
            coffset,
            bytes: Vec::new(),
            filled: 0,
            header_len: None,
            total: None,
            deferred: None,
        }
    }

    /// True when nothing of the block has been read yet.
    pub(crate) fn is_fresh(&self) -> bool {
        self.filled == 0 && self.header_len.is_none()
    }

    /// Moves a fresh cursor to the next block, keeping its buffer.
    pub(crate) fn skip_to(&mut self, coffset: u64) {
        self.coffset = coffset;
        self.filled = 0;
        self.header_len = None;
        self.total = None;
    }

    /// Gives the cursor a used block buffer to read into, if it has none yet (so sequential
    /// reading allocates nothing per block).
    pub(crate) fn supply(&mut self, spare: &mut Vec<Vec<u8>>) {
        if self.bytes.capacity() == 0 {
            if let Some(buf) = spare.pop() {
                self.bytes = buf;
            }
        }
    }
}

pub(crate) enum RawRead {
    Block(RawBlock),
    Eof,
    /// The next bytes lie at or past the limit.
    Stopped,
    /// A gzip member that is not a BGZF block starts at `coffset` (`error` says why it is not
    /// one): htslib reads on from there as plain gzip.
    Gzip {
        coffset: u64,
        error: Error,
    },
}

/// Reads the block at the cursor, stopping before any byte at or past `limit`; reads ahead
/// never past `bound` (the readahead limit, which the single-threaded reader reads past on
/// demand only).
pub(crate) fn read_raw_block<S: Source>(
    input: &mut Input<S>,
    name: &str,
    cur: &mut Cursor,
    limit: Option<u64>,
    bound: Option<u64>,
) -> Result<RawRead> {
    loop {
        let target = match (cur.header_len, cur.total) {
            (None, _) => FIXED_HEADER_LEN,
            (Some(h), None) => h,
            (Some(_), Some(t)) => t,
        };
        let have = cur.filled;
        if have < target {
            if limit.is_some_and(|l| cur.coffset.saturating_add(target as u64) > l) {
                return Ok(RawRead::Stopped);
            }
            if cur.bytes.len() < target {
                cur.bytes.resize(target, 0);
            }
            let at = cur.coffset + have as u64;
            let n = input.read_at(at, &mut cur.bytes[have..target], bound, name)?;
            cur.filled = have + n;
            if cur.filled < target {
                if cur.filled == 0 {
                    return Ok(RawRead::Eof);
                }
                return Err(Error::TruncatedBlock {
                    name: name.to_string(),
                    offset: cur.coffset,
                    needed: target,
                    available: cur.filled,
                });
            }
        }
        match (cur.header_len, cur.total) {
            (None, _) => {
                let mut fixed = [0u8; FIXED_HEADER_LEN];
                fixed.copy_from_slice(&cur.bytes[..FIXED_HEADER_LEN]);
                let xlen = match block::parse_fixed_header(&fixed, name, cur.coffset) {
                    Ok(xlen) => xlen,
                    Err(error) if block::is_plain_gzip(&fixed, None) => {
                        return Ok(RawRead::Gzip {
                            coffset: cur.coffset,
                            error,
                        })
                    }
                    // Gzip flags BGZF never sets: an error if it is a BGZF block after all.
                    Err(error) if block::has_extra_field(&fixed) => {
                        cur.deferred = Some(error);
                        usize::from(u16::from_le_bytes([fixed[10], fixed[11]]))
                    }
                    Err(e) => return Err(e),
                };
                cur.header_len = Some(FIXED_HEADER_LEN + xlen);
            }
            (Some(h), None) => {
                let extra = &cur.bytes[FIXED_HEADER_LEN..h];
                match block::block_size(extra, name, cur.coffset) {
                    Ok(total) => {
                        if let Some(e) = cur.deferred.take() {
                            return Err(e);
                        }
                        cur.total = Some(total);
                    }
                    Err(error) if block::is_plain_gzip(&cur.bytes[..h], Some(extra)) => {
                        return Ok(RawRead::Gzip {
                            coffset: cur.coffset,
                            error,
                        })
                    }
                    Err(e) => return Err(e),
                }
            }
            (Some(header_len), Some(total)) => {
                let next = Cursor::at(cur.coffset + total as u64);
                let mut done = std::mem::replace(cur, next);
                done.bytes.truncate(total);
                return Ok(RawRead::Block(RawBlock {
                    coffset: done.coffset,
                    bytes: done.bytes,
                    header_len,
                }));
            }
        }
    }
}

/// The raw blocks of a BGZF source in file order, from a given offset, without inflating them.
///
/// ```
/// use std::io::Write;
/// let mut w = bgzf::Writer::new(Vec::new());
/// w.write_all(b"one").unwrap();
/// w.flush_block().unwrap();
/// w.write_all(b"two").unwrap();
/// let file = w.finish().unwrap();
/// let blocks: Vec<bgzf::RawBlock> = bgzf::Blocks::new(std::io::Cursor::new(file), "mem", 0)
///     .collect::<Result<_, _>>()
///     .unwrap();
/// assert_eq!(blocks.len(), 3, "two data blocks and the EOF marker");
/// assert_eq!(blocks[1].isize(), 3);
/// assert_eq!(blocks[2].bytes(), bgzf::block::EOF_MARKER);
/// ```
pub struct Blocks<S> {
    input: Input<S>,
    name: String,
    cursor: Cursor,
    done: bool,
}

impl<S: Source> Blocks<S> {
    /// Walks the blocks of `src` starting at byte `start` (a block start); `name` is for errors.
    pub fn new(src: S, name: &str, start: u64) -> Blocks<S> {
        Blocks {
            input: Input::new(src),
            name: name.to_string(),
            cursor: Cursor::at(start),
            done: false,
        }
    }

    /// The offset of the next block.
    pub fn offset(&self) -> u64 {
        self.cursor.coffset
    }
}

impl<S: Source> Iterator for Blocks<S> {
    type Item = Result<RawBlock>;

    fn next(&mut self) -> Option<Result<RawBlock>> {
        if self.done {
            return None;
        }
        match read_raw_block(&mut self.input, &self.name, &mut self.cursor, None, None) {
            Ok(RawRead::Block(b)) => Some(Ok(b)),
            Ok(RawRead::Eof | RawRead::Stopped) => {
                self.done = true;
                None
            }
            Ok(RawRead::Gzip { error: e, .. }) | Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
