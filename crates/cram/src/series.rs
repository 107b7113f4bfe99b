//! Reading a data series' values (spec section 13): the slice's core block as a bit stream and
//! its external blocks as byte streams, each value taken as its encoding says.

use std::collections::BTreeMap;

use crate::encoding::Encoding;
use crate::num::Cursor;
use crate::Error;

/// The core block read most significant bit first.
#[derive(Debug, Clone)]
pub struct Bits<'a> {
    data: &'a [u8],
    bit: usize,
    base: u64,
}

impl<'a> Bits<'a> {
    /// A bit reader at the start of `data`, whose first byte is at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Bits { data, bit: 0, base }
    }

    fn one(&mut self) -> Result<u32, Error> {
        let byte = self.data.get(self.bit / 8).ok_or_else(|| {
            Error::at(
                self.base + self.data.len() as u64,
                "core block ends inside a value",
            )
        })?;
        let v = (byte >> (7 - self.bit % 8)) & 1;
        self.bit += 1;
        Ok(u32::from(v))
    }

    /// `n` bits (at most 32) as an unsigned number.
    pub fn read(&mut self, n: u32) -> Result<u32, Error> {
        let mut v = 0u64;
        for _ in 0..n {
            v = (v << 1) | u64::from(self.one()?);
        }
        Ok(v as u32)
    }
}

/// Content ids below this find their external block in a table (samtools numbers the data
/// series' blocks from 1 to about 50; tags' blocks have ids of 24 bits).
const SMALL_IDS: usize = 64;

/// The streams a slice's records are read from.
#[derive(Debug, Clone)]
pub struct Streams<'a> {
    /// The core bit stream.
    pub core: Bits<'a>,
    external: Vec<Cursor<'a>>,
    /// Index + 1 in `external` of each small content id; 0: none.
    small: [u32; SMALL_IDS],
    /// Other content ids and their index in `external`, sorted.
    large: Vec<(i32, usize)>,
}

impl<'a> Streams<'a> {
    /// The core block and the external blocks by content id (of two with one id, the last).
    pub fn new(core: Bits<'a>, external: impl IntoIterator<Item = (i32, Cursor<'a>)>) -> Self {
        let mut s = Streams {
            core,
            external: Vec::new(),
            small: [0; SMALL_IDS],
            large: Vec::new(),
        };
        let mut large = BTreeMap::new();
        for (id, c) in external {
            let index = s.external.len();
            s.external.push(c);
            match usize::try_from(id).ok().filter(|&i| i < SMALL_IDS) {
                Some(i) => s.small[i] = index as u32 + 1,
                None => {
                    large.insert(id, index);
                }
            }
        }
        s.large = large.into_iter().collect();
        s
    }

    /// Offset of the slice's core block, for errors about its records.
    pub fn core_offset(&self) -> u64 {
        self.core.base
    }

    /// The bytes of the core block and of every external block: what the slice's values are
    /// coded in.
    pub fn coded_len(&self) -> usize {
        self.external
            .iter()
            .map(|c| c.position() + c.remaining())
            .fold(self.core.data.len(), usize::saturating_add)
    }

    #[inline]
    fn external(&mut self, id: i32) -> Result<&mut Cursor<'a>, Error> {
        let index = match usize::try_from(id).ok().filter(|&i| i < SMALL_IDS) {
            Some(i) => (self.small[i] as usize).checked_sub(1),
            None => self
                .large
                .binary_search_by_key(&id, |&(k, _)| k)
                .ok()
                .map(|at| self.large[at].1),
        };
        let at = self.core.base;
        index
            .and_then(|i| self.external.get_mut(i))
            .ok_or_else(|| Error::at(at, format!("no external block {id} in the slice")))
    }
}

