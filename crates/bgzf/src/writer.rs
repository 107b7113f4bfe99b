//! Writing BGZF: data cut into blocks of at most 65280 bytes, each deflated by libdeflate.

use std::io::{self, Write};

use libdeflater::{CompressionLvl, Compressor};

use crate::block::{self, EOF_MARKER, MAX_BLOCK_DATA};
use crate::{Error, VirtualOffset};

/// Writes BGZF blocks to `W`. Call [`Writer::finish`] to write the EOF marker; dropping an
/// unfinished writer finishes it too, ignoring errors.
///
/// ```
/// use std::io::Write;
/// let mut w = bgzf::Writer::with_level(Vec::new(), 1).unwrap();
/// w.write_all(b"abc").unwrap();
/// w.flush_block().unwrap();
/// assert_eq!(w.virtual_offset().uoffset(), 0);
/// let bytes = w.finish().unwrap();
/// assert!(bytes.ends_with(&bgzf::block::EOF_MARKER));
/// ```
pub struct Writer<W: Write> {
    inner: Option<W>,
    data: Vec<u8>,
    compressed: Vec<u8>,
    compressor: Compressor,
    /// Compressed bytes written so far.
    coffset: u64,
}

impl<W: Write> Writer<W> {
    /// A writer with libdeflate's default level (6).
    pub fn new(inner: W) -> Writer<W> {
        Writer::from_parts(inner, CompressionLvl::default())
    }

    /// A writer with compression `level` (0: stored, 1: fastest ... 12: smallest).
    pub fn with_level(inner: W, level: u32) -> Result<Writer<W>, Error> {
        let lvl = i32::try_from(level)
            .ok()
            .and_then(|l| CompressionLvl::new(l).ok())
            .ok_or(Error::InvalidLevel { level })?;
        Ok(Writer::from_parts(inner, lvl))
    }

    fn from_parts(inner: W, lvl: CompressionLvl) -> Writer<W> {
        Writer {
            inner: Some(inner),
            data: Vec::with_capacity(MAX_BLOCK_DATA),
            compressed: Vec::new(),
            compressor: Compressor::new(lvl),
            coffset: 0,
        }
    }

    /// The virtual offset the next byte written will have.
    pub fn virtual_offset(&self) -> VirtualOffset {
        VirtualOffset::new(self.coffset, self.data.len() as u16)
    }

    /// Ends the current block (if it holds any data), so the next byte starts a new block.
    pub fn flush_block(&mut self) -> io::Result<()> {
        if self.data.is_empty() {
            return Ok(());
        }
        self.compressed.clear();
        compress_into(&self.data, &mut self.compressor, &mut self.compressed);
        self.data.clear();
        self.write_compressed()
    }

    /// Writes the pending block and the EOF marker, flushes, and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.finish_in_place()?;
        self.inner
            .take()
            .ok_or_else(|| io::Error::other("BGZF writer already finished"))
    }

    fn finish_in_place(&mut self) -> io::Result<()> {
        self.flush_block()?;
        self.compressed.clear();
        self.compressed.extend_from_slice(&EOF_MARKER);
        self.write_compressed()?;
        self.inner_mut()?.flush()
    }

    fn write_compressed(&mut self) -> io::Result<()> {
        let n = self.compressed.len() as u64;
        let inner = self
            .inner
            .as_mut()
            .ok_or_else(|| io::Error::other("BGZF writer already finished"))?;
        inner.write_all(&self.compressed)?;
        self.coffset += n;
        Ok(())
    }

    fn inner_mut(&mut self) -> io::Result<&mut W> {
        self.inner
            .as_mut()
            .ok_or_else(|| io::Error::other("BGZF writer already finished"))
    }
}

/// Deflates `data` as one block, or as several if it does not fit once compressed.
fn compress_into(data: &[u8], compressor: &mut Compressor, out: &mut Vec<u8>) {
    if block::deflate(data, compressor, out) {
        return;
    }
    // Only reachable with more than MAX_BLOCK_DATA bytes or a pathological deflater; halves
    // always end up fitting, since stored deflate adds a few bytes per 64 KiB.
    let (a, b) = data.split_at(data.len() / 2);
    compress_into(a, compressor, out);
    compress_into(b, compressor, out);
}

impl<W: Write> Write for Writer<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = MAX_BLOCK_DATA - self.data.len();
        let n = room.min(buf.len());
        self.data.extend_from_slice(&buf[..n]);
        if self.data.len() == MAX_BLOCK_DATA {
            self.flush_block()?;
        }
        Ok(n)
    }

    /// Ends the current block and flushes the inner writer.
    fn flush(&mut self) -> io::Result<()> {
        self.flush_block()?;
        self.inner_mut()?.flush()
    }
}

impl<W: Write> Drop for Writer<W> {
    fn drop(&mut self) {
        if self.inner.is_some() {
            let _ = self.finish_in_place();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_hold_at_most_65280_bytes() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut w = Writer::new(Vec::new());
        w.write_all(&data).unwrap();
        let bytes = w.finish().unwrap();
        // Walk the blocks by BSIZE, checking each ISIZE.
        let mut off = 0;
        let mut sizes = Vec::new();
        while off < bytes.len() {
            let bsize = u16::from_le_bytes([bytes[off + 16], bytes[off + 17]]) as usize + 1;
            let end = off + bsize;
            sizes.push(u32::from_le_bytes(bytes[end - 4..end].try_into().unwrap()));
            off = end;
        }
        assert_eq!(sizes, vec![65280, 65280, 65280, 200_000 - 3 * 65280, 0]);
    }

    #[test]
    fn level_is_checked() {
        assert!(matches!(
            Writer::with_level(Vec::new(), 13),
            Err(Error::InvalidLevel { level: 13 })
        ));
        assert!(Writer::with_level(Vec::new(), 0).is_ok());
    }

    #[test]
    fn virtual_offsets_follow_blocks() {
        let mut w = Writer::new(Vec::new());
        assert_eq!(w.virtual_offset(), VirtualOffset::new(0, 0));
        w.write_all(b"12345").unwrap();
        assert_eq!(w.virtual_offset(), VirtualOffset::new(0, 5));
        w.flush_block().unwrap();
        w.flush_block().unwrap(); // an empty block is not written
        let c = w.virtual_offset().coffset();
        assert!(c > 18);
        assert_eq!(w.virtual_offset().uoffset(), 0);
        let bytes = w.finish().unwrap();
        assert_eq!(bytes.len() as u64, c + 28);
    }

    #[test]
    fn drop_finishes() {
        let mut out = Vec::new();
        {
            let mut w = Writer::new(&mut out);
            w.write_all(b"x").unwrap();
        }
        assert!(out.ends_with(&EOF_MARKER));
        assert!(out.len() > 28);
    }
}
