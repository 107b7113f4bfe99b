//! CRAM's variable-length integers (spec section 2.3): ITF8 (up to 5 bytes, 32 bits) and
//! LTF8 (up to 9 bytes, 64 bits), read from a cursor that knows its absolute offset.

use crate::Error;

/// A bounded reader over a byte slice; `base` is the slice's offset in the input, for errors.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`, whose first byte is at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Cursor { data, pos: 0, base }
    }

    /// Absolute offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The position within the data.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes from position `start` (earlier on this cursor) to the current position.
    pub fn covered_since(&self, start: usize) -> &'a [u8] {
        &self.data[start.min(self.pos)..self.pos]
    }

    /// The next byte, left unread.
    pub fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    /// The bytes left.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The next `n` bytes; an error if the input holds fewer.
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        if n > self.remaining() {
            return Err(Error::at(
                self.offset(),
                format!("{what}: {n} bytes wanted, {} left", self.remaining()),
            ));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The bytes before the next `stop` byte, which is read too; an error naming `what` if
    /// no stop byte is left.
    pub fn take_until(&mut self, stop: u8, what: &str) -> Result<&'a [u8], Error> {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == stop) {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None => {
                self.pos = self.data.len();
                self.u8(what).map(|_| &rest[..0])
            }
        }
    }

    /// The next byte.
    #[inline]
    pub fn u8(&mut self, what: &str) -> Result<u8, Error> {
        Ok(self.take(1, what)?[0])
    }

    /// The next 4 bytes as a little-endian `i32`.
    pub fn i32_le(&mut self, what: &str) -> Result<i32, Error> {
        let b = self.take(4, what)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The next 4 bytes as a little-endian `u32`.
    pub fn u32_le(&mut self, what: &str) -> Result<u32, Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// ITF8: the count of leading one bits of the first byte says how many bytes follow.
    pub fn itf8(&mut self, what: &str) -> Result<i32, Error> {
        let b0 = u32::from(self.u8(what)?);
        let extra = (b0 as u8).leading_ones() as usize;
        if extra == 0 {
            return Ok(b0 as i32);
        }
        let extra = extra.min(4);
        let rest = self.take(extra, what)?;
        let v = match extra {
            1 => ((b0 & 0x3f) << 8) | u32::from(rest[0]),
            2 => ((b0 & 0x1f) << 16) | (u32::from(rest[0]) << 8) | u32::from(rest[1]),
            3 => {
                ((b0 & 0x0f) << 24)
                    | (u32::from(rest[0]) << 16)
                    | (u32::from(rest[1]) << 8)
                    | u32::from(rest[2])
            }
            // Five bytes: 4 bits of the first, then 8, 8, 8 and the low 4 of the last.
            _ => {
                ((b0 & 0x0f) << 28)
                    | (u32::from(rest[0]) << 20)
                    | (u32::from(rest[1]) << 12)
                    | (u32::from(rest[2]) << 4)
                    | (u32::from(rest[3]) & 0x0f)
            }
        };
        Ok(v as i32)
    }

    /// LTF8: as ITF8, up to eight bytes after the first.
    pub fn ltf8(&mut self, what: &str) -> Result<i64, Error> {
        let b0 = self.u8(what)?;
        let extra = b0.leading_ones() as usize;
        let rest = self.take(extra, what)?;
        let mut v: u64 = if extra >= 7 {
            0
        } else {
            u64::from(b0 & (0x7f >> extra))
        };
        for &b in rest {
            v = (v << 8) | u64::from(b);
        }
        Ok(v as i64)
    }
}

/// The ITF8 bytes of `v`, as a CRAM writer stores a 32-bit integer (the shortest form; a
/// negative value takes all five bytes). For tools and tests that edit CRAM headers.
pub fn encode_itf8(v: i32) -> Vec<u8> {
    let u = v as u32;
    match u {
        0..=0x7f => vec![u as u8],
        0x80..=0x3fff => vec![0x80 | (u >> 8) as u8, u as u8],
        0x4000..=0x1f_ffff => vec![0xc0 | (u >> 16) as u8, (u >> 8) as u8, u as u8],
        0x20_0000..=0x0fff_ffff => vec![
            0xe0 | (u >> 24) as u8,
            (u >> 16) as u8,
            (u >> 8) as u8,
            u as u8,
        ],
        _ => vec![
            0xf0 | ((u >> 28) & 0x0f) as u8,
            (u >> 20) as u8,
            (u >> 12) as u8,
            (u >> 4) as u8,
            (u & 0x0f) as u8,
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::{encode_itf8, Cursor};

    fn itf8(b: &[u8]) -> i32 {
        Cursor::new(b, 0).itf8("t").unwrap()
    }

    #[test]
    fn itf8_each_length() {
        assert_eq!(itf8(&[0x7f]), 127);
        assert_eq!(itf8(&[0x80, 0x80]), 128);
        assert_eq!(itf8(&[0xc0, 0x40, 0x00]), 0x4000);
        assert_eq!(itf8(&[0xe0, 0x20, 0x00, 0x00]), 0x20_0000);
        assert_eq!(itf8(&[0xff, 0xff, 0xff, 0xff, 0x0f]), -1);
        assert_eq!(itf8(&[0xf1, 0x23, 0x45, 0x67, 0x08]), 0x1234_5678);
    }

    #[test]
    fn ltf8_each_length() {
        let l = |b: &[u8]| Cursor::new(b, 0).ltf8("t").unwrap();
        assert_eq!(l(&[0x05]), 5);
        assert_eq!(l(&[0x81, 0x00]), 256);
        assert_eq!(l(&[0xff, 0, 0, 0, 0, 0, 0, 1, 2]), 258);
        assert_eq!(l(&[0xfe, 0, 0, 0, 0, 0, 1, 0]), 256);
    }

    #[test]
    fn truncated_integers_name_the_offset() {
        let e = Cursor::new(&[0xe0, 0x01], 100).itf8("span").unwrap_err();
        assert_eq!(e.offset, 101);
        assert!(Cursor::new(&[0xff, 1, 2], 0).ltf8("x").is_err());
    }

    #[test]
    fn itf8_encodes_what_it_reads() {
        for v in [
            0,
            1,
            127,
            128,
            0x3fff,
            0x4000,
            0x1f_ffff,
            0x20_0000,
            0x0fff_ffff,
            0x1000_0000,
            i32::MAX,
            -1,
            i32::MIN,
        ] {
            let b = encode_itf8(v);
            assert_eq!(itf8(&b), v, "{v}: {b:?}");
        }
    }
}
