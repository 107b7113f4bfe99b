//! Optional fields ("aux" tags): walking them with htslib's bounds rules and printing them the way
//! `sam_format1` does, including its two different float formats.
//!
//! Longer than most files: walking, checking and printing share the type rules of each field
//! code, kept side by side so they cannot drift apart.

use crate::sam::{push_i64, push_u32, push_u64};

/// Size of a value of this type code, as htslib's `aux_type2size`: the type letter itself for the
/// variable-length `Z`, `H` and `B`, and 0 for an unknown type.
fn type_size(t: u8) -> usize {
    match t {
        b'A' | b'c' | b'C' => 1,
        b's' | b'S' => 2,
        b'i' | b'I' | b'f' => 4,
        b'd' => 8,
        b'Z' | b'H' | b'B' => usize::from(t),
        _ => 0,
    }
}

/// Skips the value that starts with its type byte at `s` (htslib `skip_aux`); `None` when it is
/// corrupt.
fn skip_value(aux: &[u8], s: usize) -> Option<usize> {
    let end = aux.len();
    if s >= end {
        return Some(end);
    }
    let t = aux[s];
    let s = s + 1;
    match type_size(t) {
        0 => None,
        90 | 72 => {
            // Z or H: up to and including the NUL, or to the end when unterminated.
            match aux[s..].iter().position(|&b| b == 0) {
                Some(n) => Some(s + n + 1),
                None => Some(end),
            }
        }
        66 => {
            if end - s < 5 {
                return None;
            }
            let size = type_size(aux[s]) as u64;
            let n = u64::from(le_u32(&aux[s + 1..]));
            let s = s + 5;
            if size == 0 || ((end - s) as u64) < size * n {
                return None;
            }
            Some(s + (size * n) as usize)
        }
        size => {
            if end - s < size {
                None
            } else {
                Some(s + size)
            }
        }
    }
}

/// The end of the field (tag, type, value) that starts at `s`, as samtools' `skip_aux(s + 2)`
/// finds it; `None` when the field is corrupt.
pub fn field_end(aux: &[u8], s: usize) -> Option<usize> {
    skip_value(aux, (s + 2).min(aux.len()))
}

/// Finds a tag as htslib's `bam_aux_get` does: `Ok(Some(i))` with `i` the index of its type
/// byte, `Ok(None)` when absent, `Err(offset)` when the aux data is corrupt before or at it.
pub fn find(aux: &[u8], tag: [u8; 2]) -> Result<Option<usize>, usize> {
    let mut s = 0;
    while aux.len() - s >= 3 {
        let key = [aux[s], aux[s + 1]];
        let field = s;
        s += 2;
        let next = skip_value(aux, s);
        if key == tag {
            let t = aux[s];
            return match next {
                Some(e) if (t == b'Z' || t == b'H') && aux[e - 1] != 0 => Err(field),
                Some(_) => Ok(Some(s)),
                None => Err(field),
            };
        }
        match next {
            Some(e) => s = e,
            None => return Err(field),
        }
    }
    Ok(None)
}

/// One optional field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// The two-letter tag.
    pub tag: [u8; 2],
    /// The type letter (`A c C s S i I f d Z H B`).
    pub ty: u8,
    /// The value bytes after the type letter (for `Z`/`H` without the NUL; for `B` the subtype,
    /// count and elements).
    pub value: &'a [u8],
}

/// Iterates over the fields of raw aux data with the bounds rules of `sam_format1`; yields
/// `Err(offset)` once, at the first corrupt field.
pub fn fields(aux: &[u8]) -> Fields<'_> {
    Fields {
        aux,
        pos: 0,
        failed: false,
    }
}

/// Iterator returned by [`fields`].
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    aux: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, usize>;

    fn next(&mut self) -> Option<Self::Item> {
        // sam_format1 stops silently when fewer than 4 bytes are left.
        if self.failed || self.aux.len() - self.pos < 4 {
            return None;
        }
        let start = self.pos;
        match value_end(self.aux, start + 3) {
            Some((value_end, next)) => {
                self.pos = next;
                Some(Ok(Field {
                    tag: [self.aux[start], self.aux[start + 1]],
                    ty: self.aux[start + 2],
                    value: &self.aux[start + 3..value_end],
                }))
            }
            None => {
                self.failed = true;
                Some(Err(start))
            }
        }
    }
}

