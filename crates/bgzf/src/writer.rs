//! Writing BGZF as htslib's `bgzf_write` does: data is gathered into blocks of at most 65280
//! bytes, a block is compressed when it is full (or when [`Writer::flush_try`] says the next
//! piece would not fit), and the file ends with the EOF marker block. Blocks can be compressed
//! on worker threads ([`Writer::set_threads`]) while they are still written in order.

use std::collections::VecDeque;
use std::io::{self, Write};

use crossbeam_channel::Receiver;
use libdeflater::{CompressionLvl, Compressor};

use crate::block::{self, EOF_MARKER, MAX_BLOCK_DATA};
use crate::deflate_pool::{Compressed, DeflatePool};
use crate::{Error, VirtualOffset};

/// htslib's default: zlib's default level 6, which htslib maps to libdeflate's 7.
pub const DEFAULT_LEVEL: u32 = 7;

/// The libdeflate level htslib 1.16 (built with libdeflate) uses for a zlib-style level as
/// samtools takes it (`-1`, `-u`, `level=N`): 0 writes stored blocks, a negative level is the
/// default, 1-9 map to `1 2 3 5 6 7 8 10 12`, and anything above 9 is 12.
///
/// ```
/// assert_eq!(bgzf::writer::htslib_level(-1), bgzf::writer::DEFAULT_LEVEL);
/// assert_eq!(bgzf::writer::htslib_level(0), 0);
/// assert_eq!(bgzf::writer::htslib_level(4), 5);
/// assert_eq!(bgzf::writer::htslib_level(11), 12);
/// ```
pub fn htslib_level(level: i64) -> u32 {
    const MAP: [u32; 10] = [0, 1, 2, 3, 5, 6, 7, 8, 10, 12];
    match level {
        0 => 0,
        l if l < 0 => MAP[6],
        l => MAP[l.min(9) as usize],
    }
}

/// Where a byte lands: the sequence number of its block (0 for the first block written) and
/// its offset in that block's data. Unlike a [`VirtualOffset`] it is known at once, even while
/// earlier blocks are still being compressed; [`Writer::block_address`] turns the block number
/// into a file offset once it is known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct BlockPosition {
    /// The block's number, counted from the first block written.
    pub block: u64,
    /// The offset within the block's data.
    pub uoffset: u16,
}

/// Writes BGZF blocks to `W`. Call [`Writer::finish`] to end the file with its EOF marker. A
/// writer dropped unfinished (after an error, say) writes out the data it holds but no EOF
/// marker, so the output is seen as truncated rather than passed off as complete.
///
/// # Examples
///
/// ```
/// use std::io::Write;
/// let mut w = bgzf::Writer::with_level(Vec::new(), 1).unwrap();
/// w.write_all(b"abc").unwrap();
/// w.flush_block().unwrap();
/// assert_eq!(w.virtual_offset().unwrap().uoffset(), 0);
/// let bytes = w.finish().unwrap();
/// assert!(bytes.ends_with(&bgzf::block::EOF_MARKER));
/// ```
pub struct Writer<W: Write> {
    inner: Option<W>,
    data: Vec<u8>,
    level: u32,
    compressor: Compressor,
    compressed: Vec<u8>,
    /// Compressed bytes written to `inner` so far.
    coffset: u64,
    /// Sequence number of the block being filled (blocks handed off so far).
    block: u64,
    /// Blocks written to `inner` so far.
    written: u64,
    /// Start addresses of blocks `address_base..written`.
    addresses: VecDeque<u64>,
    address_base: u64,
    pool: Option<DeflatePool>,
    in_flight: VecDeque<Receiver<Compressed>>,
    spare: Vec<Vec<u8>>,
}

impl<W: Write> Writer<W> {
    /// A writer with htslib's default level ([`DEFAULT_LEVEL`]).
    pub fn new(inner: W) -> Writer<W> {
        Writer::from_parts(inner, DEFAULT_LEVEL)
    }

