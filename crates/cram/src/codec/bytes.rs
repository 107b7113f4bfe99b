//! The byte reader CRAM's own codecs read their streams with: every read checked, errors
//! naming the position in the stream.

#[derive(Clone)]
pub(super) struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Bytes { data, pos: 0 }
    }

    #[inline]
    pub(super) fn next(&mut self) -> Result<u8, String> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| format!("stream ends at byte {}", self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    /// The bytes not yet read.
    pub(super) fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// Reads past `n` bytes (taken from [`Bytes::rest`]).
    pub(super) fn skip(&mut self, n: usize) -> Result<(), String> {
        self.take(n).map(|_| ())
    }

    /// Bytes read so far.
    pub(super) fn position(&self) -> usize {
        self.pos
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.data.len() - self.pos {
            return Err(format!("stream: {n} bytes wanted at byte {}", self.pos));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// 7 bits a byte, most significant group first, the top bit saying another follows.
    pub(super) fn uint7(&mut self) -> Result<usize, String> {
        let mut v: u64 = 0;
        for _ in 0..5 {
            let c = self.next()?;
            v = (v << 7) | u64::from(c & 0x7f);
            if c & 0x80 == 0 {
                return usize::try_from(v).map_err(|_| "size too large".to_string());
            }
        }
        Err("variable-length integer longer than 5 bytes".to_string())
    }

    pub(super) fn u32_le(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}
