//! A byte source whose first bytes are already known (a cached header or index prefix) and
//! whose rest comes from another source.

use std::ops::Range;

use crate::{Backend, ObjectInfo, Result};

/// Serves `[0, prefix.len())` from memory and everything after from `rest`, which is only asked
/// for bytes past the prefix.
///
/// ```
/// use hfile::{Backend, MemoryBackend, PrefixBackend};
/// let whole = b"0123456789".to_vec();
/// let mut b = PrefixBackend::new(b"0123".to_vec(), Box::new(MemoryBackend::new("m", whole)));
/// let mut buf = [0u8; 10];
/// assert_eq!(b.read(&mut buf).unwrap(), 4, "a read stops at the end of the prefix");
/// assert_eq!(&buf[..4], b"0123");
/// assert_eq!(b.read(&mut buf).unwrap(), 6);
/// assert_eq!(&buf[..6], b"456789");
/// ```
pub struct PrefixBackend {
    prefix: Vec<u8>,
    rest: Box<dyn Backend>,
    pos: u64,
}

impl PrefixBackend {
    /// `prefix` (the object's first bytes), then `rest`.
    pub fn new(prefix: Vec<u8>, rest: Box<dyn Backend>) -> PrefixBackend {
        PrefixBackend {
            prefix,
            rest,
            pos: 0,
        }
    }

    fn prefix_len(&self) -> u64 {
        self.prefix.len() as u64
    }
}

impl Backend for PrefixBackend {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.pos < self.prefix_len() {
            let from = self.pos as usize;
            let n = buf.len().min(self.prefix.len() - from);
            buf[..n].copy_from_slice(&self.prefix[from..from + n]);
            self.pos += n as u64;
            return Ok(n);
        }
        self.rest.seek(self.pos)?;
        let n = self.rest.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }

    fn seek(&mut self, pos: u64) -> Result<()> {
        self.pos = pos;
        if pos >= self.prefix_len() {
            self.rest.seek(pos)?;
        }
        Ok(())
    }

    fn position(&self) -> u64 {
        self.pos
    }

    fn size(&mut self) -> Result<u64> {
        self.rest.size()
    }

    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        self.rest.set_readahead_limit(limit);
    }

    fn advise(&mut self, ranges: &[Range<u64>]) {
        // What the prefix holds needs no fetching.
        let p = self.prefix_len();
        let beyond: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| r.end > p)
            .map(|r| r.start.max(p)..r.end)
            .collect();
        self.rest.advise(&beyond);
    }

    fn advise_tail(&mut self, len: u64) {
        self.rest.advise_tail(len);
    }

    fn read_tail(&mut self, len: u64) -> Result<Vec<u8>> {
        self.rest.read_tail(len)
    }

    fn object_info(&mut self) -> ObjectInfo {
        self.rest.object_info()
    }

    fn name(&self) -> &str {
        self.rest.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryBackend;

    #[test]
    fn seeks_cross_the_prefix_boundary() {
        let whole: Vec<u8> = (0..100u8).collect();
        let mut b = PrefixBackend::new(
            whole[..30].to_vec(),
            Box::new(MemoryBackend::new("m", whole.clone())),
        );
        let mut buf = [0u8; 20];
        b.seek(25).unwrap();
        assert_eq!(b.read(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], &whole[25..30]);
        assert_eq!(b.read(&mut buf).unwrap(), 20);
        assert_eq!(&buf[..], &whole[30..50]);
        b.seek(10).unwrap();
        assert_eq!(b.read(&mut buf[..5]).unwrap(), 5);
        assert_eq!(&buf[..5], &whole[10..15]);
        assert_eq!(b.size().unwrap(), 100);
        assert_eq!(b.read_tail(3).unwrap(), vec![97, 98, 99]);
    }
}