impl Encoding {
    /// One integer value.
    pub fn int(&self, s: &mut Streams<'_>) -> Result<i32, Error> {
        match self {
            Encoding::External { block } => s.external(*block)?.itf8("external value"),
            Encoding::Huffman { symbols, lengths } => huffman(symbols, lengths, &mut s.core),
            Encoding::Beta { offset, bits } => {
                Ok((s.core.read(*bits)? as i32).wrapping_sub(*offset))
            }
            Encoding::Gamma { offset } => {
                let mut n = 0;
                while s.core.one()? == 0 {
                    n += 1;
                    if n > 31 {
                        return Err(Error::at(s.core.base, "gamma code longer than 32 bits"));
                    }
                }
                let v = (1u64 << n) | u64::from(s.core.read(n)?);
                Ok((v as i32).wrapping_sub(*offset))
            }
            Encoding::Subexp { offset, k } => {
                let mut i = 0i32;
                while s.core.one()? == 1 {
                    i += 1;
                    if i > 32 {
                        return Err(Error::at(s.core.base, "subexponential prefix too long"));
                    }
                }
                // Widened: `k` is the file's own ITF8, and `i + k - 1` may pass i32::MAX.
                let n = if i == 0 {
                    i64::from(*k)
                } else {
                    i64::from(i) + i64::from(*k) - 1
                };
                let n = u32::try_from(n)
                    .ok()
                    .filter(|&n| n <= 31)
                    .ok_or_else(|| Error::at(s.core.base, format!("subexponential width {n}")))?;
                let mut v = s.core.read(n)?;
                if i > 0 {
                    v += 1 << n;
                }
                Ok((v as i32).wrapping_sub(*offset))
            }
            other => Err(Error::at(
                s.core.base,
                format!("{} cannot code an integer", other.name()),
            )),
        }
    }

    /// One byte value.
    pub fn byte(&self, s: &mut Streams<'_>) -> Result<u8, Error> {
        match self {
            Encoding::External { block } => s.external(*block)?.u8("external byte"),
            _ => Ok(self.int(s)? as u8),
        }
    }

    /// `n` byte values at once (qualities, an unmapped read's bases), appended to `out` (a
    /// slice's records share one buffer): one slice of an external block, else value by value.
    /// `n` is bounded by the caller.
    pub fn byte_run_into(
        &self,
        s: &mut Streams<'_>,
        n: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        match self {
            // No bytes are read from no block: htslib's external decoder asks for the block
            // only when it wants bytes from it (a read with no bases, `SEQ *`, may have no
            // quality block at all).
            Encoding::External { .. } if n == 0 => {}
            Encoding::External { block } => {
                out.extend_from_slice(s.external(*block)?.take(n, "external bytes")?);
            }
            _ => {
                for _ in 0..n {
                    out.push(self.byte(s)?);
                }
            }
        }
        Ok(())
    }

    /// A byte array value (read names, tag values, bases).
    pub fn bytes(&self, s: &mut Streams<'_>) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        self.bytes_into(s, &mut out)?;
        Ok(out)
    }

    /// [`Encoding::bytes`] appended to `out`.
    pub fn bytes_into(&self, s: &mut Streams<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        match self {
            Encoding::ByteArrayLen { len, value } => {
                let at = s.core.base;
                let n = len.int(s)?;
                let n = usize::try_from(n)
                    .map_err(|_| Error::at(at, format!("byte array of length {n}")))?;
                if let Encoding::External { block } = **value {
                    if n == 0 {
                        return Ok(());
                    }
                    out.extend_from_slice(s.external(block)?.take(n, "byte array")?);
                    return Ok(());
                }
                // Each coded byte takes at least one bit of the core block.
                if n > s.core.data.len() * 8 {
                    return Err(Error::at(at, format!("byte array of length {n}")));
                }
                out.reserve(n);
                for _ in 0..n {
                    out.push(value.byte(s)?);
                }
                Ok(())
            }
            Encoding::ByteArrayStop { stop, block } => {
                let c = s.external(*block)?;
                out.extend_from_slice(c.take_until(*stop, "byte array before its stop byte")?);
                Ok(())
            }
            other => Err(Error::at(
                s.core.base,
                format!("{} cannot code a byte array", other.name()),
            )),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Encoding::Null => "the null encoding",
            Encoding::External { .. } => "external",
            Encoding::Huffman { .. } => "Huffman",
            Encoding::ByteArrayLen { .. } => "byte array length",
            Encoding::ByteArrayStop { .. } => "byte array stop",
            Encoding::Beta { .. } => "beta",
            Encoding::Subexp { .. } => "subexponential",
            Encoding::Gamma { .. } => "gamma",
        }
    }
}

