//! htslib's older region reader, `hts_parse_reg`: a name up to the last `:` (not looked up)
//! and a range clamped to C's `int`, as samtools' BED code reads the command line's regions
//! for `-M` and `--region-file`.

use crate::decimal::{parse_decimal, Decimal};
use crate::grammar::ParseFlags;
use crate::position::Position;

/// A region string as [`parse_reg`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedRegion {
    /// The length of the name (up to the last `:`).
    pub name_len: usize,
    /// The 0-based start.
    pub beg: i64,
    /// The end, exclusive, clamped to `int`.
    pub end: i64,
}

impl ParsedRegion {
    /// The end of a region given without one: C's `INT_MAX`, where `hts_parse_reg` clamps
    /// htslib's "to the end".
    pub const OPEN_END: i64 = i32::MAX as i64;
}

/// `hts_parse_reg`: the length of the name (up to the last `:`), and the 0-based half-open
/// range clamped to `int`; `None` when the text after the colon is not a valid range.
///
/// ```
/// use region::{parse_reg, ParsedRegion};
/// assert_eq!(
///     parse_reg(b"chr1:1,000-2k"),
///     Some(ParsedRegion { name_len: 4, beg: 999, end: 2000 })
/// );
/// assert_eq!(parse_reg(b"chr1:200-100"), None);
/// ```
pub fn parse_reg(s: &[u8]) -> Option<ParsedRegion> {
    let Some(colon) = s.iter().rposition(|&b| b == b':') else {
        return Some(ParsedRegion {
            name_len: s.len(),
            beg: 0,
            end: ParsedRegion::OPEN_END,
        });
    };
    // htslib's "to the end" (`HTS_POS_MAX`); an end given as this number means the same.
    let hts_pos_max = Position::MAX.get() as i64;
    let decimal = |s: &[u8]| {
        let Decimal { value, used } = parse_decimal(s, ParseFlags::THOUSANDS_SEP);
        (value, used)
    };
    let coords = &s[colon + 1..];
    let (b, used) = decimal(coords);
    let after = &coords[used..];
    // Wrapping as htslib's `- 1` does: i64::MIN becomes i64::MAX, past any end.
    let beg = b.wrapping_sub(1).max(0);
    let end = match after.first() {
        None => hts_pos_max,
        Some(b'-') => decimal(&after[1..]).0,
        Some(_) => return None,
    };
    if beg >= end || beg > ParsedRegion::OPEN_END {
        return None;
    }
    let end = if end == hts_pos_max {
        ParsedRegion::OPEN_END
    } else if end > ParsedRegion::OPEN_END {
        return None;
    } else {
        end
    };
    Some(ParsedRegion {
        name_len: colon,
        beg,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const INT_MAX: i64 = ParsedRegion::OPEN_END;

    fn reg(name_len: usize, beg: i64, end: i64) -> Option<ParsedRegion> {
        Some(ParsedRegion { name_len, beg, end })
    }

    #[test]
    fn region_strings() {
        assert_eq!(parse_reg(b"chr1"), reg(4, 0, INT_MAX));
        assert_eq!(parse_reg(b"chr1:100-200"), reg(4, 99, 200));
        assert_eq!(parse_reg(b"chr1:1,000-2k"), reg(4, 999, 2000));
        assert_eq!(parse_reg(b"chr1:1.5k"), reg(4, 1499, INT_MAX));
        assert_eq!(parse_reg(b"chr1:0-5"), reg(4, 0, 5));
        assert_eq!(parse_reg(b"chr1:200-100"), None);
        assert_eq!(parse_reg(b"chr1:x"), None);
        assert_eq!(parse_reg(b"HLA:1:2-3"), reg(5, 1, 3));
        assert_eq!(parse_reg(b"chr1:"), reg(4, 0, INT_MAX));
        // Hostile numbers wrap or vanish as in htslib, quickly and without a panic.
        assert_eq!(parse_reg(b"chr1:1e-2147483648-5"), reg(4, 0, 5));
        assert_eq!(parse_reg(b"chr1:1-1e999999999"), None);
        assert_eq!(parse_reg(b"chr1:-9223372036854775808-5"), None);
        // Only htslib's own "to the end" marker stands for the end; a larger end is too large.
        assert_eq!(parse_reg(b"chr1:5-9223372034707292159"), reg(4, 4, INT_MAX));
        assert_eq!(parse_reg(b"chr1:5-9223372036854775807"), None);
    }
}
