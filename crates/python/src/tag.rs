//! The values of optional fields (tags) as typed values, for `get_tag` and Arrow's tag
//! columns: the field walk and its bounds checks are `bam::aux`'s; this reads the value bytes
//! it hands out.

use bam::aux::Field;

/// One tag's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `A`: one printable character.
    Char(u8),
    /// `Z`: text.
    Text(&'a [u8]),
    /// `H`: hex digits.
    Hex(&'a [u8]),
    /// `c C s S i I`: an integer, with its stored type letter.
    Int(i64, u8),
    /// `f`.
    Float(f32),
    /// `d` (htslib reads it; not in the SAM specification).
    Double(f64),
    /// `B`: an array; its subtype letter (`c C s S i I f`) and its elements.
    Array(u8, Elements),
}

/// The elements of a `B` array.
#[derive(Debug, Clone, PartialEq)]
pub enum Elements {
    /// Integer subtypes.
    Ints(Vec<i64>),
    /// `f`.
    Floats(Vec<f32>),
}

impl<'a> Value<'a> {
    /// The value of `field`, or `None` for a type letter htslib does not know (the field walk
    /// has already refused those).
    pub fn of(field: &Field<'a>) -> Option<Value<'a>> {
        let v = field.value;
        let le = |n: usize| -> Option<[u8; 8]> {
            let mut b = [0u8; 8];
            b[..n].copy_from_slice(v.get(..n)?);
            Some(b)
        };
        Some(match field.ty {
            b'A' => Value::Char(*v.first()?),
            b'Z' => Value::Text(v),
            b'H' => Value::Hex(v),
            b'c' => Value::Int(i64::from(*v.first()? as i8), b'c'),
            b'C' => Value::Int(i64::from(*v.first()?), b'C'),
            b's' => Value::Int(
                i64::from(i16::from_le_bytes([*v.first()?, *v.get(1)?])),
                b's',
            ),
            b'S' => Value::Int(
                i64::from(u16::from_le_bytes([*v.first()?, *v.get(1)?])),
                b'S',
            ),
            b'i' => Value::Int(i64::from(i32::from_le_bytes(word(v)?)), b'i'),
            b'I' => Value::Int(i64::from(u32::from_le_bytes(word(v)?)), b'I'),
            b'f' => Value::Float(f32::from_le_bytes(word(v)?)),
            b'd' => Value::Double(f64::from_le_bytes(le(8)?)),
            b'B' => {
                let sub = *v.first()?;
                let n = u32::from_le_bytes(word(v.get(1..)?)?) as usize;
                let data = v.get(5..)?;
                let elements = match sub {
                    b'f' => Elements::Floats(
                        data.chunks_exact(4)
                            .take(n)
                            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                            .collect(),
                    ),
                    _ => Elements::Ints(ints(sub, data, n)?),
                };
                Value::Array(sub, elements)
            }
            _ => return None,
        })
    }

    /// The value as `samtools view` prints it after `TAG:TYPE:` (integers as `i`, floats as
    /// `%g`, arrays as `SUBTYPE,e1,e2`).
    pub fn write_text(&self, out: &mut Vec<u8>) {
        match self {
            Value::Char(c) => out.push(*c),
            Value::Text(t) | Value::Hex(t) => out.extend_from_slice(t),
            Value::Int(i, _) => bam::sam::push_i64(out, *i),
            Value::Float(f) => bam::aux::push_printf_g(out, f64::from(*f)),
            Value::Double(d) => bam::aux::push_printf_g(out, *d),
            Value::Array(sub, elements) => {
                out.push(*sub);
                match elements {
                    Elements::Ints(v) => v.iter().for_each(|i| {
                        out.push(b',');
                        bam::sam::push_i64(out, *i);
                    }),
                    Elements::Floats(v) => v.iter().for_each(|f| {
                        out.push(b',');
                        bam::aux::push_printf_g(out, f64::from(*f));
                    }),
                }
            }
        }
    }
}

fn word(v: &[u8]) -> Option<[u8; 4]> {
    Some([*v.first()?, *v.get(1)?, *v.get(2)?, *v.get(3)?])
}

/// `n` integers of subtype `sub` from `data`.
fn ints(sub: u8, data: &[u8], n: usize) -> Option<Vec<i64>> {
    let size = match sub {
        b'c' | b'C' => 1,
        b's' | b'S' => 2,
        b'i' | b'I' => 4,
        _ => return None,
    };
    let chunks = data.chunks_exact(size).take(n);
    Some(match sub {
        b'c' => chunks.map(|c| i64::from(c[0] as i8)).collect(),
        b'C' => chunks.map(|c| i64::from(c[0])).collect(),
        b's' => chunks
            .map(|c| i64::from(i16::from_le_bytes([c[0], c[1]])))
            .collect(),
        b'S' => chunks
            .map(|c| i64::from(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
        b'i' => chunks
            .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        _ => chunks
            .map(|c| i64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
    })
}

/// Finds `tag` among the fields of `aux`: its value, `Ok(None)` when absent, `Err(offset)` at
/// the first corrupt field before it (as `bam_aux_get` refuses it).
pub fn find<'a>(aux: &'a [u8], tag: [u8; 2]) -> Result<Option<Value<'a>>, usize> {
    for field in bam::aux::fields(aux) {
        let field = field?;
        if field.tag == tag {
            return Ok(Value::of(&field));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_every_type() {
        let mut aux = Vec::new();
        aux.extend_from_slice(b"XAAq");
        aux.extend_from_slice(b"XZZhello\0");
        aux.extend_from_slice(b"Xcc\xff");
        aux.extend_from_slice(b"XSS\x01\x02");
        aux.extend_from_slice(b"XIi");
        aux.extend_from_slice(&(-70000i32).to_le_bytes());
        aux.extend_from_slice(b"XFf");
        aux.extend_from_slice(&1.5f32.to_le_bytes());
        aux.extend_from_slice(b"XBBs");
        aux.extend_from_slice(&2u32.to_le_bytes());
        aux.extend_from_slice(&(-3i16).to_le_bytes());
        aux.extend_from_slice(&7i16.to_le_bytes());
        assert_eq!(find(&aux, *b"XA"), Ok(Some(Value::Char(b'q'))));
        assert_eq!(find(&aux, *b"XZ"), Ok(Some(Value::Text(b"hello"))));
        assert_eq!(find(&aux, *b"Xc"), Ok(Some(Value::Int(-1, b'c'))));
        assert_eq!(find(&aux, *b"XS"), Ok(Some(Value::Int(0x0201, b'S'))));
        assert_eq!(find(&aux, *b"XI"), Ok(Some(Value::Int(-70000, b'i'))));
        assert_eq!(find(&aux, *b"XF"), Ok(Some(Value::Float(1.5))));
        let array = Value::Array(b's', Elements::Ints(vec![-3, 7]));
        assert_eq!(find(&aux, *b"XB"), Ok(Some(array.clone())));
        assert_eq!(find(&aux, *b"NM"), Ok(None));
        let mut text = Vec::new();
        array.write_text(&mut text);
        assert_eq!(text, b"s,-3,7");
    }

    #[test]
    fn a_corrupt_field_is_an_error_not_a_value() {
        assert_eq!(find(b"XBBs\xff\xff\xff\x7f", *b"NM"), Err(0));
    }
}
