//! Encoding descriptors (spec section 13): how a data series or tag is coded, with the
//! parameters each codec takes. Parsed here; decoding values from them comes with records.

use crate::num::Cursor;
use crate::Error;

/// Huffman alphabets longer than this are refused (samtools writes at most a few hundred
/// symbols; the bound keeps a hostile count from allocating).
const MAX_ALPHABET: usize = 1 << 16;

/// One encoding and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Encoding {
    /// No values (a data series that is never read).
    Null,
    /// Values are read from the external block with this content id.
    External {
        /// The external block's content id.
        block: i32,
    },
    /// Canonical Huffman code over `symbols` with `lengths` bits each, in order of
    /// (length, symbol).
    Huffman {
        /// The symbols.
        symbols: Vec<i32>,
        /// Each symbol's code length in bits.
        lengths: Vec<u32>,
    },
    /// A length coded by `len`, then that many bytes coded by `value`.
    ByteArrayLen {
        /// The encoding of the length.
        len: Box<Encoding>,
        /// The encoding of the bytes.
        value: Box<Encoding>,
    },
    /// Bytes from an external block up to a stop byte.
    ByteArrayStop {
        /// The byte that ends a value.
        stop: u8,
        /// The external block's content id.
        block: i32,
    },
    /// `bits` bits, less `offset`.
    Beta {
        /// Subtracted from the value read.
        offset: i32,
        /// The number of bits.
        bits: u32,
    },
    /// Subexponential code with parameter `k`.
    Subexp {
        /// Subtracted from the value read.
        offset: i32,
        /// The parameter.
        k: i32,
    },
    /// Elias gamma code.
    Gamma {
        /// Subtracted from the value read.
        offset: i32,
    },
}

/// How deep byte-array-length descriptors may nest. Writers nest once (a length and a value
/// coding); the bound keeps a descriptor of two bytes per level from recursing until the
/// stack runs out.
const NESTING: u32 = 4;

impl Encoding {
    /// Reads one descriptor: codec id, parameter length, parameters (which must fill it).
    pub fn read(c: &mut Cursor<'_>) -> Result<Self, Error> {
        Encoding::read_at(c, 0)
    }

    /// [`Encoding::read`] inside `depth` byte-array-length descriptors.
    fn read_at(c: &mut Cursor<'_>, depth: u32) -> Result<Self, Error> {
        let at = c.offset();
        let id = c.itf8("encoding id")?;
        let len = c.itf8("encoding parameter length")?;
        let len = usize::try_from(len)
            .map_err(|_| Error::at(at, format!("negative encoding parameter length {len}")))?;
        let params_at = c.offset();
        let mut p = Cursor::new(c.take(len, "encoding parameters")?, params_at);
        let e = match id {
            0 => Encoding::Null,
            1 => Encoding::External {
                block: p.itf8("external block id")?,
            },
            3 => {
                let symbols = list(&mut p, "Huffman symbol")?;
                let lengths = list(&mut p, "Huffman code length")?;
                if symbols.len() != lengths.len() {
                    return Err(Error::at(
                        at,
                        format!(
                            "Huffman code with {} symbols and {} lengths",
                            symbols.len(),
                            lengths.len()
                        ),
                    ));
                }
                let lengths = lengths
                    .into_iter()
                    .map(|l| u32::try_from(l).ok().filter(|&l| l <= 31))
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(|| Error::at(at, "Huffman code length outside 0..=31"))?;
                // Canonical order, so decoding walks the codes without sorting.
                let mut pairs: Vec<(u32, i32)> = lengths.into_iter().zip(symbols).collect();
                pairs.sort_unstable();
                let (lengths, symbols) = pairs.into_iter().unzip();
                Encoding::Huffman { symbols, lengths }
            }
            4 if depth >= NESTING => {
                return Err(Error::at(
                    at,
                    format!("byte array length encodings nested deeper than {NESTING}"),
                ))
            }
            4 => Encoding::ByteArrayLen {
                len: Box::new(Encoding::read_at(&mut p, depth + 1)?),
                value: Box::new(Encoding::read_at(&mut p, depth + 1)?),
            },
            5 => Encoding::ByteArrayStop {
                stop: p.u8("byte array stop byte")?,
                block: p.itf8("byte array stop block id")?,
            },
            6 => {
                let offset = p.itf8("beta offset")?;
                let bits = p.itf8("beta bit count")?;
                let bits = u32::try_from(bits)
                    .ok()
                    .filter(|&b| b <= 32)
                    .ok_or_else(|| Error::at(params_at, format!("beta with {bits} bits")))?;
                Encoding::Beta { offset, bits }
            }
            7 => Encoding::Subexp {
                offset: p.itf8("subexponential offset")?,
                k: p.itf8("subexponential k")?,
            },
            9 => Encoding::Gamma {
                offset: p.itf8("gamma offset")?,
            },
            2 | 8 => {
                return Err(Error::at(
                    at,
                    format!("encoding {id} (Golomb) is not part of CRAM 2.1-3.1 as written"),
                ))
            }
            _ => return Err(Error::at(at, format!("unknown encoding id {id}"))),
        };
        if p.remaining() != 0 {
            return Err(Error::at(
                p.offset(),
                format!("{} bytes left in the encoding's parameters", p.remaining()),
            ));
        }
        Ok(e)
    }
}

/// An ITF8 count followed by that many ITF8 values.
fn list(p: &mut Cursor<'_>, what: &str) -> Result<Vec<i32>, Error> {
    let at = p.offset();
    let n = p.itf8(what)?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n <= MAX_ALPHABET && n <= p.remaining())
        .ok_or_else(|| Error::at(at, format!("{what} count {n} exceeds the input")))?;
    (0..n).map(|_| p.itf8(what)).collect()
}

#[cfg(test)]
mod tests {
    use super::Encoding;
    use crate::num::Cursor;

    /// A byte-array-length descriptor whose length and value are both `inner` (parameters
    /// under 128 bytes, so each length is one ITF8 byte).
    fn wrap(inner: &[u8]) -> Vec<u8> {
        let params = [inner, inner].concat();
        [&[4, params.len() as u8][..], &params].concat()
    }

    #[test]
    fn byte_array_lengths_nest_only_a_few_deep() {
        // The null encoding (id 0, no parameters) at the bottom: five levels fit in 126 bytes.
        let mut d = vec![0, 0];
        for depth in 1..=5 {
            d = wrap(&d);
            match Encoding::read(&mut Cursor::new(&d, 0)) {
                Ok(_) => assert!(depth <= 4, "depth {depth} accepted"),
                Err(e) => {
                    assert_eq!(depth, 5, "depth {depth}: {e}");
                    assert!(e.to_string().contains("nested deeper than 4"), "{e}");
                }
            }
        }
    }
}
