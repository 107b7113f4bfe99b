//! Character-level scanning for filter expressions: whitespace, numbers and string literals, each
//! read exactly as htslib 1.16's `hts_expr.c` reads them (its grammar has no separate tokeniser:
//! every rule looks at the characters in front of it).

/// htslib's `ws()`: only spaces and tabs separate terms.
pub(crate) fn ws(s: &[u8], mut i: usize) -> usize {
    while matches!(s.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// C's `isspace` in the C locale.
pub(crate) fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// An optional `+` or `-` at `*i` (skipped): true for `-`.
pub(crate) fn sign(s: &[u8], i: &mut usize) -> bool {
    match s.get(*i) {
        Some(b'-') => {
            *i += 1;
            true
        }
        Some(b'+') => {
            *i += 1;
            false
        }
        _ => false,
    }
}

/// A number as `hts_str2dbl` (and the `strtod` it falls back on) reads it at `i`: leading C
/// whitespace, an optional sign, then a decimal or hexadecimal float, `inf`/`infinity` or
/// `nan`/`nan(chars)`, case-insensitive. Returns the value and the index after it, or `None`
/// when no number starts there.
pub(crate) fn number(s: &[u8], i: usize) -> Option<(f64, usize)> {
    let mut p = i;
    while s.get(p).copied().is_some_and(is_c_space) {
        p += 1;
    }
    let neg = sign(s, &mut p);
    let (v, end) = if s.get(p) == Some(&b'0') && matches!(s.get(p + 1), Some(b'x' | b'X')) {
        hex(s, p + 2).unwrap_or((0.0, p + 1))
    } else if let Some(r) = decimal(s, p) {
        r
    } else {
        special(s, p)?
    };
    Some((if neg { -v } else { v }, end))
}

fn digits(s: &[u8], mut p: usize) -> usize {
    while s.get(p).is_some_and(u8::is_ascii_digit) {
        p += 1;
    }
    p
}

/// `[0-9]*(\.[0-9]*)?` with at least one digit, then an exponent only if it has digits.
fn decimal(s: &[u8], p: usize) -> Option<(f64, usize)> {
    let int_end = digits(s, p);
    let mut end = int_end;
    let mut n_digits = int_end - p;
    if s.get(end) == Some(&b'.') {
        let frac_end = digits(s, end + 1);
        n_digits += frac_end - (end + 1);
        end = frac_end;
    }
    if n_digits == 0 {
        return None;
    }
    if matches!(s.get(end), Some(b'e' | b'E')) {
        let mut q = end + 1;
        if matches!(s.get(q), Some(b'+' | b'-')) {
            q += 1;
        }
        let exp_end = digits(s, q);
        if exp_end > q {
            end = exp_end;
        }
    }
    // ASCII digits, '.', 'e' and a sign: Rust's parser accepts all of these forms ("1.", ".5")
    // and rounds correctly, as glibc's strtod does.
    let v = std::str::from_utf8(&s[p..end]).ok()?.parse::<f64>().ok()?;
    Some((v, end))
}

/// Hexadecimal float after `0x`: hex digits, optional fraction, optional `p` exponent.
fn hex(s: &[u8], p: usize) -> Option<(f64, usize)> {
    let mut mant: f64 = 0.0;
    let mut scale: i32 = 0;
    let mut q = p;
    let mut any = false;
    while let Some(d) = s.get(q).and_then(|&b| (b as char).to_digit(16)) {
        mant = mant * 16.0 + f64::from(d);
        any = true;
        q += 1;
    }
    if s.get(q) == Some(&b'.') {
        let mut r = q + 1;
        while let Some(d) = s.get(r).and_then(|&b| (b as char).to_digit(16)) {
            mant = mant * 16.0 + f64::from(d);
            scale -= 4;
            any = true;
            r += 1;
        }
        if any {
            q = r;
        }
    }
    if !any {
        return None;
    }
    if matches!(s.get(q), Some(b'p' | b'P')) {
        let mut r = q + 1;
        let neg = sign(s, &mut r);
        let e_end = digits(s, r);
        if e_end > r {
            let e: i32 = std::str::from_utf8(&s[r..e_end])
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(i32::MAX / 2);
            scale = scale.saturating_add(if neg { -e } else { e });
            q = e_end;
        }
    }
    Some((mant * 2f64.powi(scale), q))
}

/// `inf`, `infinity`, `nan` and `nan(...)`, any case.
fn special(s: &[u8], p: usize) -> Option<(f64, usize)> {
    let starts =
        |word: &[u8]| s.len() >= p + word.len() && s[p..p + word.len()].eq_ignore_ascii_case(word);
    if starts(b"infinity") {
        return Some((f64::INFINITY, p + 8));
    }
    if starts(b"inf") {
        return Some((f64::INFINITY, p + 3));
    }
    if starts(b"nan") {
        let mut end = p + 3;
        if s.get(end) == Some(&b'(') {
            let mut q = end + 1;
            while s
                .get(q)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
            {
                q += 1;
            }
            if s.get(q) == Some(&b')') {
                end = q + 1;
            }
        }
        return Some((f64::NAN, end));
    }
    None
}

/// A string literal starting with the `"` at `i`: its value and the index after the closing
/// quote. `\"`, `\\`, `\t`, `\n` and `\r` are escapes; any other backslash is kept with the
/// character after it (so regular expressions keep theirs). `Err(i)` when it is unterminated.
pub(crate) fn string(s: &[u8], i: usize) -> Result<(Vec<u8>, usize), usize> {
    let mut out = Vec::new();
    let mut e = i + 1;
    while e < s.len() && s[e] != b'"' && s[e] != 0 {
        if s[e] == b'\\' && e + 1 < s.len() && s[e + 1] != 0 {
            match s[e + 1] {
                b'"' => out.push(b'"'),
                b'\\' => out.push(b'\\'),
                b't' => out.push(b'\t'),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                c => {
                    out.push(b'\\');
                    out.push(c);
                }
            }
            e += 2;
        } else {
            out.push(s[e]);
            e += 1;
        }
    }
    if s.get(e) == Some(&b'"') {
        Ok((out, e + 1))
    } else {
        Err(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> Option<(f64, usize)> {
        number(s.as_bytes(), 0)
    }

    #[test]
    fn decimal_numbers() {
        assert_eq!(num("10"), Some((10.0, 2)));
        assert_eq!(num("1.5x"), Some((1.5, 3)));
        assert_eq!(num("1."), Some((1.0, 2)));
        assert_eq!(num(".5"), Some((0.5, 2)));
        assert_eq!(num("2e3"), Some((2000.0, 3)));
        assert_eq!(num("2E-1"), Some((0.2, 4)));
        assert_eq!(num("1e"), Some((1.0, 1)));
        assert_eq!(num("1e+"), Some((1.0, 1)));
        assert_eq!(num("-5"), Some((-5.0, 2)));
        assert_eq!(num(" \n7"), Some((7.0, 3)));
        assert_eq!(num("007"), Some((7.0, 3)));
        assert_eq!(num("0.1"), Some((0.1, 3)));
        assert_eq!(num("."), None);
        assert_eq!(num("abc"), None);
        assert_eq!(num(""), None);
        assert_eq!(num("- 5"), None);
        assert_eq!(num("1.5.5"), Some((1.5, 3)));
    }

    #[test]
    fn hex_and_special() {
        assert_eq!(num("0x1F"), Some((31.0, 4)));
        assert_eq!(num("0x"), Some((0.0, 1)));
        assert_eq!(num("0x1p4"), Some((16.0, 5)));
        assert_eq!(num("0x.8"), Some((0.5, 4)));
        assert_eq!(num("inf"), Some((f64::INFINITY, 3)));
        assert_eq!(num("Infinity"), Some((f64::INFINITY, 8)));
        assert_eq!(num("infinite"), Some((f64::INFINITY, 3)));
        let (v, end) = num("nan(12)").unwrap();
        assert!(v.is_nan());
        assert_eq!(end, 7);
        assert_eq!(num("ncigar"), None);
    }

    #[test]
    fn strings() {
        let s = |t: &str| string(t.as_bytes(), 0);
        assert_eq!(s(r#""abc" x"#), Ok((b"abc".to_vec(), 5)));
        assert_eq!(s(r#""a\"b""#), Ok((b"a\"b".to_vec(), 6)));
        assert_eq!(s(r#""a\tb\\""#), Ok((b"a\tb\\".to_vec(), 8)));
        assert_eq!(s(r#""\.x""#), Ok((b"\\.x".to_vec(), 5)));
        assert_eq!(s(r#""abc"#), Err(0));
        assert_eq!(s(r#""ab\""#), Err(0));
        assert_eq!(ws(b"  \tx", 0), 3);
        assert_eq!(ws(b"\nx", 0), 0);
    }
}