/// Canonical Huffman: in order of (length, symbol), as [`Encoding::read`] leaves them, each
/// code is the previous plus one, shifted left as the length grows. One symbol takes no bits.
fn huffman(symbols: &[i32], lengths: &[u32], core: &mut Bits<'_>) -> Result<i32, Error> {
    if symbols.len() == 1 {
        return Ok(symbols[0]);
    }
    let (mut code, mut len, mut read, mut have) = (0u64, 0u32, 0u32, 0u64);
    for i in 0..symbols.len() {
        let l = lengths[i];
        code <<= l - len;
        len = l;
        while read < len {
            have = (have << 1) | u64::from(core.one()?);
            read += 1;
        }
        if have == code {
            return Ok(symbols[i]);
        }
        code += 1;
    }
    Err(Error::at(
        core.base,
        "no Huffman code matches the core bits",
    ))
}

#[cfg(test)]
mod tests {
    use super::{Bits, Streams};
    use crate::encoding::Encoding;
    use crate::num::Cursor;

    fn streams<'a>(core: &'a [u8], ext: &'a [u8]) -> Streams<'a> {
        Streams::new(Bits::new(core, 0), [(7, Cursor::new(ext, 100))])
    }

    #[test]
    fn each_encoding_reads_its_values() {
        // Huffman over 1 (0), 2 (10), 3 (11): bits 0 10 11 0.
        let h = Encoding::Huffman {
            symbols: vec![1, 2, 3],
            lengths: vec![1, 2, 2],
        };
        let mut s = streams(&[0b0101_1000], &[]);
        let got: Vec<i32> = (0..4).map(|_| h.int(&mut s).unwrap()).collect();
        assert_eq!(got, [1, 2, 3, 1]);
        // Beta of 3 bits less 1, then gamma (1 -> 1, 010 -> 2, 011 -> 3) less 0.
        let mut s = streams(&[0b1011_0100, 0b1100_0000], &[]);
        let beta = Encoding::Beta { offset: 1, bits: 3 };
        assert_eq!(beta.int(&mut s).unwrap(), 4);
        let gamma = Encoding::Gamma { offset: 0 };
        let got: Vec<i32> = (0..3).map(|_| gamma.int(&mut s).unwrap()).collect();
        assert_eq!(got, [1, 2, 3]);
        // External ITF8 and bytes; a stop-byte array.
        let mut s = streams(&[], &[0x80, 0xff, b'a', b'b', b'\t', b'c']);
        let ext = Encoding::External { block: 7 };
        assert_eq!(ext.int(&mut s).unwrap(), 255);
        let stop = Encoding::ByteArrayStop {
            stop: b'\t',
            block: 7,
        };
        assert_eq!(stop.bytes(&mut s).unwrap(), b"ab");
        assert_eq!(ext.byte(&mut s).unwrap(), b'c');
        assert!(ext.byte(&mut s).is_err(), "past the block's end");
        assert!(Encoding::External { block: 8 }.int(&mut s).is_err());
    }

    #[test]
    fn subexponential_as_htslib_reads_it() {
        // k = 2: prefix 0 then 2 bits (values 0..3); prefix 10 then 2 bits plus 4: 0|11, 10|01.
        let se = Encoding::Subexp { offset: 0, k: 2 };
        let mut s = streams(&[0b0111_0010, 0b0000_0000], &[]);
        assert_eq!(se.int(&mut s).unwrap(), 3);
        assert_eq!(se.int(&mut s).unwrap(), 5);
        // A hostile k: prefix 1 then 0 would make width i + k - 1 overflow i32.
        let se = Encoding::Subexp {
            offset: 0,
            k: i32::MAX,
        };
        let mut s = streams(&[0b1000_0000], &[]);
        assert!(se.int(&mut s).is_err());
    }
}
