//! `.gzi` indexes, as bgzip 1.16 and htslib's `bgzf_index_*` write and read them: the start
//! of every BGZF block, as (compressed offset, uncompressed offset). The file is a
//! little-endian `u64` count then one pair of `u64`s for every block start but the first's
//! (0, 0); htslib writes the count as `noffs - 1`, so a file without blocks gets 2^64 - 1, as
//! here. bgzip writes them (`-i`, `-r`), seeks by them (`-b`) and recompresses along them
//! (`-g`); a bgzipped FASTA is read through its `.gzi` (the `cram` crate).

use std::io;

use crate::{Error, Reader, Source};

/// Every block start: (compressed offset, uncompressed offset), the first (0, 0).
pub type Starts = Vec<(u64, u64)>;

/// The `.gzi` bytes for `starts` (whose first, (0, 0), is implicit in the file).
pub fn to_bytes(starts: &[(u64, u64)]) -> Vec<u8> {
    let n = (starts.len() as u64).wrapping_sub(1);
    let mut out = n.to_le_bytes().to_vec();
    for &(c, u) in starts.iter().skip(1) {
        out.extend_from_slice(&c.to_le_bytes());
        out.extend_from_slice(&u.to_le_bytes());
    }
    out
}

/// The block starts a `.gzi`'s bytes hold, (0, 0) first; `name` is for errors. Bytes after
/// the pairs the count announces are ignored, as `bgzf_index_load` ignores them.
///
/// # Errors
/// [`Error::IndexTruncated`]: the bytes are fewer than the count says (or the count is
/// 2^64 - 1, htslib's count of an index without blocks, which it refuses to load).
pub fn parse(name: &str, bytes: &[u8]) -> Result<Starts, Error> {
    let word = |i: usize| {
        bytes
            .get(i * 8..i * 8 + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    let short = |count: u64| Error::IndexTruncated {
        name: name.to_string(),
        count,
        len: bytes.len() as u64,
    };
    let n = word(0).ok_or_else(|| short(0))?;
    // The count cannot exceed what the bytes hold; a larger one is a damaged index (and the
    // check comes before anything is allocated for it).
    if n.wrapping_add(1) == 0 || n > (bytes.len() as u64) / 16 {
        return Err(short(n));
    }
    let mut starts = vec![(0, 0)];
    for i in 0..usize::try_from(n).map_err(|_| short(n))? {
        let c = word(1 + 2 * i).ok_or_else(|| short(n))?;
        let u = word(2 + 2 * i).ok_or_else(|| short(n))?;
        starts.push((c, u));
    }
    Ok(starts)
}

/// Reads the `.gzi` file `name` (a local path).
///
/// # Errors
/// [`Error::IndexFile`] when it cannot be read, else as [`parse`].
pub fn read(name: &str) -> Result<Starts, Error> {
    let bytes = std::fs::read(name).map_err(|source| Error::IndexFile {
        name: name.to_string(),
        source,
    })?;
    parse(name, &bytes)
}

/// Writes `starts` as the `.gzi` file `name`.
///
/// # Errors
/// [`Error::IndexWrite`]: the file cannot be written.
pub fn write(name: &str, starts: &[(u64, u64)]) -> Result<(), Error> {
    std::fs::write(name, to_bytes(starts)).map_err(|source| Error::IndexWrite {
        name: name.to_string(),
        source,
    })
}

/// Where `bgzf_useek` starts for uncompressed offset `at`: the compressed offset of the last
/// block starting at or before it (htslib's binary search) and how far into that block `at`
/// lies. `starts` must be in order, as every `.gzi` is.
pub fn locate(starts: &[(u64, u64)], at: u64) -> (u64, u64) {
    let i = starts.partition_point(|&(_, u)| u <= at).saturating_sub(1);
    let (c, u) = starts.get(i).copied().unwrap_or((0, 0));
    (c, at - u.min(at))
}

/// The block starts of a BGZF file, read to its end (every block inflated and checked), as
/// `bgzip -r` rebuilds them; an empty block is not a start, as htslib skips it while reading.
///
/// # Errors
/// The data is not BGZF or a block is damaged.
pub fn rebuild<S: Source>(data: &mut Reader<S>) -> Result<Starts, Error> {
    let mut starts = Vec::new();
    let mut uaddr = 0u64;
    loop {
        let len = data.fill_block()?.len();
        if len == 0 {
            return Ok(starts);
        }
        starts.push((data.virtual_offset().coffset(), uaddr));
        uaddr += len as u64;
        data.advance(len);
    }
}

/// The `.gzi` of a file [`crate::Writer`] wrote, from its block addresses (each block but
/// the last holds [`crate::block::MAX_BLOCK_DATA`] bytes).
///
/// # Errors
/// The writer's last block cannot be flushed, or it lost a block's address.
pub fn from_writer<W: io::Write>(w: &mut crate::Writer<W>) -> io::Result<Starts> {
    w.flush_block()?;
    w.virtual_offset()?;
    let n = w.position().block;
    (0..n)
        .map(|b| {
            let c = w
                .block_address(b)
                .ok_or_else(|| io::Error::other("block address"))?;
            Ok((c, b * crate::block::MAX_BLOCK_DATA as u64))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_with_the_first_start_implicit() {
        let starts = vec![(0, 0), (100, 65280), (250, 130560)];
        let bytes = to_bytes(&starts);
        assert_eq!(bytes.len(), 8 + 2 * 16);
        assert_eq!(parse("x.gzi", &bytes).unwrap(), starts);
        // No blocks: htslib's count of 2^64 - 1, which it will not load.
        assert_eq!(to_bytes(&[]), u64::MAX.to_le_bytes());
        assert!(parse("x.gzi", &to_bytes(&[])).is_err());
    }

    #[test]
    fn a_count_beyond_the_bytes_is_refused_with_the_name() {
        let mut bytes = to_bytes(&[(0, 0), (100, 65280)]);
        bytes[0] = 2;
        let e = parse("x.gzi", &bytes).unwrap_err().to_string();
        assert_eq!(e, "x.gzi: the index is shorter than its count says");
        assert!(parse("x.gzi", &[1, 2]).is_err());
        // Trailing bytes are ignored, as htslib ignores them.
        bytes[0] = 1;
        bytes.push(7);
        assert_eq!(parse("x.gzi", &bytes).unwrap().len(), 2);
    }

    #[test]
    fn locate_finds_the_block_and_the_offset_in_it() {
        let starts = [(0, 0), (100, 65280), (250, 130560)];
        assert_eq!(locate(&starts, 0), (0, 0));
        assert_eq!(locate(&starts, 65279), (0, 65279));
        assert_eq!(locate(&starts, 65280), (100, 0));
        assert_eq!(locate(&starts, 200000), (250, 200000 - 130560));
    }
}
