//! htslib's `hts_parse_decimal`: the numbers of region strings and region files, with `k`/`M`/`G`
//! and exponent suffixes, a decimal point, and (with [`ParseFlags::THOUSANDS_SEP`]) `,`
//! separators skipped.

use crate::grammar::ParseFlags;

/// A number read by [`parse_decimal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    /// The value.
    pub value: i64,
    /// How many bytes of the text it used (0: no digits; htslib then points back at the start).
    pub used: usize,
}

/// `hts_parse_decimal`: leading blanks and a sign, digits (with `,` skipped under
/// [`ParseFlags::THOUSANDS_SEP`]), a fraction, then an exponent or a `k`, `m` or `g` suffix;
/// the fraction left after the exponent is dropped. Overflow wraps as htslib's arithmetic does
/// on the machines it runs on (its exponent and count of decimals are C `int`s), and never
/// panics.
///
/// ```
/// use region::{parse_decimal, Decimal, ParseFlags};
/// assert_eq!(parse_decimal(b"1,000x", ParseFlags::THOUSANDS_SEP), Decimal { value: 1000, used: 5 });
/// assert_eq!(parse_decimal(b"1,000", ParseFlags::NONE), Decimal { value: 1, used: 1 });
/// assert_eq!(parse_decimal(b"2.5M", ParseFlags::NONE).value, 2_500_000);
/// ```
pub fn parse_decimal(s: &[u8], flags: ParseFlags) -> Decimal {
    let commas = flags.contains(ParseFlags::THOUSANDS_SEP);
    let mut i = s.iter().take_while(|&&b| is_space(b)).count();
    let neg = sign(s, &mut i);
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
            let eneg = sign(s, &mut i);
            while let Some(&b) = s.get(i).filter(|b| b.is_ascii_digit()) {
                e = e.wrapping_mul(10).wrapping_add(i32::from(b - b'0'));
                i += 1;
            }
            // A 2^31 exponent wraps to i32::MIN, which plain negation would overflow.
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
    // An absurd exponent only wraps or empties the value: 64 steps up leave any i64 a multiple
    // of 2^64 (0), 64 steps down leave 0, so the loops are bounded as the result is.
    for _ in 0..e.clamp(0, 64) {
        n = n.wrapping_mul(10);
    }
    for _ in 0..e.clamp(-64, 0).unsigned_abs() {
        n /= 10;
    }
    Decimal {
        value: if neg { n.wrapping_neg() } else { n },
        used: if digits > 0 { i } else { 0 },
    }
}

/// An optional `+` or `-` at `s[*i]`, stepped over: true for `-`.
fn sign(s: &[u8], i: &mut usize) -> bool {
    match s.get(*i) {
        Some(&c @ (b'-' | b'+')) => {
            *i += 1;
            c == b'-'
        }
        _ => false,
    }
}

/// C's `strtol`/`strtoll` for bases 10 and 0 (0: `0x` hex, `0` octal, else decimal), as
/// htslib and its programs read plain numbers (samtools' options, tabix's columns, a header's
/// `LN`): leading blanks and a sign, then digits. The value and how many bytes were used (0:
/// no number, and the value 0). The value is accumulated with its sign, so it saturates at
/// `i64::MIN` or `i64::MAX` as C's does.
///
/// ```
/// assert_eq!(region::strtol(b" -12x", 10), (-12, 4));
/// assert_eq!(region::strtol(b"0x1f", 0), (31, 4));
/// assert_eq!(region::strtol(b"010", 0), (8, 3));
/// assert_eq!(region::strtol(b"x", 10), (0, 0));
/// ```
pub fn strtol(b: &[u8], base: u32) -> (i64, usize) {
    let mut i = b.iter().take_while(|&&c| is_space(c)).count();
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
    let mut v: i64 = 0;
    while let Some(d) = b.get(i).and_then(|c| char::from(*c).to_digit(radix)) {
        let d = if neg { -i64::from(d) } else { i64::from(d) };
        v = v.saturating_mul(i64::from(radix)).saturating_add(d);
        i += 1;
    }
    if i == start {
        return (0, 0);
    }
    (v, i)
}

/// C's `isspace` in the C locale.
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &[u8], flags: ParseFlags) -> (i64, usize) {
        let d = parse_decimal(s, flags);
        (d.value, d.used)
    }

    fn sep(s: &[u8]) -> (i64, usize) {
        read(s, ParseFlags::THOUSANDS_SEP)
    }

    #[test]
    fn separators_and_suffixes() {
        assert_eq!(sep(b"1,000"), (1000, 5));
        assert_eq!(sep(b"1,000x"), (1000, 5));
        assert_eq!(read(b"1,000", ParseFlags::NONE), (1, 1));
        assert_eq!(sep(b"  12x"), (12, 4));
        assert_eq!(sep(b"-7"), (-7, 2));
        assert_eq!(sep(b" -3"), (-3, 3));
        assert_eq!(sep(b"x"), (0, 0));
        assert_eq!(sep(b""), (0, 0));
        assert_eq!(sep(b"2M"), (2_000_000, 2));
        assert_eq!(sep(b"2.5M"), (2_500_000, 4));
        assert_eq!(sep(b"1.25k"), (1250, 5));
        assert_eq!(sep(b"1.25"), (1, 4));
        assert_eq!(sep(b"1.9"), (1, 3));
    }

    #[test]
    fn exponents_wrap_as_c_ints() {
        assert_eq!(sep(b"1e999999999"), (0, 11));
        assert_eq!(sep(b"5e-999999999"), (0, 12));
        // The fuzzer's find: the exponent's digits wrap to i32::MIN before the sign applies.
        assert_eq!(sep(b"1e-2147483648"), (0, 13));
        // Other exponents past i32 wrap as C's int does (this one to 938855437, then negated).
        assert_eq!(sep(b"1e-28888888888333"), (0, 17));
        // 4294967297 is 1 in a C int.
        assert_eq!(sep(b"1e4294967297"), (10, 12));
    }
}