    /// A writer with libdeflate compression `level` (0: stored blocks, 1: fastest ... 12:
    /// smallest). [`htslib_level`] converts a samtools level.
    pub fn with_level(inner: W, level: u32) -> Result<Writer<W>, Error> {
        if level > 12 {
            return Err(Error::InvalidLevel { level });
        }
        Ok(Writer::from_parts(inner, level))
    }

    fn from_parts(inner: W, level: u32) -> Writer<W> {
        Writer {
            inner: Some(inner),
            data: Vec::with_capacity(MAX_BLOCK_DATA),
            level,
            compressor: compressor(level),
            compressed: Vec::new(),
            coffset: 0,
            block: 0,
            written: 0,
            addresses: VecDeque::new(),
            address_base: 0,
            pool: None,
            in_flight: VecDeque::new(),
            spare: Vec::new(),
        }
    }

    /// Compresses blocks on `threads` worker threads (0: on the calling thread). Blocks are
    /// still written in order, by the calling thread. Blocks in flight are finished first.
    pub fn set_threads(&mut self, threads: usize) -> io::Result<()> {
        if self.pool.as_ref().map_or(0, DeflatePool::threads) == threads {
            return Ok(());
        }
        self.drain()?;
        self.pool = if threads > 0 {
            DeflatePool::new(threads, self.level)
        } else {
            None
        };
        Ok(())
    }

    /// Where the next byte written will land.
    pub fn position(&self) -> BlockPosition {
        BlockPosition {
            block: self.block,
            uoffset: self.data.len() as u16,
        }
    }

    /// The file offset where block `block` starts, once every block before it has been written;
    /// `None` while some are still being compressed, or for a block given up by
    /// [`Writer::forget_before`]. Addresses are kept (8 bytes a block) until forgotten.
    pub fn block_address(&self, block: u64) -> Option<u64> {
        if block < self.address_base || block > self.written {
            return None;
        }
        if block == self.written {
            return Some(self.coffset);
        }
        self.addresses
            .get(usize::try_from(block - self.address_base).ok()?)
            .copied()
    }

    /// Drops the addresses of blocks before `block`.
    pub fn forget_before(&mut self, block: u64) {
        while self.address_base < block && !self.addresses.is_empty() {
            self.addresses.pop_front();
            self.address_base += 1;
        }
    }

    /// The virtual offset the next byte written will have. With worker threads this waits for
    /// the blocks in flight.
    pub fn virtual_offset(&mut self) -> io::Result<VirtualOffset> {
        if self.block != self.written {
            self.drain()?;
        }
        Ok(VirtualOffset::new(self.coffset, self.data.len() as u16))
    }

    /// htslib's `bgzf_flush_try`: ends the current block if `size` more bytes would not fit in
    /// it, so that a piece of that size starts a new block.
    pub fn flush_try(&mut self, size: usize) -> io::Result<()> {
        if self.data.len() + size > MAX_BLOCK_DATA {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Ends the current block (if it holds any data), so the next byte starts a new block.
    pub fn flush_block(&mut self) -> io::Result<()> {
        if self.data.is_empty() {
            return Ok(());
        }
        if let Some(pool) = &self.pool {
            let fresh = self
                .spare
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(MAX_BLOCK_DATA));
            let data = std::mem::replace(&mut self.data, fresh);
            match pool.submit(data) {
                Ok(answer) => {
                    self.block += 1;
                    self.in_flight.push_back(answer);
                    // A deep queue keeps the workers busy when a wake-up is slow (a loaded
                    // machine): with 2 blocks a worker, `bgzip -@ 2` used one core on a busy
                    // machine where bgzip 1.16 (256 jobs queued) used 1.5-1.8.
                    let limit = IN_FLIGHT_PER_THREAD * pool.threads();
                    while self.in_flight.len() > limit {
                        self.complete_one()?;
                    }
                    return Ok(());
                }
                Err(data) => {
                    // No worker left: finish what is queued, then compress here.
                    self.pool = None;
                    self.drain()?;
                    self.data = data;
                }
            }
        }
        self.compressed.clear();
        compress_block(
            &self.data,
            self.level,
            &mut self.compressor,
            &mut self.compressed,
        );
        self.data.clear();
        self.block += 1;
        let block = std::mem::take(&mut self.compressed);
        let result = self.write_block(&block);
        self.compressed = block;
        result
    }

    /// Writes the pending block and the EOF marker, flushes, and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.finish_in_place()?;
        self.inner
            .take()
            .ok_or_else(|| io::Error::other("BGZF writer already finished"))
    }

