//! Parsing BAI and CSI bytes into an [`Index`], with htslib's acceptance rules
//! (`idx_read` and `idx_read_core` in hts.c).

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::io::Read;

use crate::binning::{self, MAX_DEPTH};
use crate::{Bin, Error, Index, Kind, Pair, Reference};

/// A compressed index larger than this when inflated is refused. Real indexes of very large
/// BAMs are tens of MB; this guards against gzip bombs.
pub const MAX_DECOMPRESSED: u64 = 1 << 30;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Inflates `bytes` if they are gzip (BGZF is multi-member gzip), as htslib's `bgzf_open`
/// reads either form. Returns the stream and whether it was compressed.
fn decompress<'a>(
    name: &str,
    bytes: &'a [u8],
) -> Result<(std::borrow::Cow<'a, [u8]>, bool), Error> {
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok((std::borrow::Cow::Borrowed(bytes), false));
    }
    let mut out = Vec::new();
    let mut decoder = flate2::read::MultiGzDecoder::new(bytes).take(MAX_DECOMPRESSED + 1);
    if let Err(source) = decoder.read_to_end(&mut out) {
        return Err(Error::Decompress {
            name: name.to_string(),
            offset: out.len() as u64,
            source,
        });
    }
    if out.len() as u64 > MAX_DECOMPRESSED {
        return Err(Error::TooLarge {
            name: name.to_string(),
            limit: MAX_DECOMPRESSED,
        });
    }
    Ok((std::borrow::Cow::Owned(out), true))
}

/// A little-endian reader over the index stream that knows where it is, for error messages.
struct Cursor<'a> {
    name: &'a str,
    data: &'a [u8],
    pos: usize,
    compressed: bool,
}

