use std::io;

use crate::{Backend, Hints, MemoryBackend, Result};

const BUFFER_SIZE: usize = 64 * 1024;

/// The buffer's size at its first fill: it doubles at each refill up to [`BUFFER_SIZE`]. The
/// first reads of a file are often its only small ones (the container sniffed from its first
/// bytes, then large reads that bypass the buffer): a full-size first fill would read, zero and
/// fault in 64 KiB that are never used (start-up, issue 21).
const FIRST_FILL: usize = 4 * 1024;

/// A buffered handle on a [`Backend`]: what the layers above hold.
///
/// It implements [`io::Read`], [`io::BufRead`] and [`io::Seek`] (mapping [`crate::Error`] into
/// [`io::Error`] with the original inside), so a foreign reader can use our transports.
///
/// # Examples
///
/// ```
/// use std::io::{Read, Seek, SeekFrom};
///
/// let mut f = hfile::HFile::from_bytes("demo", b"hello world".to_vec());
/// f.seek(SeekFrom::Start(6)).unwrap();
/// let mut word = String::new();
/// f.read_to_string(&mut word).unwrap();
/// assert_eq!(word, "world");
/// assert_eq!(f.size().unwrap(), 11);
/// ```
pub struct HFile {
    backend: Box<dyn Backend>,
    /// Once used, [`FIRST_FILL`] bytes growing to [`BUFFER_SIZE`], each byte zeroed once: a
    /// refill reads over them, and the valid ones are `buf[..filled]`.
    buf: Vec<u8>,
    /// How many bytes of `buf` hold data.
    filled: usize,
    /// File offset of `buf[0]`.
    buf_start: u64,
    /// Read cursor inside `buf`.
    cursor: usize,
}

impl HFile {
    /// Wraps a backend.
    pub fn new(backend: Box<dyn Backend>) -> HFile {
        let buf_start = backend.position();
        HFile {
            backend,
            buf: Vec::new(),
            filled: 0,
            buf_start,
            cursor: 0,
        }
    }

    /// A handle on bytes in memory.
    pub fn from_bytes(name: &str, data: Vec<u8>) -> HFile {
        HFile::new(Box::new(MemoryBackend::new(name, data)))
    }

    /// The name the user gave (path or URL).
    pub fn name(&self) -> &str {
        self.backend.name()
    }

    /// The current offset.
    pub fn tell(&self) -> u64 {
        self.buf_start + self.cursor as u64
    }

    /// The size of the object.
    pub fn size(&mut self) -> Result<u64> {
        self.backend.size()
    }

    /// Moves to `pos`. A target inside the buffer costs nothing.
    pub fn seek_to(&mut self, pos: u64) -> Result<()> {
        let buf_end = self.buf_start + self.filled as u64;
        if pos >= self.buf_start && pos <= buf_end {
            self.cursor = (pos - self.buf_start) as usize;
            return Ok(());
        }
        self.backend.seek(pos)?;
        self.filled = 0;
        self.cursor = 0;
        self.buf_start = pos;
        Ok(())
    }

    /// The last `len` bytes of the object; the position is unchanged.
    pub fn read_tail(&mut self, len: u64) -> Result<Vec<u8>> {
        self.backend.read_tail(len)
    }

    /// What the object is now, from a response ([`Backend::probe`]).
    pub fn probe(&mut self) -> Result<crate::ObjectInfo> {
        self.backend.probe()
    }

    /// What is known about the object's version so far ([`Backend::object_info`]).
    pub fn object_info(&mut self) -> crate::ObjectInfo {
        self.backend.object_info()
    }

    /// Reads into `buf`, returning 0 only at the end of the object.
    pub fn read_some(&mut self, out: &mut [u8]) -> Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.cursor == self.filled && out.len() >= BUFFER_SIZE / 2 {
            // Large reads bypass the buffer: no copy, and the backend sees the whole request.
            // Half the full size, so that a reader's first 64 KiB after the small first fill
            // (the sniffed header) is one read, not a copy and then refills of a growing buffer.
            self.discard_buffer();
            let n = self.backend.read(out)?;
            self.buf_start += n as u64;
            return Ok(n);
        }
        let avail = self.fill()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.cursor += n;
        Ok(n)
    }

    /// Reads until `out` is full or the object ends; returns how many bytes were read.
    pub fn read_full(&mut self, out: &mut [u8]) -> Result<usize> {
        let mut done = 0;
        while done < out.len() {
            let n = self.read_some(&mut out[done..])?;
            if n == 0 {
                break;
            }
            done += n;
        }
        Ok(done)
    }

    /// Reads everything from the current position to the end.
    pub fn read_to_end_vec(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut chunk = vec![0u8; BUFFER_SIZE];
        loop {
            let n = self.read_some(&mut chunk)?;
            if n == 0 {
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..n]);
        }
    }

    fn discard_buffer(&mut self) {
        self.buf_start += self.cursor as u64;
        self.filled = 0;
        self.cursor = 0;
    }

    fn fill(&mut self) -> Result<&[u8]> {
        if self.cursor == self.filled {
            self.discard_buffer();
            // Only the bytes the buffer grows by are zeroed: a refill reads over the old ones.
            let size = (self.buf.len() * 2).clamp(FIRST_FILL, BUFFER_SIZE);
            self.buf.resize(size, 0);
            self.filled = self.backend.read(&mut self.buf)?.min(size);
        }
        Ok(&self.buf[self.cursor..self.filled])
    }
}

