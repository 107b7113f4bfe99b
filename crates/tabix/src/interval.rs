//! A line's sequence name and interval, read as htslib 1.16's `tbx_parse1` reads them: the
//! begin column made 0-based (unless `TBX_UCSC`), the end from the end column (generic), the
//! CIGAR (SAM) or the REF length and `INFO/END` (VCF).

use index::tbi::{Meta, Preset};

/// Where a line lies: its sequence name and its 0-based half-open interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval<'a> {
    /// The sequence name column.
    pub name: &'a [u8],
    /// 0-based start.
    pub beg: i64,
    /// 0-based exclusive end.
    pub end: i64,
}

/// `strtoll(s, &end, 0)`'s value, `None` when no digit was read: leading blanks, a sign,
/// then a `0x` hex, `0` octal or decimal number, as tabix reads its columns (`010` is 8).
fn strtoll(s: &[u8]) -> Option<i64> {
    match region::strtol(s, 0) {
        (_, 0) => None,
        (v, _) => Some(v),
    }
}

/// The reference length of a SAM CIGAR as `tbx_parse1` counts it (M, D and N; at least 1).
fn cigar_len(cigar: &[u8]) -> i64 {
    let mut len: i64 = 0;
    let mut s = cigar;
    while !s.is_empty() {
        let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
        let x = strtoll(&s[..digits]).unwrap_or(0);
        let op = s.get(digits).map_or(0, u8::to_ascii_uppercase);
        if matches!(op, b'M' | b'D' | b'N') {
            len = len.saturating_add(x);
        }
        s = s.get(digits + 1..).unwrap_or(&[]);
    }
    len.max(1)
}

/// The value of `END=` in a VCF INFO column: at its start or after a `;`.
fn info_end(info: &[u8]) -> Option<&[u8]> {
    if let Some(v) = info.strip_prefix(b"END=") {
        return Some(v);
    }
    info.windows(5)
        .position(|w| w == b";END=")
        .map(|p| &info[p + 5..])
}

/// Reads `line`'s interval with `meta`'s columns; `None` where tabix fails to parse it (a
/// missing column, a begin or end that is not a number).
pub fn parse<'a>(meta: &Meta, line: &'a [u8]) -> Option<Interval<'a>> {
    let preset = meta.preset();
    let ucsc = meta.zero_based();
    let mut name = None;
    let (mut beg, mut end) = (-1i64, -1i64);
    for (i, col) in line.split(|&b| b == b'\t').enumerate() {
        let id = i64::try_from(i).ok()? + 1;
        if id == i64::from(meta.col_seq) {
            name = Some(col);
        } else if id == i64::from(meta.col_beg) {
            let v = strtoll(col)?;
            beg = if ucsc { v } else { v.saturating_sub(1) };
            end = if ucsc { v.saturating_add(1) } else { v };
            beg = beg.max(0);
            end = end.max(1);
        } else {
            match preset {
                Preset::Generic if id == i64::from(meta.col_end) => end = strtoll(col)?,
                Preset::Sam if id == 6 => end = beg.saturating_add(cigar_len(col)),
                Preset::Vcf if id == 4 && !col.is_empty() => {
                    end = beg.saturating_add(col.len() as i64)
                }
                Preset::Vcf if id == 8 => {
                    if let Some(v) = info_end(col).filter(|v| v.first() != Some(&b'.')) {
                        // An END before POS is ignored (htslib warns once).
                        match strtoll(v) {
                            Some(e) if e > beg => end = e,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let name = name?;
    (beg >= 0 && end >= 0).then_some(Interval { name, beg, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(format: i32, cols: (i32, i32, i32)) -> Meta {
        Meta {
            format,
            col_seq: cols.0,
            col_beg: cols.1,
            col_end: cols.2,
            meta_char: i32::from(b'#'),
            skip: 0,
            names: Vec::new(),
        }
    }

    #[test]
    fn vcf_end_and_ref_length() {
        let m = meta(2, (1, 2, 0));
        let iv = parse(&m, b"c\t300\t.\tN\t<DEL>\t.\t.\tSVTYPE=DEL;END=2000").unwrap();
        assert_eq!((iv.name, iv.beg, iv.end), (&b"c"[..], 299, 2000));
        let iv = parse(&m, b"c\t200\t.\tACGT\tA\t.\t.\t.").unwrap();
        assert_eq!((iv.beg, iv.end), (199, 203));
        let iv = parse(&m, b"c\t200\t.\tA\tT\t.\t.\tEND=5").unwrap();
        assert_eq!((iv.beg, iv.end), (199, 200));
        let iv = parse(&m, b"c\t200\t.\tA\tT\t.\t.\tXEND=900").unwrap();
        assert_eq!(iv.end, 200);
    }

    #[test]
    fn bed_sam_generic() {
        let bed = meta(0x10000, (1, 2, 3));
        let iv = parse(&bed, b"c\t0\t10\tx").unwrap();
        assert_eq!((iv.beg, iv.end), (0, 10));
        assert_eq!(parse(&bed, b"c\tx\t10"), None);
        assert_eq!(parse(&bed, b"track name=x"), None);
        let sam = meta(1, (3, 4, 0));
        let iv = parse(&sam, b"r\t0\tc\t10\t60\t5M2I3D4N\t*").unwrap();
        assert_eq!((iv.beg, iv.end), (9, 21));
        let iv = parse(&sam, b"r\t4\tc\t10\t0\t*\t*").unwrap();
        assert_eq!(iv.end, 10);
        assert_eq!(strtoll(b" -12x"), Some(-12));
        assert_eq!(strtoll(b"x"), None);
        assert_eq!(strtoll(b"010"), Some(8));
        assert_eq!(strtoll(b"0x1f\t"), Some(31));
        assert_eq!(strtoll(b"0"), Some(0));
    }
}
