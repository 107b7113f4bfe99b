//! The byte sources a CRAM reader reads from.

use std::io::{Read, Seek, SeekFrom};

use hfile::Hints;

use crate::Error;

/// Any byte source with a position: a local file, or a remote one through hfile.
pub trait ReadSeek: Read + Seek {}

impl<T: Read + Seek> ReadSeek for T {}

/// A byte source that may take advice on what will be read ([`Hints`], the transport's: a
/// remote file fetches the ranges ahead, several at once, and asks for no byte past the limit).
pub trait Source: Read + Seek + Hints {
    /// The size in bytes; `None` for a stream read once in order (its offsets only grow,
    /// except back to bytes of the container being read).
    fn size(&mut self) -> std::io::Result<Option<u64>> {
        self.seek(SeekFrom::End(0)).map(Some)
    }
}

/// A source that takes no advice (a local file, bytes in memory).
pub(super) struct Plain<T>(pub(super) T);

impl<T: Read> Read for Plain<T> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl<T: Seek> Seek for Plain<T> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.0.seek(pos)
    }
}

impl<T> Hints for Plain<T> {}

impl<T: Read + Seek> Source for Plain<T> {}

pub(super) fn read_at(file: &mut dyn Source, at: u64, buf: &mut [u8]) -> Result<usize, Error> {
    file.seek(SeekFrom::Start(at))
        .map_err(|e| Error::at(at, e.to_string()))?;
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::at(at, e.to_string())),
        }
    }
    Ok(n)
}
