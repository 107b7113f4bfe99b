//! Region strings as tabix reads them (htslib 1.16's `hts_itr_querys`, `hts_parse_region`
//! with thousands separators and `hts_parse_decimal`): `.` (the whole file), `*` (lines
//! without coordinates), `NAME`, `{NAME}`, `NAME:BEG`, `NAME:BEG-END`, `NAME:-END`, 1-based and
//! inclusive, numbers with `,` separators and `k`/`m`/`g` or exponent suffixes; a whole string
//! that is a sequence name is that name even when it holds a `:`, unless the part before its
//! last `:` is a name too (ambiguous, an error).

use index::tbi::Meta;

/// The end of a region without one (htslib's `HTS_POS_MAX`).
pub const MAX_END: i64 = (1i64 << 62) - 1;

/// A region resolved against the index's names: 0-based, half-open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// The sequence's index in [`Meta::names`].
    pub tid: usize,
    /// 0-based start.
    pub beg: i64,
    /// 0-based exclusive end.
    pub end: i64,
}

/// What a region string asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Lines overlapping a region of one sequence.
    Region(Region),
    /// `.`: every line from the first indexed one to the end of the file (`HTS_IDX_START`).
    Start,
    /// `*`: the lines after the last indexed one (`HTS_IDX_NOCOOR`; none in a tabix file).
    Unplaced,
}

/// A number read by [`decimal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    /// The value.
    pub value: i64,
    /// How many bytes of the text it used (0: no digits).
    pub used: usize,
}

