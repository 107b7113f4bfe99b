//! Numbers and FLAG values read from the command line exactly as samtools reads them (C's
//! `atoi` on [`region::strtol`], htslib's `bam_str2flag`), quirks included: `-q 300` filters every
//! read, `-q 4294967300` is `-q 4`, `-F 0x10000` is accepted, an unknown flag name sets every
//! bit.

/// glibc's `atoi`: `(int) strtol(s, NULL, 10)`, so a value past the `long` range saturates
/// and the result is then cut to its low 32 bits.
pub fn atoi(s: &str) -> i32 {
    region::strtol(s.as_bytes(), 10).0 as i32
}

/// htslib's `bam_str2flag`: a number (decimal, `0x` hex, `0` octal, any value; the C `long`
/// is then truncated to an `int`), else comma-separated flag names in any case; -1 (all bits)
/// for a name htslib does not know, which samtools then ORs in.
pub fn str2flag(s: &str) -> i32 {
    let (n, used) = region::strtol(s.as_bytes(), 0);
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
    }
}