    /// Writes the pending block and every block in flight, flushes, and returns the inner
    /// writer without the EOF marker: for output cut short by a failure, which keeps what was
    /// written but must not pass it off as complete.
    pub fn abandon(mut self) -> io::Result<W> {
        self.flush_block()?;
        self.drain()?;
        self.inner_mut()?.flush()?;
        self.inner
            .take()
            .ok_or_else(|| io::Error::other("BGZF writer already finished"))
    }

    fn finish_in_place(&mut self) -> io::Result<()> {
        self.flush_block()?;
        self.drain()?;
        self.inner_mut()?.write_all(&EOF_MARKER)?;
        self.coffset += EOF_MARKER.len() as u64;
        self.inner_mut()?.flush()
    }

    /// Writes every block still being compressed.
    fn drain(&mut self) -> io::Result<()> {
        while !self.in_flight.is_empty() {
            self.complete_one()?;
        }
        Ok(())
    }

    fn complete_one(&mut self) -> io::Result<()> {
        let Some(answer) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let Compressed { block, data } = answer
            .recv()
            .map_err(|_| io::Error::other("a BGZF compression thread stopped"))?;
        self.spare.push(data);
        self.write_block(&block)
    }

    fn write_block(&mut self, block: &[u8]) -> io::Result<()> {
        let start = self.coffset;
        self.inner_mut()?.write_all(block)?;
        self.addresses.push_back(start);
        self.coffset += block.len() as u64;
        self.written += 1;
        Ok(())
    }

    fn inner_mut(&mut self) -> io::Result<&mut W> {
        self.inner
            .as_mut()
            .ok_or_else(|| io::Error::other("BGZF writer already finished"))
    }
}

/// Blocks queued or being compressed per worker before the writer waits for the oldest (16:
/// 2 MiB of data a worker).
const IN_FLIGHT_PER_THREAD: usize = 16;

/// A libdeflate compressor for `level` (level 0 blocks are stored by hand, as htslib does).
pub(crate) fn compressor(level: u32) -> Compressor {
    let lvl = i32::try_from(level.max(1))
        .ok()
        .and_then(|l| CompressionLvl::new(l).ok())
        .unwrap_or_default();
    Compressor::new(lvl)
}

/// Appends `data` (at most [`MAX_BLOCK_DATA`] bytes) to `out` as one complete block. Level 0,
/// and data that deflate cannot fit, become one stored deflate block, as htslib writes them.
pub(crate) fn compress_block(
    data: &[u8],
    level: u32,
    compressor: &mut Compressor,
    out: &mut Vec<u8>,
) {
    if level > 0 && block::deflate(data, compressor, out) {
        return;
    }
    block::store(data, out);
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

    /// Ends the current block, writes every block in flight and flushes the inner writer.
    fn flush(&mut self) -> io::Result<()> {
        self.flush_block()?;
        self.drain()?;
        self.inner_mut()?.flush()
    }
}