/// The hints go to the backend as they are.
impl Hints for HFile {
    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        self.backend.set_readahead_limit(limit);
    }

    fn advise(&mut self, ranges: &[std::ops::Range<u64>]) {
        self.backend.advise(ranges);
    }

    fn advise_tail(&mut self, len: u64) {
        self.backend.advise_tail(len);
    }

    fn abandon(&mut self) {
        self.backend.abandon();
    }
}

impl std::fmt::Debug for HFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HFile")
            .field("name", &self.name())
            .field("offset", &self.tell())
            .finish()
    }
}

impl io::Read for HFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(self.read_some(buf)?)
    }
}

impl io::BufRead for HFile {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Ok(self.fill()?)
    }

    fn consume(&mut self, amt: usize) {
        self.cursor = (self.cursor + amt).min(self.filled);
    }
}

impl io::Seek for HFile {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        let target = match pos {
            io::SeekFrom::Start(p) => Some(p),
            io::SeekFrom::Current(d) => self.tell().checked_add_signed(d),
            io::SeekFrom::End(d) => self.size()?.checked_add_signed(d),
        };
        let target = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the file",
            )
        })?;
        self.seek_to(target)?;
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, Read, Seek, SeekFrom};
    use std::sync::Arc;

    #[test]
    fn seek_inside_and_outside_the_buffer() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut f = HFile::from_bytes("m", data.clone());
        let mut b = [0u8; 10];
        f.read_exact(&mut b).unwrap();
        assert_eq!(&b, &data[..10]);
        f.seek(SeekFrom::Start(5)).unwrap();
        f.read_exact(&mut b).unwrap();
        assert_eq!(&b, &data[5..15]);
        f.seek(SeekFrom::Start(150_000)).unwrap();
        f.read_exact(&mut b).unwrap();
        assert_eq!(&b, &data[150_000..150_010]);
        assert_eq!(f.tell(), 150_010);
        f.seek(SeekFrom::End(-3)).unwrap();
        let mut rest = Vec::new();
        f.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, &data[data.len() - 3..]);
        assert!(f.seek(SeekFrom::Current(-1_000_000)).is_err());
    }

    /// Memory that records the size of every read asked of it.
    struct Recording(MemoryBackend, std::sync::Arc<std::sync::Mutex<Vec<usize>>>);

    impl Backend for Recording {
        fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
            self.1.lock().unwrap().push(buf.len());
            self.0.read(buf)
        }
        fn seek(&mut self, pos: u64) -> Result<()> {
            self.0.seek(pos)
        }
        fn position(&self) -> u64 {
            self.0.position()
        }
        fn size(&mut self) -> Result<u64> {
            self.0.size()
        }
        fn name(&self) -> &str {
            self.0.name()
        }
    }

    impl crate::Hints for Recording {}

    #[test]
    fn the_buffer_starts_small_and_grows_with_use() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let reads = std::sync::Arc::default();
        let backend = Recording(MemoryBackend::new("m", data.clone()), Arc::clone(&reads));
        let mut f = HFile::new(Box::new(backend));
        // A sniff of the first bytes reads 4 KiB, not 64.
        let mut head = [0u8; 18];
        f.read_exact(&mut head).unwrap();
        assert_eq!(*reads.lock().unwrap(), [FIRST_FILL]);
        // Small reads on: each refill doubles, up to the full size.
        let mut rest = vec![0u8; 200_000];
        for piece in rest.chunks_mut(1000) {
            f.read_exact(piece).unwrap();
        }
        assert_eq!(&rest[..], &data[18..200_018]);
        let sizes = reads.lock().unwrap().clone();
        assert_eq!(sizes[..5], [4096, 8192, 16384, 32768, 65536]);
        assert!(sizes[5..].iter().all(|&n| n == BUFFER_SIZE), "{sizes:?}");
        // After a seek back into the buffered bytes, a large read takes what is buffered and
        // then goes straight to the backend in one read.
        let mut f = HFile::from_bytes("m", data.clone());
        f.read_exact(&mut head).unwrap();
        f.seek(SeekFrom::Start(0)).unwrap();
        let mut big = vec![0u8; 64 * 1024];
        assert_eq!(f.read_some(&mut big).unwrap(), FIRST_FILL);
        assert_eq!(f.read_some(&mut big[FIRST_FILL..]).unwrap(), 60 * 1024);
        assert_eq!(&big[..], &data[..64 * 1024]);
    }

    #[test]
    fn large_reads_bypass_the_buffer_and_keep_offsets() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 7) as u8).collect();
        let mut f = HFile::from_bytes("m", data.clone());
        let mut small = [0u8; 3];
        f.read_exact(&mut small).unwrap();
        let mut big = vec![0u8; 100_000];
        f.read_exact(&mut big).unwrap();
        assert_eq!(&big[..], &data[3..100_003]);
        let mut big2 = vec![0u8; 100_000];
        f.read_exact(&mut big2).unwrap();
        assert_eq!(&big2[..], &data[100_003..200_003]);
        assert_eq!(f.tell(), 200_003);
        assert_eq!(f.fill_buf().unwrap()[0], data[200_003]);
    }
}
