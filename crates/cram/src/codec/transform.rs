//! The transforms rANS Nx16 and the arithmetic coder both stack under their entropy coders:
//! striping (byte i of n streams interleaved) and bit packing (up to 16 symbols in 1, 2 or 4
//! bits, least significant first).

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