/// `hts_parse_decimal`: the value and how many bytes of `s` it used (0: no digits). Leading
/// blanks and a sign, digits (with `,` skipped when `commas`), a fraction, then an exponent or
/// a `k`, `m` or `g` suffix; the fraction left after the exponent is dropped. Overflow wraps as
/// htslib's arithmetic does on the machines it runs on.
pub fn decimal(s: &[u8], commas: bool) -> Decimal {
    let mut i = s.iter().take_while(|&&b| is_space(b)).count();
    let neg = match s.get(i) {
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
    // The exponent and the count of decimals are C `int`s in htslib, and wrap as those do.
    let (mut n, mut digits, mut decimals, mut e) = (0i64, 0u32, 0i32, 0i32);
    let push = |n: i64, b: u8| n.wrapping_mul(10).wrapping_add(i64::from(b - b'0'));
    while let Some(&b) = s.get(i) {
        if b.is_ascii_digit() {
            n = push(n, b);
            digits += 1;
        } else if !(b == b',' && commas) {
            break;
        }
        i += 1;
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&b) = s.get(i).filter(|b| b.is_ascii_digit()) {
            n = push(n, b);
            digits += 1;
            decimals = decimals.wrapping_add(1);
            i += 1;
        }
    }
    match s.get(i) {
        Some(b'e' | b'E') => {
            i += 1;
            let eneg = match s.get(i) {
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
            while let Some(&b) = s.get(i).filter(|b| b.is_ascii_digit()) {
                e = e.wrapping_mul(10).wrapping_add(i32::from(b - b'0'));
                i += 1;
            }
            if eneg {
                e = e.wrapping_neg();
            }
        }
        Some(b'k' | b'K') => (e, i) = (e + 3, i + 1),
        Some(b'm' | b'M') => (e, i) = (e + 6, i + 1),
        Some(b'g' | b'G') => (e, i) = (e + 9, i + 1),
        _ => {}
    }
    e = e.wrapping_sub(decimals);
    // An absurd exponent only wraps or empties the value; bound the loop as the result is.
    for _ in 0..e.clamp(0, 64) {
        n = n.wrapping_mul(10);
    }
    for _ in 0..e.clamp(-64, 0).unsigned_abs() {
        n /= 10;
    }
    let used = if digits > 0 { i } else { 0 };
    Decimal {
        value: if neg { n.wrapping_neg() } else { n },
        used,
    }
}

/// C's `isspace` in the C locale.
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Resolves `text` against `meta`'s names as `hts_itr_querys` does. `Ok(None)`: a name the
/// index does not hold, or an empty or reversed range (tabix prints nothing and goes on);
/// `Err`: htslib's complaint about the text (tabix logs it and goes on).
///
/// # Errors
/// Mismatched braces, an ambiguous name, a coordinate of 0 before a `-`, or text after the
/// numbers.
pub fn parse(meta: &Meta, text: &str) -> Result<Option<Target>, String> {
    match text {
        "." => return Ok(Some(Target::Start)),
        "*" => return Ok(Some(Target::Unplaced)),
        _ => {}
    }
    let whole = |tid| {
        Some(Target::Region(Region {
            tid,
            beg: 0,
            end: MAX_END,
        }))
    };
    let (name, colon) = if let Some(quoted) = text.strip_prefix('{') {
        let Some(close) = quoted.find('}') else {
            return Err(format!("Mismatching braces in \"{text}\""));
        };
        let colon = (quoted.as_bytes().get(close + 1) == Some(&b':')).then_some(close + 2);
        match colon {
            Some(c) => (&text[1..c - 1], c),
            // `{NAME}` then anything but `:`: the name is all but the last character.
            None => return Ok(meta.tid(&quoted[..quoted.len() - 1]).and_then(whole)),
        }
    } else {
        let Some(colon) = text.rfind(':') else {
            return Ok(meta.tid(text).and_then(whole));
        };
        if let Some(tid) = meta.tid(text) {
            if meta.tid(&text[..colon]).is_some() {
                return Err(format!(
                    "Range is ambiguous. Use {{{text}}} or {{{}}}{} instead",
                    &text[..colon],
                    &text[colon..]
                ));
            }
            return Ok(whole(tid));
        }
        (&text[..colon], colon)
    };
    let Some(tid) = meta.tid(name) else {
        return Ok(None);
    };
    let coords = &text.as_bytes()[colon + 1..];
    let unexpected = |rest: &[u8]| {
        format!(
            "Unexpected string \"{}\" after region",
            String::from_utf8_lossy(rest)
        )
    };
    let Decimal { value: b, used } = decimal(coords, true);
    let mut beg = b.wrapping_sub(1);
    let hyphen = &coords[used..];
    if beg < 0 {
        if beg != -1 && hyphen.first() == Some(&b'-') && !coords.is_empty() {
            return Err("Coordinates must be > 0".to_string());
        }
        if hyphen
            .first()
            .is_none_or(|c| c.is_ascii_digit() || *c == b',')
        {
            // `NAME:-100` is `NAME:1-100`.
            let end = if beg == -1 {
                MAX_END
            } else {
                beg.wrapping_add(1).wrapping_neg()
            };
            return Ok(Some(Target::Region(Region { tid, beg: 0, end })));
        } else if beg < -1 {
            return Err(unexpected(hyphen));
        }
    }
    let mut end = match hyphen.split_first() {
        None => MAX_END,
        Some((b'-', after)) => {
            let Decimal { value: e, used } = decimal(after, true);
            let rest = &after[used..];
            if rest.first().is_some_and(|&c| c != b',') {
                return Err(unexpected(rest));
            }
            e
        }
        Some(_) => return Err(unexpected(hyphen)),
    };
    if end == 0 {
        end = MAX_END;
    }
    if beg >= end {
        return Ok(None);
    }
    beg = beg.max(0);
    Ok(Some(Target::Region(Region { tid, beg, end })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Meta {
        Meta {
            format: 2,
            col_seq: 1,
            col_beg: 2,
            col_end: 0,
            meta_char: 35,
            skip: 0,
            names: vec![
                "chr1".into(),
                "HLA:1".into(),
                "HLA".into(),
                "HLA:2-3".into(),
            ],
        }
    }

    fn r(s: &str) -> Option<(usize, i64, i64)> {
        match parse(&meta(), s) {
            Ok(Some(Target::Region(r))) => Some((r.tid, r.beg, r.end)),
            _ => None,
        }
    }

    #[test]
    fn regions() {
        assert_eq!(r("chr1"), Some((0, 0, MAX_END)));
        assert_eq!(r("chr1:0"), Some((0, 0, MAX_END)));
        assert_eq!(r("chr1:0-0"), Some((0, 0, MAX_END)));
        assert_eq!(r("chr1:150"), Some((0, 149, MAX_END)));
        assert_eq!(r("chr1:1,000-20,100"), Some((0, 999, 20100)));
        assert_eq!(r("chr1:-150"), Some((0, 0, 150)));
        assert_eq!(r("chr1:-"), Some((0, 0, MAX_END)));
        assert_eq!(r("chr1:5-"), Some((0, 4, MAX_END)));
        assert_eq!(r("chr1:10-0"), Some((0, 9, MAX_END)));
        assert_eq!(r("chr1:1k-2.5k"), Some((0, 999, 2500)));
        assert_eq!(r("chr1:1e2-1.5e2"), Some((0, 99, 150)));
        assert_eq!(r("chr1:+100"), Some((0, 99, MAX_END)));
        assert_eq!(r("{chr1}:5-9"), Some((0, 4, 9)));
        assert_eq!(r("{HLA:1}"), Some((1, 0, MAX_END)));
        assert_eq!(r("{HLA}:2-3"), Some((2, 1, 3)));
        assert_eq!(r("HLA:1:5-9"), Some((1, 4, 9)));
        assert_eq!(r("chrX"), None);
        assert_eq!(r("chr1:500-100"), None);
        assert_eq!(parse(&meta(), "."), Ok(Some(Target::Start)));
        assert_eq!(parse(&meta(), "*"), Ok(Some(Target::Unplaced)));
    }

    #[test]
    fn complaints() {
        let e = |s| parse(&meta(), s).unwrap_err();
        assert_eq!(e("chr1:x-9"), "Unexpected string \"x-9\" after region");
        assert_eq!(e("chr1:5-x"), "Unexpected string \"x\" after region");
        assert_eq!(e("chr1:100 "), "Unexpected string \" \" after region");
        assert_eq!(e("chr1:-5-10"), "Coordinates must be > 0");
        assert_eq!(e("{chr1"), "Mismatching braces in \"{chr1\"");
        assert_eq!(
            e("HLA:2-3"),
            "Range is ambiguous. Use {HLA:2-3} or {HLA}:2-3 instead"
        );
    }

    #[test]
    fn decimals() {
        let read = |s: &[u8], commas| {
            let d = decimal(s, commas);
            (d.value, d.used)
        };
        assert_eq!(read(b"1,000x", true), (1000, 5));
        assert_eq!(read(b"1,000", false), (1, 1));
        assert_eq!(read(b"x", true), (0, 0));
        assert_eq!(read(b" -3", true), (-3, 3));
        assert_eq!(read(b"2M", true), (2_000_000, 2));
        assert_eq!(read(b"1.25k", true), (1250, 5));
        assert_eq!(read(b"1.9", true), (1, 3));
        // An exponent past C's int wraps as htslib's does: 4294967297 is 1 there.
        assert_eq!(read(b"1e4294967297", true), (10, 12));
        assert_eq!(read(b"1e-2147483648", true), (0, 13));
    }
}
