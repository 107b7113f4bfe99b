//! Sequential BGZF decoding over any [`std::io::Read`], for data that arrives as a stream (an
//! index or a header fetched piece by piece) rather than from a seekable [`hfile::HFile`].
//!
//! Input is consumed one whole block at a time and never ahead of the data asked for, so
//! [`BlockStream::block_end`] says exactly how many input bytes the data delivered so far
//! needed: a caller that stops early can keep (or fetch) just that prefix.

use std::io::{self, Read, Seek, SeekFrom};

use libdeflater::Decompressor;

use crate::{Blocks, Error, Source, VirtualOffset};

/// Reads the uncompressed data of BGZF blocks from any byte stream, in order.
///
/// Unlike [`crate::Reader`] it needs no seekable source and no size, only `Read`; it cannot seek.
/// The end of the input between two blocks is a clean end of data; an end inside a block is
/// [`Error::TruncatedBlock`], which a caller reading a prefix of a file treats as "more bytes
/// needed".
///
/// ```
/// use std::io::{Read, Write};
/// let mut w = bgzf::Writer::new(Vec::new());
/// w.write_all(b"first").unwrap();
/// w.flush_block().unwrap();
/// w.write_all(b"second").unwrap();
/// let file = w.finish().unwrap();
///
/// let mut s = bgzf::BlockStream::new("mem.bgz", &file[..]);
/// let mut buf = [0u8; 5];
/// s.read_exact(&mut buf).unwrap();
/// assert_eq!(&buf, b"first");
/// // Only the first block was read from the input.
/// let first_block = s.block_end();
/// assert!(first_block < file.len() as u64);
/// let mut rest = String::new();
/// s.read_to_string(&mut rest).unwrap();
/// assert_eq!(rest, "second");
/// assert_eq!(s.block_end(), file.len() as u64);
/// ```
pub struct BlockStream<R> {
    name: String,
    blocks: Blocks<Forward<R>>,
    decompressor: Decompressor,
    /// The inflated data of the current block.
    data: Vec<u8>,
    pos: usize,
    /// Compressed offset of the current block.
    block_start: u64,
    /// Compressed offset just past the current block: the input the data so far needed.
    block_end: u64,
    /// Input bytes read, including those of a block cut short by the end of the input.
    input_read: u64,
    /// Uncompressed bytes handed out.
    uoffset: u64,
    /// The input ended (cleanly or not) or failed: no more blocks.
    ended: bool,
}

/// A stream seen as a [`Source`] that only goes forward: [`Blocks`] reads blocks one after
/// another, and only ever "seeks" to where the stream already is.
struct Forward<R> {
    inner: R,
    pos: u64,
}

impl<R: Read> Read for Forward<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R> Seek for Forward<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        match to {
            SeekFrom::Start(p) if p == self.pos => Ok(p),
            SeekFrom::Current(0) => Ok(self.pos),
            _ => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a BGZF stream is read in order and cannot seek",
            )),
        }
    }
}

impl<R> hfile::Hints for Forward<R> {}

impl<R: Read> Source for Forward<R> {}

impl<R: Read> BlockStream<R> {
    /// Decodes `inner` from its current position, which counts as compressed offset 0; `name`
    /// is used in errors.
    pub fn new(name: &str, inner: R) -> BlockStream<R> {
        BlockStream {
            name: name.to_string(),
            blocks: Blocks::new(Forward { inner, pos: 0 }, name, 0),
            decompressor: Decompressor::new(),
            data: Vec::new(),
            pos: 0,
            block_start: 0,
            block_end: 0,
            input_read: 0,
            uoffset: 0,
            ended: false,
        }
    }

    /// The name given at creation.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The compressed offset just past the last block read: how many input bytes the data
    /// handed out so far needed (whole blocks). 0 before the first read.
    pub fn block_end(&self) -> u64 {
        self.block_end
    }

    /// Input bytes read so far, including a block cut short by the end of the input.
    pub fn input_read(&self) -> u64 {
        self.input_read
    }

    /// Uncompressed bytes handed out so far.
    pub fn uncompressed_offset(&self) -> u64 {
        self.uoffset
    }

    /// The virtual offset of the next byte to be read (in the current block, or at its end).
    pub fn virtual_offset(&self) -> VirtualOffset {
        // A block inflates to at most 64 KiB, so the in-block offset fits in 16 bits.
        VirtualOffset::new(self.block_start, self.pos as u16)
    }

