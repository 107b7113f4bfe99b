//! bgzip 1.16's `.gzi` indexes: written while compressing (`-i`), rebuilt from a BGZF file
//! (`-r`), used to start decompressing at an uncompressed offset (`-b`) and to recompress with
//! the same blocks (`-g`). The file is a little-endian `u64` count then a (compressed,
//! uncompressed) offset pair for every block start but the first's (0, 0); htslib writes the
//! count as `noffs - 1`, so a file without blocks gets 2^64 - 1, as here.

use std::io::{self, Read, Write};

use hfile::HFile;

/// The uncompressed size of a block past the end of a `-g` index (`BGZF_MAX_BLOCK_SIZE`;
/// this writer's blocks hold at most 65280 bytes, so such a tail is cut there instead).
const TAIL_BLOCK: u64 = 0x10000;

/// Every block start: (compressed offset, uncompressed offset), the first (0, 0).
pub type Starts = Vec<(u64, u64)>;

/// The `.gzi` bytes for `starts`.
pub fn to_bytes(starts: &[(u64, u64)]) -> Vec<u8> {
    let n = (starts.len() as u64).wrapping_sub(1);
    let mut out = n.to_le_bytes().to_vec();
    for &(c, u) in starts.iter().skip(1) {
        out.extend_from_slice(&c.to_le_bytes());
        out.extend_from_slice(&u.to_le_bytes());
    }
    out
}

/// Reads a `.gzi` file: the block starts it holds, (0, 0) first.
///
/// # Errors
/// The file cannot be read or is shorter than its count says.
pub fn load(name: &str) -> Result<Starts, String> {
    let bytes = std::fs::read(name).map_err(|e| format!("{name}: {e}"))?;
    let word = |i: usize| {
        bytes
            .get(i * 8..i * 8 + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    let short = || format!("{name}: the index is shorter than its count says");
    let n = word(0).ok_or_else(short)?;
    // The count cannot exceed what the file holds; a larger one is a damaged index.
    if n.wrapping_add(1) == 0 || n > (bytes.len() as u64) / 16 {
        return Err(short());
    }
    let mut starts = vec![(0, 0)];
    for i in 0..usize::try_from(n).map_err(|_| short())? {
        let c = word(1 + 2 * i).ok_or_else(short)?;
        let u = word(2 + 2 * i).ok_or_else(short)?;
        starts.push((c, u));
    }
    Ok(starts)
}

/// Writes `starts` as a `.gzi` file.
///
/// # Errors
/// The file cannot be written.
pub fn dump(name: &str, starts: &[(u64, u64)]) -> Result<(), String> {
    std::fs::write(name, to_bytes(starts))
        .map_err(|e| format!("Could not write index to '{name}': {e}"))
}

/// Where `bgzf_useek` starts for uncompressed offset `at`: the last block starting at or
/// before it (htslib's binary search) and how far into that block `at` lies.
pub fn locate(starts: &[(u64, u64)], at: u64) -> (u64, u64) {
    let i = starts.partition_point(|&(_, u)| u <= at).saturating_sub(1);
    let (c, u) = starts.get(i).copied().unwrap_or((0, 0));
    (c, at - u.min(at))
}

/// The block starts of a BGZF file, read to its end (every block inflated and checked); an
/// empty block is not a start, as htslib skips it while reading.
///
/// # Errors
/// The data is not BGZF or a block is damaged.
pub fn reindex(data: &mut bgzf::Reader<HFile>) -> Result<Starts, String> {
    let mut starts = Vec::new();
    let mut uaddr = 0u64;
    loop {
        let len = data.fill_block().map_err(|e| e.to_string())?.len();
        if len == 0 {
            return Ok(starts);
        }
        starts.push((data.virtual_offset().coffset(), uaddr));
        uaddr += len as u64;
        data.advance(len);
    }
}

/// Compresses `input` into `w` as bgzip does and returns the block starts (for `-i`); with
/// `blocks` (`-g`), each block holds what that index's block held.
///
/// # Errors
/// Reading the input or writing the output fails.
pub fn compress<W: Write>(
    input: &mut dyn Read,
    w: &mut bgzf::Writer<W>,
    blocks: Option<&[(u64, u64)]>,
) -> io::Result<Starts> {
    let Some(blocks) = blocks else {
        io::copy(input, w)?;
        w.flush_block()?;
        w.virtual_offset()?;
        let n = w.position().block;
        return (0..n)
            .map(|b| {
                let c = w
                    .block_address(b)
                    .ok_or_else(|| io::Error::other("block address"))?;
                Ok((c, b * bgzf::block::MAX_BLOCK_DATA as u64))
            })
            .collect();
    };
    let mut buf = Vec::new();
    for i in 0.. {
        let size = match (blocks.get(i), blocks.get(i + 1)) {
            (Some(a), Some(b)) => b.1.saturating_sub(a.1),
            _ => TAIL_BLOCK,
        };
        buf.clear();
        let got = input.take(size).read_to_end(&mut buf)?;
        w.write_all(&buf)?;
        w.flush_block()?;
        if (got as u64) < size {
            break;
        }
    }
    Ok(Vec::new())
}
