//! What a [`crate::Reader`] reads from: any `Read + Seek` that takes the transport's
//! [`Hints`] (declared once, in hfile), with the size and tail a remote source tells cheaply.

use std::io::{self, Read, Seek, SeekFrom};

use hfile::Hints;

/// A seekable byte source for [`crate::Reader`].
///
/// Every `Read + Seek` type can be one with two empty `impl`s: [`Hints`] (hints a local source
/// ignores) and this trait. [`hfile::HFile`] takes the hints: the readahead limit becomes the
/// end of a bounded `Range` request, and advised ranges are fetched ahead on other connections.
///
/// ```
/// struct Bytes(std::io::Cursor<Vec<u8>>);
/// impl std::io::Read for Bytes {
///     fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> { self.0.read(b) }
/// }
/// impl std::io::Seek for Bytes {
///     fn seek(&mut self, p: std::io::SeekFrom) -> std::io::Result<u64> { self.0.seek(p) }
/// }
/// impl hfile::Hints for Bytes {}
/// impl bgzf::Source for Bytes {}
///
/// let mut w = bgzf::Writer::new(Vec::new());
/// std::io::Write::write_all(&mut w, b"data").unwrap();
/// let src = Bytes(std::io::Cursor::new(w.finish().unwrap()));
/// let mut r = bgzf::Reader::with_name(src, "bytes").unwrap();
/// let mut buf = [0u8; 4];
/// r.read_exact_data(&mut buf).unwrap();
/// assert_eq!(&buf, b"data");
/// ```
pub trait Source: Read + Seek + Hints {
    /// The last `len` bytes of the source (all of it if shorter); the position is unchanged.
    fn read_tail(&mut self, len: u64) -> io::Result<Vec<u8>> {
        let here = self.stream_position()?;
        let size = self.size()?;
        let start = size.saturating_sub(len);
        self.seek(SeekFrom::Start(start))?;
        let mut out = vec![0u8; (size - start) as usize];
        let read = crate::raw_block::read_full(self, &mut out);
        self.seek(SeekFrom::Start(here))?;
        out.truncate(read?);
        Ok(out)
    }

    /// The size of the source in bytes.
    fn size(&mut self) -> io::Result<u64> {
        let here = self.stream_position()?;
        let end = self.seek(SeekFrom::End(0))?;
        self.seek(SeekFrom::Start(here))?;
        Ok(end)
    }

    /// The name of the source (path or URL), for messages; empty when it has none.
    fn name(&self) -> &str {
        ""
    }
}

impl Source for hfile::HFile {
    fn read_tail(&mut self, len: u64) -> io::Result<Vec<u8>> {
        Ok(hfile::HFile::read_tail(self, len)?)
    }

    fn size(&mut self) -> io::Result<u64> {
        Ok(hfile::HFile::size(self)?)
    }

    fn name(&self) -> &str {
        hfile::HFile::name(self)
    }
}

impl Source for std::fs::File {}

impl<T: AsRef<[u8]>> Source for io::Cursor<T> {}

impl<R: Read + Seek> Source for io::BufReader<R> {}

impl<S: Source + ?Sized> Source for Box<S> {
    fn read_tail(&mut self, len: u64) -> io::Result<Vec<u8>> {
        (**self).read_tail(len)
    }

    fn size(&mut self) -> io::Result<u64> {
        (**self).size()
    }

    fn name(&self) -> &str {
        (**self).name()
    }
}

impl<S: Source + ?Sized> Source for &mut S {
    fn read_tail(&mut self, len: u64) -> io::Result<Vec<u8>> {
        (**self).read_tail(len)
    }

    fn size(&mut self) -> io::Result<u64> {
        (**self).size()
    }

    fn name(&self) -> &str {
        (**self).name()
    }
}
