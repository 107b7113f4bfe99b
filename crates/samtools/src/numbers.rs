//! Numbers and FLAG values read from the command line exactly as samtools reads them (C's
//! `atoi` and `strtol`, htslib's `bam_str2flag`), quirks included: `-q 300` filters every
//! read, `-q 4294967300` is `-q 4`, `-F 0x10000` is accepted, an unknown flag name sets every
//! bit.

/// glibc's `atoi`: `(int) strtol(s, NULL, 10)`, so a value past the `long` range saturates
/// and the result is then cut to its low 32 bits.
pub fn atoi(s: &str) -> i32 {
    strtol(s, 10).0 as i32
}

/// C's `strtol` for bases 10 and 0 (0: `0x` hex, `0` octal, else decimal): the value and how
/// many bytes were used (0: no number).
pub fn strtol(s: &str, base: u32) -> (i64, usize) {
    let b = s.as_bytes();
    let mut i = b
        .iter()
        .take_while(|c| c.is_ascii_whitespace() || **c == 0x0b)
        .count();
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut radix = if base == 0 { 10 } else { base };
    if base == 0 && b.get(i) == Some(&b'0') {
        if matches!(b.get(i + 1), Some(b'x' | b'X'))
            && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        {
            radix = 16;
            i += 2;
        } else {
            radix = 8;
        }
    }
    let start = i;
    // Accumulated with its sign, so it saturates at LONG_MIN or LONG_MAX as strtol does.
    let mut v: i64 = 0;
    while let Some(d) = b.get(i).and_then(|c| (*c as char).to_digit(radix)) {
        let d = if neg { -i64::from(d) } else { i64::from(d) };
        v = v.saturating_mul(i64::from(radix)).saturating_add(d);
        i += 1;
    }
    if i == start {
        return (0, 0);
    }
    (v, i)
}

/// htslib's `bam_str2flag`: a number (decimal, `0x` hex, `0` octal, any value; the C `long`
/// is then truncated to an `int`), else comma-separated flag names in any case; -1 (all bits)
/// for a name htslib does not know, which samtools then ORs in.
pub fn str2flag(s: &str) -> i32 {
    let (n, used) = strtol(s, 0);
    if used > 0 {
        return n as i32;
    }
    const NAMES: [(&str, i32); 12] = [
        ("PAIRED", 0x1),
        ("PROPER_PAIR", 0x2),
        ("UNMAP", 0x4),
        ("MUNMAP", 0x8),
        ("REVERSE", 0x10),
        ("MREVERSE", 0x20),
        ("READ1", 0x40),
        ("READ2", 0x80),
        ("SECONDARY", 0x100),
        ("QCFAIL", 0x200),
        ("DUP", 0x400),
        ("SUPPLEMENTARY", 0x800),
    ];
    if s.is_empty() {
        return 0;
    }
    let mut flag = 0;
    for name in s.split(',') {
        match NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            Some((_, bit)) => flag |= bit,
            None => return -1,
        }
    }
    flag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_numbers_as_htslib_reads_them() {
        assert_eq!(str2flag("0x10000"), 0x10000);
        assert_eq!(str2flag("4abc"), 4);
        assert_eq!(str2flag("BOGUS"), -1);
        assert_eq!(str2flag("UNMAP,"), -1);
        assert_eq!(str2flag("dup"), 0x400);
        assert_eq!(atoi("300"), 300);
        assert_eq!(atoi(" -5x"), -5);
        assert_eq!(atoi("x"), 0);
        assert_eq!(atoi("4294967300"), 4);
        assert_eq!(atoi("99999999999999999999"), -1);
        assert_eq!(atoi("-99999999999999999999"), 0);
        assert_eq!(strtol("-12", 10), (-12, 3));
        assert_eq!(strtol("0x1f", 0), (31, 4));
    }
}
