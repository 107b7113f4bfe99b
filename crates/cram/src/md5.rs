//! MD5 (RFC 1321), for the reference checksum each slice header carries: a wrong reference is
//! refused before any record is rebuilt from it.

use std::sync::OnceLock;

const S: [u32; 64] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9,
    14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15,
    21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
];

/// floor(2^32 * |sin(i + 1)|), as RFC 1321 lists them (loaded from memory, not immediates:
/// see `compress`).
const K: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

/// One 64-byte block into `state`. The four rounds are separate loops over constant bounds,
/// so that the compiler unrolls them (rotations and word indexes become immediates): a
/// slice's reference span, megabytes long, is digested once a slice. The
/// round functions are written in their forms of fewest operations (`d ^ (b & (c ^ d))` for
/// `(b & c) | (!b & d)`, as the usual C and assembly versions do): 25% fewer instructions.
#[inline]
fn compress(state: &mut [u32; 4], block: &[u8; 64]) {
    // MD5's speed is bound by the chain of operations each step waits for (the round
    // function of `b`, the add, the rotation, the add of `b`). Each step's constant plus its
    // word plus `a` is summed off that chain and the round function added last: with the
    // constants as immediates, the compiler moved their add after the function's, one add
    // more on the chain each step. Read through an opaque reference, they are not folded.
    let word = |g: usize| {
        u32::from_le_bytes([
            block[4 * g],
            block[4 * g + 1],
            block[4 * g + 2],
            block[4 * g + 3],
        ])
    };
    let k = std::hint::black_box(&K);
    let [mut a, mut b, mut c, mut d] = *state;
    macro_rules! round {
        ($range:expr, $f:expr, $g:expr) => {
            let first = $range.start;
            let kw: [u32; 16] =
                std::array::from_fn(|j| k[first + j].wrapping_add(word($g(first + j))));
            for i in $range {
                let f: u32 = $f(b, c, d);
                let rotated = a
                    .wrapping_add(kw[i - first])
                    .wrapping_add(f)
                    .rotate_left(S[i]);
                a = d;
                d = c;
                c = b;
                b = b.wrapping_add(rotated);
            }
        };
    }
    round!(0..16, |b: u32, c: u32, d: u32| d ^ (b & (c ^ d)), |i| i);
    // G's two terms share no bit: added, `c & !d` is summed before `b` is known, which
    // leaves one operation between `b` and the sum (OpenSSL's assembly does the same); H
    // and I likewise take `b` last.
    round!(
        16..32,
        |b: u32, c: u32, d: u32| (c & !d).wrapping_add(b & d),
        |i: usize| (5 * i + 1) % 16
    );
    round!(32..48, |b: u32, c: u32, d: u32| b ^ (c ^ d), |i: usize| (3
        * i
        + 5)
        % 16);
    round!(48..64, |b: u32, c: u32, d: u32| c ^ (b | !d), |i: usize| (7
        * i)
        % 16);
    for (s, v) in state.iter_mut().zip([a, b, c, d]) {
        *s = s.wrapping_add(v);
    }
}

/// The digest of `data`.
pub fn digest(data: &[u8]) -> [u8; 16] {
    let mut state: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    let bit_len = (data.len() as u64).wrapping_mul(8);
    let whole = data.len() - data.len() % 64;
    for block in data[..whole].chunks_exact(64) {
        // chunks_exact(64) gives 64 bytes: the conversion cannot fail.
        if let Ok(block) = block.try_into() {
            compress(&mut state, block);
        }
    }
    let mut tail = [0u8; 128];
    let rest = &data[whole..];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let end = if rest.len() < 56 { 64 } else { 128 };
    tail[end - 8..end].copy_from_slice(&bit_len.to_le_bytes());
    for block in tail[..end].chunks_exact(64) {
        if let Ok(block) = block.try_into() {
            compress(&mut state, block);
        }
    }
    let mut out = [0u8; 16];
    for (i, s) in state.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&s.to_le_bytes());
    }
    out
}

/// A slice's reference MD5 to check against the bases read for it, made where the header is
/// at hand and run where there is time: the digest costs as much as reading the bases, and a
/// worker can take it off the thread that reads them.
pub(crate) struct SpanCheck {
    /// The slice header's MD5.
    pub expected: [u8; 16],
    /// The reference's name and the slice's span (1-based start, length), for the error.
    pub name: String,
    pub start: i32,
    pub span: i32,
    /// The slice's offset.
    pub at: u64,
}

/// The digest a slice's check takes of its reference bases: their first `span` (all of them
/// when the reference ends within the span).
pub(crate) fn span_digest(bases: &[u8], span: i64) -> [u8; 16] {
    let span = usize::try_from(span).unwrap_or(0).min(bases.len());
    digest(&bases[..span])
}

impl SpanCheck {
    /// The slice's first `span` bases of `bases` against the MD5: a mismatch is an error
    /// naming the reference and the span (htslib's message).
    pub(crate) fn check(&self, bases: &[u8]) -> Result<(), crate::Error> {
        self.check_once(bases, &OnceLock::new())
    }

    /// [`SpanCheck::check`] with the digest kept in `made`: made there once, by whoever
    /// comes first (a worker reading ahead, `reader::ahead`, or this check).
    pub(crate) fn check_once(
        &self,
        bases: &[u8],
        made: &OnceLock<[u8; 16]>,
    ) -> Result<(), crate::Error> {
        let got = *made.get_or_init(|| span_digest(bases, i64::from(self.span)));
        if got == self.expected {
            return Ok(());
        }
        Err(crate::Error::at(
            self.at,
            format!(
                "MD5 checksum reference mismatch at {}:{}-{} (CRAM {}, reference {}): wrong reference?",
                self.name,
                self.start,
                i64::from(self.start) + i64::from(self.span) - 1,
                hex(&self.expected),
                hex(&got)
            ),
        ))
    }
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
        // Several blocks, with a tail (40 bytes) that fits its padding in its own block.
        assert_eq!(
            hex(&digest(&[b'A'; 1000])),
            "7644672d049290f0390d9c993c7d343d"
        );
        // Tails around the 56 bytes past which the padding takes a second block, and whole
        // blocks (digests from Python's hashlib).
        for (n, want) in [
            (55, "051c73d2c060f75668305d6c3e0e19b0"),
            (56, "0bf3bfb389e33733bf4ee8700950bbc8"),
            (63, "a395909ed0aa76cd91a9b38c8f73e0de"),
            (64, "4c6aa5e06b77956fe41d45aa83c8a598"),
            (65, "f09c6deecf6b60f3e75838f84073703a"),
            (119, "5ddf530ac417dbd202f54517469f518e"),
            (120, "edea481f851e212d8687779021e48821"),
        ] {
            let text: Vec<u8> = b"ACGTN".iter().copied().cycle().take(n).collect();
            assert_eq!(hex(&digest(&text)), want, "{n} bytes");
        }
        assert_eq!(
            hex(&digest(&b"ACGT".repeat(17))),
            "0e316c1f00c054e5bced881bc1f45e8a"
        );
    }
}