/// For the value whose type byte is at `t - 1` and data at `t`, checks it as
/// `sam_format_aux1` does and returns (end of value data, start of next field).
#[inline]
fn value_end(aux: &[u8], t: usize) -> Option<(usize, usize)> {
    let ty = aux[t - 1];
    let left = aux.len() - t;
    let fixed = |n: usize| {
        if left >= n {
            Some((t + n, t + n))
        } else {
            None
        }
    };
    match ty {
        // The caller guarantees one byte after the type.
        b'A' | b'c' | b'C' => Some((t + 1, t + 1)),
        b's' | b'S' => fixed(2),
        b'i' | b'I' | b'f' => fixed(4),
        b'd' => fixed(8),
        b'Z' | b'H' => {
            let n = aux[t..].iter().position(|&b| b == 0)?;
            Some((t + n, t + n + 1))
        }
        b'B' => {
            let sub = aux[t];
            let size = match sub {
                b'c' | b'C' => 1u64,
                b's' | b'S' => 2,
                b'i' | b'I' | b'f' => 4,
                _ => return None,
            };
            if left - 1 < 4 {
                return None;
            }
            let n = u64::from(le_u32(&aux[t + 1..]));
            let data = t + 5;
            if (((aux.len() - data) as u64) / size) < n {
                return None;
            }
            let end = data + (n * size) as usize;
            Some((end, end))
        }
        _ => None,
    }
}

/// Checks the fields as [`format`] would, without output: the offset of the first corrupt
/// field. Same walk as [`fields`], in a loop that builds nothing (it runs on every record that
/// SAM formatting threads are to print).
#[inline]
pub(crate) fn check(aux: &[u8]) -> Result<(), usize> {
    let mut start = 0;
    while aux.len() - start >= 4 {
        start = match aux[start + 2] {
            b'A' | b'c' | b'C' => start + 4,
            _ => match value_end(aux, start + 3) {
                Some((_, next)) => next,
                None => return Err(start),
            },
        };
    }
    Ok(())
}

/// Appends the aux fields as SAM text (each preceded by a tab), exactly as htslib 1.16's
/// `sam_format1`. On corrupt data returns the offset of the bad field; `out` then holds a
/// partial line that the caller discards.
///
/// This walks the fields itself rather than through [`Fields`] (same rules, one pass): it runs
/// for every record of a SAM conversion.
pub(crate) fn format(aux: &[u8], out: &mut Vec<u8>) -> Result<(), usize> {
    let mut start = 0;
    // sam_format1 stops silently when fewer than 4 bytes are left.
    while let Some(field) = aux.get(start..).filter(|f| f.len() >= 4) {
        let (k0, k1, ty) = (field[0], field[1], field[2]);
        let v = &field[3..];
        // The commonest types first, each written with one fixed-size prefix.
        let used = match ty {
            b'C' => {
                out.extend_from_slice(&[b'\t', k0, k1, b':', b'i', b':']);
                push_u32(out, u32::from(v[0]));
                1
            }
            b'Z' => {
                let Some(n) = v.iter().position(|&b| b == 0) else {
                    return Err(start);
                };
                out.extend_from_slice(&[b'\t', k0, k1, b':', b'Z', b':']);
                out.extend_from_slice(&v[..n]);
                n + 1
            }
            _ => {
                let Some((end, next)) = value_end(aux, start + 3) else {
                    return Err(start);
                };
                out.extend_from_slice(&[b'\t', k0, k1, b':']);
                format_value(ty, &aux[start + 3..end], out);
                next - (start + 3)
            }
        };
        start += 3 + used;
    }
    Ok(())
}

/// Appends `TYPE:VALUE` for a value that [`value_end`] has checked.
#[inline]
fn format_value(ty: u8, v: &[u8], out: &mut Vec<u8>) {
    match ty {
        b'C' => {
            out.extend_from_slice(b"i:");
            push_u32(out, u32::from(v[0]));
        }
        b'c' => {
            out.extend_from_slice(b"i:");
            push_i64(out, i64::from(v[0] as i8));
        }
        b'S' => {
            out.extend_from_slice(b"i:");
            push_u32(out, u32::from(u16::from_le_bytes([v[0], v[1]])));
        }
        b's' => {
            out.extend_from_slice(b"i:");
            push_i64(out, i64::from(i16::from_le_bytes([v[0], v[1]])));
        }
        b'i' => {
            out.extend_from_slice(b"i:");
            push_i64(out, i64::from(le_u32(v) as i32));
        }
        b'I' => {
            out.extend_from_slice(b"i:");
            push_u32(out, le_u32(v));
        }
        b'Z' | b'H' => {
            out.extend_from_slice(&[ty, b':']);
            out.extend_from_slice(v);
        }
        b'A' => out.extend_from_slice(&[b'A', b':', v[0]]),
        b'f' => {
            out.extend_from_slice(b"f:");
            push_printf_g(out, f64::from(f32::from_bits(le_u32(v))));
        }
        b'd' => {
            out.extend_from_slice(b"d:");
            let b = [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]];
            push_printf_g(out, f64::from_le_bytes(b));
        }
        _ => format_array(v, out),
    }
}

