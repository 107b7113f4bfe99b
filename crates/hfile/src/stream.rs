//! A byte source that can only be read forward, such as standard input (`-`).

use std::io::{self, Read};

use crate::{Backend, Error, Result};

/// Reads a stream front to back. A forward seek skips bytes; a backward seek, and asking the
/// size, are errors that name the stream.
pub struct StreamBackend {
    name: String,
    inner: Box<dyn Read + Send>,
    pos: u64,
}

impl StreamBackend {
    /// Wraps any reader; `name` is what messages call it.
    pub fn new(name: &str, inner: Box<dyn Read + Send>) -> StreamBackend {
        StreamBackend {
            name: name.to_string(),
            inner,
            pos: 0,
        }
    }

    /// Standard input, called `-` as samtools calls it.
    pub fn stdin() -> StreamBackend {
        StreamBackend::new("-", Box::new(io::stdin()))
    }

    fn unsupported(&self, what: &str) -> Error {
        Error::Io {
            name: self.name.clone(),
            offset: self.pos,
            source: io::Error::new(io::ErrorKind::Unsupported, what.to_string()),
        }
    }
}

impl Backend for StreamBackend {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        crate::file::read_counting(&mut self.inner, buf, &self.name, &mut self.pos)
    }

    fn seek(&mut self, pos: u64) -> Result<()> {
        if pos < self.pos {
            return Err(self.unsupported("cannot seek backwards in a stream"));
        }
        let mut skip = pos - self.pos;
        let mut buf = [0u8; 8192];
        while skip > 0 {
            let n = self.read(&mut buf[..skip.min(8192) as usize])?;
            if n == 0 {
                break;
            }
            skip -= n as u64;
        }
        self.pos = pos;
        Ok(())
    }

    fn position(&self) -> u64 {
        self.pos
    }

    fn size(&mut self) -> Result<u64> {
        Err(self.unsupported("a stream has no known size"))
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// Reads what it is asked for: every hint is ignored.
impl crate::Hints for StreamBackend {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_only() {
        let mut s = StreamBackend::new("t", Box::new(&b"abcdef"[..]));
        let mut b = [0u8; 2];
        assert_eq!(s.read(&mut b).unwrap(), 2);
        s.seek(4).unwrap();
        assert_eq!(s.read(&mut b).unwrap(), 2);
        assert_eq!(&b, b"ef");
        assert!(s.seek(1).is_err());
        assert!(s.size().is_err());
        assert_eq!(s.position(), 6);
    }
}