impl<'a> Cursor<'a> {
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Error> {
        if self.remaining() < n {
            return Err(Error::Truncated {
                name: self.name.to_string(),
                offset: self.pos as u64,
                what,
                compressed: self.compressed,
            });
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, Error> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn invalid(&self, offset: usize, message: String) -> Error {
        Error::Invalid {
            name: self.name.to_string(),
            offset: offset as u64,
            message,
            compressed: self.compressed,
        }
    }

    /// A signed 32-bit count; htslib rejects negative ones.
    fn count(&mut self, what: &'static str) -> Result<usize, Error> {
        let at = self.pos;
        let v = self.u32(what)? as i32;
        usize::try_from(v).map_err(|_| self.invalid(at, format!("{what} is negative ({v})")))
    }

    /// Fails unless `n` items of at least `each` bytes can still follow, so that a hostile count
    /// never drives an allocation larger than the file.
    fn check_room(&self, at: usize, n: usize, each: usize, what: &str) -> Result<(), Error> {
        let need = (n as u128) * (each as u128);
        if need > self.remaining() as u128 {
            return Err(self.invalid(
                at,
                format!(
                    "{what} is {n}, which needs at least {need} bytes but only {} remain",
                    self.remaining()
                ),
            ));
        }
        Ok(())
    }
}

pub(crate) fn parse(name: &str, bytes: &[u8]) -> Result<Index, Error> {
    let (data, compressed) = decompress(name, bytes)?;
    let mut c = Cursor {
        name,
        data: &data,
        pos: 0,
        compressed,
    };
    if c.remaining() < 4 {
        return Err(Error::BadMagic {
            name: name.to_string(),
            found: data.to_vec(),
        });
    }
    let magic = c.take(4, "magic")?;
    let (kind, min_shift, depth, aux) = match magic {
        b"BAI\x01" => (Kind::Bai, 14, 5, Vec::new()),
        b"CSI\x01" => {
            let at = c.pos;
            let min_shift = c.u32("CSI min_shift")?;
            let depth = c.u32("CSI depth")?;
            if depth > MAX_DEPTH || min_shift > 62 || min_shift + 3 * depth > 62 {
                return Err(c.invalid(
                    at,
                    format!(
                        "unsupported binning scheme min_shift {min_shift}, depth {depth} \
                         (depth must be at most {MAX_DEPTH} and min_shift + 3*depth at most 62)"
                    ),
                ));
            }
            let l_aux = c.u32("CSI l_aux")? as usize;
            let aux = c.take(l_aux, "CSI aux data")?.to_vec();
            (Kind::Csi, min_shift, depth, aux)
        }
        other => {
            return Err(Error::BadMagic {
                name: name.to_string(),
                found: other.to_vec(),
            })
        }
    };

    let at = c.pos;
    let n_ref = c.u32("n_ref")?;
    if n_ref > i32::MAX as u32 {
        return Err(c.invalid(at, format!("n_ref {n_ref} is larger than 2^31-1")));
    }
    let n_ref = n_ref as usize;
    let min_ref_len = if kind == Kind::Bai { 8 } else { 4 };
    c.check_room(at, n_ref, min_ref_len, "n_ref")?;

    let n_bins = binning::bin_count(depth);
    let mut refs = Vec::with_capacity(n_ref);
    for _ in 0..n_ref {
        refs.push(parse_reference(&mut c, kind, depth, n_bins)?);
    }

    // htslib treats a missing (or partial) n_no_coor as 0; we keep the distinction.
    let n_no_coor = if c.remaining() >= 8 {
        Some(c.u64("n_no_coor")?)
    } else {
        None
    };

    Ok(Index {
        name: name.to_string(),
        kind,
        min_shift,
        depth,
        aux,
        refs,
        n_no_coor,
    })
}

fn parse_reference(
    c: &mut Cursor<'_>,
    kind: Kind,
    depth: u32,
    n_bins: u32,
) -> Result<Reference, Error> {
    let at = c.pos;
    let n_bin = c.count("n_bin")?;
    let min_bin_len = if kind == Kind::Bai { 8 } else { 16 };
    c.check_room(at, n_bin, min_bin_len, "n_bin")?;
    let mut bins = BTreeMap::new();
    for _ in 0..n_bin {
        let bin_at = c.pos;
        let id = c.u32("bin number")?;
        let loffset = if kind == Kind::Csi {
            c.u64("bin loffset")?
        } else {
            0
        };
        let chunk_at = c.pos;
        let n_chunk = c.count("n_chunk")?;
        c.check_room(chunk_at, n_chunk, 16, "n_chunk")?;
        let mut chunks = Vec::with_capacity(n_chunk);
        for _ in 0..n_chunk {
            let u = c.u64("chunk start")?;
            let v = c.u64("chunk end")?;
            chunks.push(Pair { u, v });
        }
        match bins.entry(id) {
            Entry::Occupied(_) => {
                // htslib's idx_read_core fails on a repeated bin number (kh_put says present).
                return Err(c.invalid(bin_at, format!("bin {id} appears twice")));
            }
            Entry::Vacant(slot) => {
                slot.insert(Bin { loffset, chunks });
            }
        }
    }

    let linear = if kind == Kind::Bai {
        let at = c.pos;
        let n_intv = c.u32("n_intv")? as usize;
        c.check_room(at, n_intv, 8, "n_intv")?;
        let mut offsets = Vec::with_capacity(n_intv);
        for _ in 0..n_intv {
            offsets.push(c.u64("linear index offset")?);
        }
        fill_linear(&mut offsets);
        set_bai_loffsets(&mut bins, &offsets, depth, n_bins);
        Some(offsets)
    } else {
        None
    };
    Ok(Reference { bins, linear })
}

/// Fills gaps in a loaded linear index as htslib does: zero entries after the first non-zero one
/// take the next entry's value (older samtools and tabix left them), then entries equal to
/// `u64::MAX` take the next entry's value (`update_loff`).
fn fill_linear(offsets: &mut [u64]) {
    let n = offsets.len();
    let first_nonzero = offsets.iter().position(|&o| o != 0).unwrap_or(n);
    let mut j = n.saturating_sub(1);
    while j > first_nonzero {
        if offsets[j - 1] == 0 {
            offsets[j - 1] = offsets[j];
        }
        j -= 1;
    }
    for l in (0..n.saturating_sub(1)).rev() {
        if offsets[l] == u64::MAX {
            offsets[l] = offsets[l + 1];
        }
    }
}

/// BAI stores no per-bin loffset; htslib derives it from the linear index entry of the bin's
/// first window, or 0 when that window is past the linear index or the bin is out of range.
fn set_bai_loffsets(bins: &mut BTreeMap<u32, Bin>, linear: &[u64], depth: u32, n_bins: u32) {
    for (&id, bin) in bins.iter_mut() {
        bin.loffset = if id < n_bins {
            let bot = binning::bottom(id, depth);
            usize::try_from(bot)
                .ok()
                .and_then(|b| linear.get(b))
                .copied()
                .unwrap_or(0)
        } else {
            0
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_fill() {
        let mut v = vec![0, 0, 5, 0, 0, 9, 0, 12];
        fill_linear(&mut v);
        assert_eq!(v, vec![0, 0, 5, 9, 9, 9, 12, 12]);
        let mut v = vec![3, u64::MAX, u64::MAX, 7];
        fill_linear(&mut v);
        assert_eq!(v, vec![3, 7, 7, 7]);
        let mut v: Vec<u64> = vec![];
        fill_linear(&mut v);
        let mut v = vec![0, 0];
        fill_linear(&mut v);
        assert_eq!(v, vec![0, 0]);
    }
}