/// `B:` arrays: subtype, count, elements (validated by [`value_end`]).
fn format_array(v: &[u8], out: &mut Vec<u8>) {
    let sub = v[0];
    out.extend_from_slice(&[b'B', b':', sub]);
    let data = &v[5..];
    match sub {
        b'c' => data.iter().for_each(|&b| {
            out.push(b',');
            push_i64(out, i64::from(b as i8));
        }),
        b'C' => data.iter().for_each(|&b| {
            out.push(b',');
            push_u32(out, u32::from(b));
        }),
        b's' => data.chunks_exact(2).for_each(|b| {
            out.push(b',');
            push_i64(out, i64::from(i16::from_le_bytes([b[0], b[1]])));
        }),
        b'S' => data.chunks_exact(2).for_each(|b| {
            out.push(b',');
            push_u32(out, u32::from(u16::from_le_bytes([b[0], b[1]])));
        }),
        b'i' => data.chunks_exact(4).for_each(|b| {
            out.push(b',');
            push_i64(out, i64::from(le_u32(b) as i32));
        }),
        b'I' => data.chunks_exact(4).for_each(|b| {
            out.push(b',');
            push_u32(out, le_u32(b));
        }),
        _ => data.chunks_exact(4).for_each(|b| {
            out.push(b',');
            push_kputd(out, f64::from(f32::from_bits(le_u32(b))));
        }),
    }
}

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Appends `d` formatted as C's `printf("%g", d)` (glibc): 6 significant digits, exponent form
/// when the exponent is below -4 or at least 6, trailing zeros removed, `nan`/`-nan`/`inf`.
pub fn push_printf_g(out: &mut Vec<u8>, d: f64) {
    if d.is_nan() {
        out.extend_from_slice(if d.is_sign_negative() {
            b"-nan"
        } else {
            b"nan"
        });
        return;
    }
    if d.is_infinite() {
        out.extend_from_slice(if d < 0.0 { b"-inf" } else { b"inf" });
        return;
    }
    if d == 0.0 {
        out.extend_from_slice(if d.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    // Rust's precision formatting rounds the exact binary value correctly (ties to even), as
    // glibc does, so the exponent after rounding is the one %g decides with.
    let mut buf = StackBuf::default();
    let e_form = buf.format(format_args!("{d:.5e}"));
    let Some((mantissa, exp)) = e_form.split_once('e') else {
        out.extend_from_slice(e_form.as_bytes());
        return;
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        out.extend_from_slice(strip_zeros(mantissa).as_bytes());
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push(b'0');
        }
        push_u64(out, u64::from(a));
    } else {
        let mut buf = StackBuf::default();
        let fixed = buf.format(format_args!("{:.*}", (5 - exp) as usize, d));
        out.extend_from_slice(strip_zeros(fixed).as_bytes());
    }
}

/// A fixed buffer for formatting one float without a heap allocation; `%g` of a finite double
/// with these precisions needs at most 16 bytes.
struct StackBuf {
    bytes: [u8; 40],
    len: usize,
}

impl Default for StackBuf {
    fn default() -> StackBuf {
        StackBuf {
            bytes: [0; 40],
            len: 0,
        }
    }
}

impl StackBuf {
    fn format(&mut self, args: std::fmt::Arguments<'_>) -> &str {
        use std::fmt::Write;
        self.len = 0;
        if self.write_fmt(args).is_err() {
            self.len = 0;
        }
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Appends `d` as htslib's `kputd` does (used for `B:f` elements): its own fixed-point digits
/// for 0.0001 <= |d| <= 999999, `%g` otherwise. The fixed path truncates `d * 1e10` and adds a
/// rounding constant, so it can differ from `%g` in the last digit; that is reproduced here.
pub fn push_kputd(out: &mut Vec<u8>, d: f64) {
    if d == 0.0 {
        out.extend_from_slice(if d.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    let mut d = d;
    if d < 0.0 {
        out.push(b'-');
        d = -d;
    }
    if !(0.0001..=999999.0).contains(&d) {
        push_printf_g(out, d);
        return;
    }
    let round: u64 = if d < 0.001 {
        5
    } else if d < 0.01 {
        50
    } else if d < 0.1 {
        500
    } else if d < 1.0 {
        5_000
    } else if d < 10.0 {
        50_000
    } else if d < 100.0 {
        500_000
    } else if d < 1000.0 {
        5_000_000
    } else if d < 10000.0 {
        50_000_000
    } else if d < 100000.0 {
        500_000_000
    } else {
        5_000_000_000
    };
    let i = (d * 10_000_000_000.0) as u64 + round;
    let mut buf = StackBuf::default();
    let digits = buf.format(format_args!("{i}")).as_bytes();
    let p = digits.len();
    let mut s: Vec<u8> = Vec::with_capacity(20);
    if p <= 10 {
        s.extend_from_slice(b"0.");
        s.resize(2 + (10 - p), b'0');
        s.extend_from_slice(&digits[..p.min(6)]);
    } else {
        s.extend_from_slice(&digits[..p - 10]);
        s.push(b'.');
        s.extend_from_slice(&digits[p - 10..]);
        s.truncate(7);
        if s.last() == Some(&b'.') {
            s.pop();
        }
    }
    if s.contains(&b'.') {
        while s.last() == Some(&b'0') {
            s.pop();
        }
        if s.last() == Some(&b'.') {
            s.pop();
        }
    }
    out.extend_from_slice(&s);
}

#[cfg(test)]
mod tests;