impl<W: Write> Drop for Writer<W> {
    fn drop(&mut self) {
        if self.inner.is_some() {
            let _ = self
                .flush_block()
                .and_then(|()| self.drain())
                .and_then(|()| self.inner_mut()?.flush());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_sizes(bytes: &[u8]) -> Vec<u32> {
        let mut off = 0;
        let mut sizes = Vec::new();
        while off < bytes.len() {
            let bsize = u16::from_le_bytes([bytes[off + 16], bytes[off + 17]]) as usize + 1;
            let end = off + bsize;
            sizes.push(u32::from_le_bytes(bytes[end - 4..end].try_into().unwrap()));
            off = end;
        }
        sizes
    }

    #[test]
    fn blocks_hold_at_most_65280_bytes() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        for threads in [0, 2] {
            let mut w = Writer::new(Vec::new());
            w.set_threads(threads).unwrap();
            w.write_all(&data).unwrap();
            let bytes = w.finish().unwrap();
            assert_eq!(
                block_sizes(&bytes),
                vec![65280, 65280, 65280, 200_000 - 3 * 65280, 0]
            );
        }
    }

    #[test]
    fn threads_give_the_same_bytes() {
        let data: Vec<u8> = (0..1_000_000u32).map(|i| (i * 31 % 253) as u8).collect();
        let one = {
            let mut w = Writer::new(Vec::new());
            w.write_all(&data).unwrap();
            w.finish().unwrap()
        };
        let mut w = Writer::new(Vec::new());
        w.set_threads(3).unwrap();
        w.write_all(&data).unwrap();
        assert_eq!(w.finish().unwrap(), one);
    }

    #[test]
    fn flush_try_starts_a_new_block_only_when_needed() {
        let mut w = Writer::with_level(Vec::new(), 0).unwrap();
        w.write_all(&[1; 65000]).unwrap();
        w.flush_try(280).unwrap();
        assert_eq!(
            w.position(),
            BlockPosition {
                block: 0,
                uoffset: 65000
            }
        );
        w.flush_try(281).unwrap();
        assert_eq!(
            w.position(),
            BlockPosition {
                block: 1,
                uoffset: 0
            }
        );
        assert_eq!(w.block_address(1), Some(65000 + 18 + 5 + 8));
        w.forget_before(1);
        assert_eq!(w.block_address(0), None);
        let bytes = w.finish().unwrap();
        assert_eq!(block_sizes(&bytes), vec![65000, 0]);
    }

    #[test]
    fn level_is_checked_and_mapped() {
        assert!(matches!(
            Writer::with_level(Vec::new(), 13),
            Err(Error::InvalidLevel { level: 13 })
        ));
        assert!(Writer::with_level(Vec::new(), 0).is_ok());
        let levels: Vec<u32> = (-1..=10).map(htslib_level).collect();
        assert_eq!(levels, [7, 0, 1, 2, 3, 5, 6, 7, 8, 10, 12, 12]);
    }

    #[test]
    fn virtual_offsets_follow_blocks() {
        for threads in [0, 1] {
            let mut w = Writer::new(Vec::new());
            w.set_threads(threads).unwrap();
            assert_eq!(w.virtual_offset().unwrap(), VirtualOffset::new(0, 0));
            w.write_all(b"12345").unwrap();
            assert_eq!(w.virtual_offset().unwrap(), VirtualOffset::new(0, 5));
            w.flush_block().unwrap();
            w.flush_block().unwrap(); // an empty block is not written
            let c = w.virtual_offset().unwrap().coffset();
            assert!(c > 18);
            assert_eq!(w.virtual_offset().unwrap().uoffset(), 0);
            let bytes = w.finish().unwrap();
            assert_eq!(bytes.len() as u64, c + 28);
        }
    }

    #[test]
    fn drop_keeps_the_data_but_writes_no_eof_marker() {
        let mut out = Vec::new();
        {
            let mut w = Writer::new(&mut out);
            w.set_threads(2).unwrap();
            w.write_all(b"x").unwrap();
        }
        assert!(!out.ends_with(&EOF_MARKER));
        assert_eq!(block_sizes(&out), vec![1]);
    }
}
