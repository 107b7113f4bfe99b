//! Subsampling by read name, selecting exactly the records `samtools view --subsample` and
//! `-s INT.FRAC` select: a hash of the name (khash's X31 string hash, then Wang's integer hash)
//! mixed with a seed that samtools first passes through glibc's `srand`/`rand`.

/// A subsampling setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Subsample {
    fraction: f64,
    mixed_seed: u32,
}

impl Subsample {
    /// Keeps about `fraction` of the templates; `seed` as given on the command line (samtools
    /// replaces a non-zero seed by `srand(seed); rand()`). A fraction of 0 or less keeps every
    /// record, as in samtools.
    pub fn new(fraction: f64, seed: u32) -> Subsample {
        let mixed_seed = if seed != 0 { glibc_rand(seed) } else { 0 };
        Subsample {
            fraction,
            mixed_seed,
        }
    }

    /// The fraction asked for.
    pub fn fraction(&self) -> f64 {
        self.fraction
    }

    /// True when the record with this name is kept. Both reads of a pair share the decision.
    pub fn keeps(&self, name: &[u8]) -> bool {
        if self.fraction <= 0.0 {
            return true;
        }
        let k = wang_hash(x31_hash(name) ^ self.mixed_seed);
        f64::from(k & 0xff_ffff) / f64::from(0x100_0000u32) < self.fraction
    }
}

/// khash's `__ac_X31_hash_string` (characters are signed, as `char` is on x86-64).
fn x31_hash(s: &[u8]) -> u32 {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    let s = &s[..end];
    let Some((&first, rest)) = s.split_first() else {
        return 0;
    };
    let mut h = first as i8 as u32;
    for &c in rest {
        h = (h << 5).wrapping_sub(h).wrapping_add(c as i8 as u32);
    }
    h
}

/// khash's `__ac_Wang_hash`.
fn wang_hash(mut key: u32) -> u32 {
    key = key.wrapping_add(!(key << 15));
    key ^= key >> 10;
    key = key.wrapping_add(key << 3);
    key ^= key >> 6;
    key = key.wrapping_add(!(key << 11));
    key ^= key >> 16;
    key
}

/// The first `rand()` after `srand(seed)` in glibc (its additive feedback generator, TYPE_3).
fn glibc_rand(seed: u32) -> u32 {
    let seed = if seed == 0 { 1 } else { seed };
    let mut state = [0i32; 31];
    state[0] = seed as i32;
    // glibc keeps `word` in an int32_t, so a seed above 2^31 starts negative.
    let mut word = i64::from(seed as i32);
    for slot in state.iter_mut().skip(1) {
        let hi = word / 127_773;
        let lo = word % 127_773;
        word = 16_807 * lo - 2_836 * hi;
        if word < 0 {
            word += 2_147_483_647;
        }
        *slot = word as i32;
    }
    let (mut f, mut r) = (3usize, 0usize);
    let mut next = || {
        state[f] = (state[f] as u32).wrapping_add(state[r] as u32) as i32;
        let out = (state[f] as u32) >> 1;
        f = (f + 1) % 31;
        r = (r + 1) % 31;
        out
    };
    for _ in 0..310 {
        next();
    }
    next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_sequence() {
        // glibc: srand(1); rand() == 1804289383, srand(42); rand() == 71876166.
        assert_eq!(glibc_rand(1), 1_804_289_383);
        assert_eq!(glibc_rand(42), 71_876_166);
        assert_eq!(glibc_rand(0), 1_804_289_383);
        assert_eq!(glibc_rand(4_000_000_000), 1_111_130_805);
    }

    #[test]
    fn hashes() {
        assert_eq!(x31_hash(b""), 0);
        assert_eq!(x31_hash(b"a"), 97);
        assert_eq!(x31_hash(b"ab"), 97 * 31 + 98);
        assert_eq!(x31_hash(&[0xff]), 0xffff_ffff);
        assert_eq!(x31_hash(b"\xe9z"), 4_294_966_705);
        // Values from khash.h compiled with gcc.
        assert_eq!(wang_hash(0), 1_177_991_625);
        assert_eq!(wang_hash(12345), 1_951_105_283);
        assert_eq!(wang_hash(x31_hash(b"SRR065390.14978392")), 3_657_488_659);
    }

    #[test]
    fn zero_fraction_keeps_all() {
        let s = Subsample::new(0.0, 7);
        assert!(s.keeps(b"anything"));
        let all = Subsample::new(1.0, 7);
        assert!(all.keeps(b"anything"));
    }
}
