//! What a [`crate::Reader`] reads from: any `Read + Seek`, with two optional hints that remote
//! byte sources use.

use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;

/// A seekable byte source for [`crate::Reader`].
///
/// Every `Read + Seek` type can be one with an empty `impl`; the provided methods are hints that
/// a local source ignores. [`hfile::HFile`] implements them: the readahead limit becomes the end
/// of a bounded `Range` request, and advised ranges are fetched ahead on other connections.
///
/// ```
/// struct Bytes(std::io::Cursor<Vec<u8>>);
/// impl std::io::Read for Bytes {
///     fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> { self.0.read(b) }
/// }
/// impl std::io::Seek for Bytes {
///     fn seek(&mut self, p: std::io::SeekFrom) -> std::io::Result<u64> { self.0.seek(p) }
/// }
/// impl bgzf::Source for Bytes {}
///
/// let mut w = bgzf::Writer::new(Vec::new());
/// std::io::Write::write_all(&mut w, b"data").unwrap();
/// let src = Bytes(std::io::Cursor::new(w.finish().unwrap()));
/// let mut r = bgzf::Reader::with_name(src, "bytes").unwrap();
/// let mut buf = [0u8; 4];
/// r.read_exact(&mut buf).unwrap();
/// assert_eq!(&buf, b"data");
/// ```
pub trait Source: Read + Seek {
    /// Reads from the current position will not need bytes at or past `limit` (`None`: no bound
    /// is known). A hint for how much to ask a remote server for, never an end of file.
    fn set_readahead_limit(&mut self, _limit: Option<u64>) {}

    /// The byte ranges that will be read next, in the order they will be read (like
    /// `posix_fadvise(WILLNEED)`); replaces any earlier advice. Reads still go through the usual
    /// seek and limit; a source may fetch these ahead.
    fn advise(&mut self, _ranges: &[Range<u64>]) {}

    /// Hints that [`Source::read_tail`] will be called: a remote source starts that request now.
    fn advise_tail(&mut self, _len: u64) {}

    /// The last `len` bytes of the source (all of it if shorter); the position is unchanged.
    fn read_tail(&mut self, len: u64) -> io::Result<Vec<u8>> {
        let here = self.stream_position()?;
        let size = self.size()?;
        let start = size.saturating_sub(len);
        self.seek(SeekFrom::Start(start))?;
        let mut out = vec![0u8; (size - start) as usize];
        let read = crate::fetch::read_full(self, &mut out);
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
    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        hfile::HFile::set_readahead_limit(self, limit);
    }

    fn advise_tail(&mut self, len: u64) {
        hfile::HFile::advise_tail(self, len);
    }

    fn read_tail(&mut self, len: u64) -> io::Result<Vec<u8>> {
        Ok(hfile::HFile::read_tail(self, len)?)
    }

    fn advise(&mut self, ranges: &[Range<u64>]) {
        hfile::HFile::advise(self, ranges);
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
    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        (**self).set_readahead_limit(limit);
    }

    fn advise_tail(&mut self, len: u64) {
        (**self).advise_tail(len);
    }

    fn read_tail(&mut self, len: u64) -> io::Result<Vec<u8>> {
        (**self).read_tail(len)
    }

    fn advise(&mut self, ranges: &[Range<u64>]) {
        (**self).advise(ranges);
    }

    fn size(&mut self) -> io::Result<u64> {
        (**self).size()
    }

    fn name(&self) -> &str {
        (**self).name()
    }
}

impl<S: Source + ?Sized> Source for &mut S {
    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        (**self).set_readahead_limit(limit);
    }

    fn advise_tail(&mut self, len: u64) {
        (**self).advise_tail(len);
    }

    fn read_tail(&mut self, len: u64) -> io::Result<Vec<u8>> {
        (**self).read_tail(len)
    }

    fn advise(&mut self, ranges: &[Range<u64>]) {
        (**self).advise(ranges);
    }

    fn size(&mut self) -> io::Result<u64> {
        (**self).size()
    }

    fn name(&self) -> &str {
        (**self).name()
    }
}