    /// Reads up to `buf.len()` bytes, never past the end of the current block. Returns 0 at a
    /// clean end of the input (between blocks).
    ///
    /// # Errors
    /// [`Error::TruncatedBlock`] when the input ends inside a block; [`Error::Io`] when the
    /// input fails; the header, inflate and checksum errors of [`crate::block`] for a damaged
    /// block. Each names the block's compressed offset.
    pub fn read_some(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.pos == self.data.len() {
            if !self.load_next()? {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        self.uoffset += n as u64;
        Ok(n)
    }

    /// Reads and inflates the next block; false at a clean end of the input.
    fn load_next(&mut self) -> Result<bool, Error> {
        if self.ended {
            return Ok(false);
        }
        let next = self.blocks.next();
        let inflated = match next {
            None => Ok(None),
            Some(Ok(raw)) => raw
                .inflate_into(&mut self.decompressor, &mut self.data, &self.name)
                .map(|()| Some(raw.coffset())),
            Some(Err(e)) => Err(e),
        };
        match inflated {
            Ok(Some(start)) => {
                self.pos = 0;
                self.block_start = start;
                self.block_end = self.blocks.offset();
                self.input_read = self.block_end;
                Ok(true)
            }
            Ok(None) => {
                self.ended = true;
                Ok(false)
            }
            Err(e) => {
                self.ended = true;
                self.data.clear();
                self.pos = 0;
                if let Error::TruncatedBlock {
                    offset, available, ..
                } = &e
                {
                    self.input_read = offset + *available as u64;
                }
                Err(e)
            }
        }
    }
}

impl<R: Read> Read for BlockStream<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_some(buf).map_err(io::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn bgzf(parts: &[&[u8]]) -> (Vec<u8>, Vec<u64>) {
        let mut w = crate::Writer::new(Vec::new());
        let mut ends = Vec::new();
        for p in parts {
            w.write_all(p).unwrap();
            w.flush_block().unwrap();
            ends.push(w.virtual_offset().unwrap().coffset());
        }
        (w.finish().unwrap(), ends)
    }

    #[test]
    fn reads_blocks_in_order_and_counts_input() {
        let (file, ends) = bgzf(&[b"abc", b"defgh", b"ij"]);
        let mut s = BlockStream::new("t", &file[..]);
        let mut b = [0u8; 2];
        s.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"ab");
        assert_eq!(s.block_end(), ends[0]);
        assert_eq!(s.input_read(), ends[0]);
        let mut b = [0u8; 3];
        s.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"cde");
        assert_eq!(s.block_end(), ends[1]);
        assert_eq!(s.virtual_offset(), VirtualOffset::new(ends[0], 2));
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"fghij");
        assert_eq!(s.block_end(), file.len() as u64);
        assert_eq!(s.uncompressed_offset(), 10);
    }

    #[test]
    fn end_inside_a_block_is_truncation_and_between_blocks_is_clean() {
        let (file, ends) = bgzf(&[b"abc", b"defgh"]);
        let mut s = BlockStream::new("t", &file[..ends[0] as usize]);
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"abc");
        for cut in ends[0] as usize + 1..ends[1] as usize {
            let mut s = BlockStream::new("t", &file[..cut]);
            let mut out = vec![0u8; 3];
            s.read_exact(&mut out).unwrap();
            let e = s.read_some(&mut out).unwrap_err();
            match e {
                Error::TruncatedBlock {
                    offset, available, ..
                } => {
                    assert_eq!(offset, ends[0]);
                    assert_eq!(available as u64, cut as u64 - ends[0]);
                }
                other => panic!("cut {cut}: {other:?}"),
            }
            assert_eq!(s.input_read(), cut as u64);
            assert_eq!(s.block_end(), ends[0]);
            // Stays ended.
            assert_eq!(s.read_some(&mut out).unwrap(), 0);
        }
    }

    #[test]
    fn damaged_block_names_its_offset() {
        let (mut file, ends) = bgzf(&[b"abc", b"defgh"]);
        let at = ends[0] as usize + 20;
        file[at] ^= 0xff;
        let mut s = BlockStream::new("t", &file[..]);
        let mut out = Vec::new();
        let e = s.read_to_end(&mut out).unwrap_err();
        assert_eq!(out, b"abc");
        let msg = e.to_string();
        assert!(msg.contains(&format!("{}", ends[0])), "{msg}");
        let mut s = BlockStream::new("t", &b"not gzip at all"[..]);
        assert!(matches!(
            s.read_some(&mut [0u8; 4]),
            Err(Error::BadMagic { offset: 0, .. })
        ));
    }

    #[test]
    fn input_errors_are_reported_as_io() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::ConnectionReset, "gone"))
            }
        }
        let mut s = BlockStream::new("t", Failing);
        match s.read_some(&mut [0u8; 4]) {
            Err(Error::Io(hfile::Error::Io { source, .. })) => {
                assert_eq!(source.kind(), io::ErrorKind::ConnectionReset)
            }
            other => panic!("{other:?}"),
        }
    }
}
