//! MD5 (RFC 1321), for the reference checksum each slice header carries: a wrong reference is
//! refused before any record is rebuilt from it.

const S: [u32; 64] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9,
    14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15,
    21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
];

/// The constants floor(2^32 * |sin(i + 1)|), computed once.
fn constants() -> &'static [u32; 64] {
    static K: std::sync::OnceLock<[u32; 64]> = std::sync::OnceLock::new();
    K.get_or_init(|| {
        std::array::from_fn(|i| ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32)
    })
}

/// One 64-byte block into `state`. The four rounds are separate loops over constant bounds,
/// so that the compiler unrolls them (rotations and word indexes become constants): a slice's
/// reference span, megabytes long, is digested once a slice.
#[inline]
fn compress(state: &mut [u32; 4], block: &[u8], ks: &[u32; 64]) {
    let mut m = [0u32; 16];
    for (w, b) in m.iter_mut().zip(block.chunks_exact(4)) {
        *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    let [mut a, mut b, mut c, mut d] = *state;
    macro_rules! round {
        ($range:expr, $f:expr, $g:expr) => {
            for i in $range {
                let (f, g): (u32, usize) = ($f(b, c, d), $g(i));
                let rotated = a
                    .wrapping_add(f)
                    .wrapping_add(ks[i])
                    .wrapping_add(m[g])
                    .rotate_left(S[i]);
                a = d;
                d = c;
                c = b;
                b = b.wrapping_add(rotated);
            }
        };
    }
    round!(0..16, |b: u32, c: u32, d: u32| (b & c) | (!b & d), |i| i);
    round!(16..32, |b: u32, c: u32, d: u32| (d & b) | (!d & c), |i| (5
        * i
        + 1)
        % 16);
    round!(32..48, |b: u32, c: u32, d: u32| b ^ c ^ d, |i| (3 * i + 5)
        % 16);
    round!(48..64, |b: u32, c: u32, d: u32| c ^ (b | !d), |i| (7 * i)
        % 16);
    for (s, v) in state.iter_mut().zip([a, b, c, d]) {
        *s = s.wrapping_add(v);
    }
}

/// The digest of `data`.
pub fn digest(data: &[u8]) -> [u8; 16] {
    let ks = constants();
    let mut state: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    let bit_len = (data.len() as u64).wrapping_mul(8);
    let whole = data.len() - data.len() % 64;
    let mut blocks = data[..whole].chunks_exact(64);
    for block in &mut blocks {
        compress(&mut state, block, ks);
    }
    let mut tail = [0u8; 128];
    let rest = &data[whole..];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let end = if rest.len() < 56 { 64 } else { 128 };
    tail[end - 8..end].copy_from_slice(&bit_len.to_le_bytes());
    for block in tail[..end].chunks_exact(64) {
        compress(&mut state, block, ks);
    }
    let mut out = [0u8; 16];
    for (i, s) in state.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&s.to_le_bytes());
    }
    out
}

/// Lower-case hex, as htslib prints a digest.
pub fn hex(d: &[u8; 16]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::{digest, hex};

    #[test]
    fn known_digests() {
        assert_eq!(hex(&digest(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(
            hex(&digest(b"The quick brown fox jumps over the lazy dog")),
            "9e107d9d372bb6826bd81d3542a419d6"
        );
        // Several blocks, and a tail that needs a second padding block.
        assert_eq!(
            hex(&digest(&[b'A'; 1000])),
            "7644672d049290f0390d9c993c7d343d"
        );
        assert_eq!(
            hex(&digest(&b"ACGT".repeat(17))),
            "0e316c1f00c054e5bced881bc1f45e8a"
        );
    }
}
