//! Subsampling by read name, selecting exactly the records `samtools view --subsample` and
//! `-s INT.FRAC` select: a hash of the name (khash's X31 string hash, then Wang's integer hash)
//! mixed with a seed that samtools first passes through glibc's `srand`/`rand`.

use std::fmt;

/// A subsampling setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Subsample {
    fraction: f64,
    mixed_seed: u32,
}

/// `-s`, `--subsample` or `--subsample-seed` could not be read (samtools: "Incorrect sampling
/// argument").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubsampleError(pub String);

impl fmt::Display for SubsampleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Incorrect sampling argument \"{}\"", self.0)
    }
}

impl std::error::Error for SubsampleError {}

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

/// `-s INT.FRAC`: the integer part is the seed, `.FRAC` the fraction (`strtol`, then `strtod` of
/// the rest, which must be used up).
pub fn parse_seed_fraction(arg: &str) -> Result<(u32, f64), SubsampleError> {
    let bad = || SubsampleError(arg.to_string());
    let (seed, rest) = c_strtol(arg);
    if !rest.starts_with('.') {
        return Err(bad());
    }
    let frac: f64 = rest.parse().map_err(|_| bad())?;
    Ok((seed as u32, frac))
}

/// `--subsample FLOAT`: all of it a number in 0..=1.
pub fn parse_fraction(arg: &str) -> Result<f64, SubsampleError> {
    match arg.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) && !arg.starts_with(char::is_whitespace) => Ok(f),
        _ => Err(SubsampleError(arg.to_string())),
    }
}

/// `--subsample-seed INT`: C's `atoi` (leading digits, 0 when none).
pub fn parse_seed(arg: &str) -> u32 {
    c_strtol(arg).0 as u32
}

/// C's `strtol(s, &end, 10)`: the value (wrapped to 64 bits) and the unparsed rest.
fn c_strtol(s: &str) -> (i64, &str) {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = digits.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return (0, s);
    }
    let v = digits[..n].bytes().fold(0i64, |acc, d| {
        acc.saturating_mul(10).saturating_add(i64::from(d - b'0'))
    });
    (if neg { -v } else { v }, &digits[n..])
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
    fn arguments() {
        assert_eq!(parse_seed_fraction("3.25"), Ok((3, 0.25)));
        assert_eq!(parse_seed_fraction(".5"), Ok((0, 0.5)));
        assert!(parse_seed_fraction("3").is_err());
        assert!(parse_seed_fraction("3.5x").is_err());
        assert_eq!(parse_fraction("0.5"), Ok(0.5));
        assert!(parse_fraction("1.5").is_err());
        assert!(parse_fraction("x").is_err());
        assert_eq!(parse_seed("12abc"), 12);
        assert_eq!(parse_seed("abc"), 0);
        assert_eq!(parse_seed("-1"), u32::MAX);
    }

    #[test]
    fn zero_fraction_keeps_all() {
        let s = Subsample::new(0.0, 7);
        assert!(s.keeps(b"anything"));
        let all = Subsample::new(1.0, 7);
        assert!(all.keeps(b"anything"));
    }
}
