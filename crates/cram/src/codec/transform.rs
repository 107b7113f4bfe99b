//! The transforms rANS Nx16 and the arithmetic coder both stack under their entropy coders:
//! striping (byte i of n streams interleaved) and bit packing (up to 16 symbols in 1, 2 or 4
//! bits, least significant first).

// The flags of a stream's first byte that both coders give the same meaning.
pub(super) const STRIPE: u8 = 0x08;
/// How deep stripes may nest. htscodecs writes one level (its sub-streams are never striped);
/// one more is tolerated. The bound keeps stripes inside stripes from recursing until the
/// stack runs out, and a block from declaring more than 255^2 sub-streams to decode.
pub(super) const STRIPE_DEPTH: u32 = 2;
pub(super) const NO_SIZE: u8 = 0x10;
pub(super) const CAT: u8 = 0x20;
pub(super) const RLE: u8 = 0x40;
pub(super) const PACK: u8 = 0x80;

/// The length of stripe `j` of `n` over `size` bytes: the first `size % n` take one more.
pub(super) fn stripe_len(size: usize, n: usize, j: usize) -> usize {
    size / n + usize::from(size % n > j)
}

/// Byte `i` of stripe `j` goes to `i * n + j`; the callers check each part holds
/// `stripe_len` bytes, and nothing lands past `size` whatever the parts hold.
pub(super) fn interleave(parts: &[Vec<u8>], size: usize) -> Vec<u8> {
    let n = parts.len();
    let mut out = vec![0u8; size];
    for (j, part) in parts.iter().enumerate() {
        for (o, &v) in out.iter_mut().skip(j).step_by(n).zip(part) {
            *o = v;
        }
    }
    out
}

/// Expands `n` symbols packed into `packed` as indexes into `symbols` (1 to 16 of them).
pub(super) fn unpack(packed: &[u8], symbols: &[u8], n: usize) -> Result<Vec<u8>, String> {
    if symbols.len() == 1 {
        return Ok(vec![symbols[0]; n]);
    }
    let bits = match symbols.len() {
        2 => 1,
        3..=4 => 2,
        5..=16 => 4,
        k => return Err(format!("bit packing of {k} symbols")),
    };
    let per = 8 / bits;
    if packed.len() < n.div_ceil(per) {
        return Err(format!(
            "{} packed bytes cannot hold {n} symbols",
            packed.len()
        ));
    }
    let mask = (1u8 << bits) - 1;
    (0..n)
        .map(|i| {
            let v = (packed[i / per] >> ((i % per) * bits)) & mask;
            symbols
                .get(usize::from(v))
                .copied()
                .ok_or_else(|| format!("packed value {v} outside its {} symbols", symbols.len()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{arith, rans_nx16};

    #[test]
    fn both_coders_read_the_same_stored_and_packed_streams() {
        for decode in [arith::decode, rans_nx16::decode] {
            // CAT: flags 0x20, size 3, the bytes themselves.
            assert_eq!(decode(&[0x20, 3, b'a', b'b', b'c'], 3).unwrap(), b"abc");
            // A size past the block's is refused before anything is allocated.
            assert!(decode(&[0x20, 0x84, 0x80, 0x80, 0x00], 3).is_err());
            // PACK of one symbol, stored: every byte that symbol, no data needed.
            assert_eq!(decode(&[0xa0, 4, 1, b'x', 0], 4).unwrap(), b"xxxx");
            // PACK of two symbols, 1 bit each, least significant first, in one stored byte.
            assert_eq!(
                decode(&[0xa0, 5, 2, b'a', b'b', 1, 0b10110], 5).unwrap(),
                b"abbab"
            );
        }
    }
}
