//! What a reader tells its byte source about the reads to come: declared once here, taken by
//! every [`crate::Backend`], by [`crate::HFile`], and by the byte sources of the layers above
//! (`bgzf::Source` is `Read + Seek + Hints`).

use std::io;
use std::ops::Range;

/// Hints about the reads to come. Every method is a hint: a source that ignores them (a local
/// file, bytes in memory) reads the same bytes; a remote one turns them into bounded `Range`
/// requests fetched ahead. The provided methods ignore the hint.
///
/// ```
/// use hfile::Hints;
///
/// let mut f = hfile::HFile::from_bytes("demo", b"hello world".to_vec());
/// f.advise(&[6..11]);
/// f.set_readahead_limit(Some(11));
/// assert_eq!(f.read_tail(5).unwrap(), b"world");
/// ```
pub trait Hints {
    /// Reads from the current position will not need bytes at or past `limit` (`None`: no
    /// bound is known, e.g. streaming a whole file). Never an end of file.
    fn set_readahead_limit(&mut self, _limit: Option<u64>) {}

    /// These byte ranges will be read next, in this order (like `posix_fadvise(WILLNEED)`),
    /// replacing earlier advice. A remote source may fetch them ahead; reads still come through
    /// seek, the readahead limit and read.
    fn advise(&mut self, _ranges: &[Range<u64>]) {}

    /// The last `len` bytes will be asked for (`read_tail`): a remote source starts that
    /// request now, beside whatever else is running.
    fn advise_tail(&mut self, _len: u64) {}

    /// The caller will read nothing more: a remote source stops every request still running,
    /// however little is left of it (one dropped lets a nearly finished request complete, to
    /// keep its connection for the next). For a file the caller turns away from at once, such
    /// as an index name that lost to another.
    fn abandon(&mut self) {}
}

/// A handle that holds a source passes the hints on.
macro_rules! pass_on {
    ($($holder:ty),*) => {$(
        impl<H: Hints + ?Sized> Hints for $holder {
            fn set_readahead_limit(&mut self, limit: Option<u64>) {
                (**self).set_readahead_limit(limit);
            }

            fn advise(&mut self, ranges: &[Range<u64>]) {
                (**self).advise(ranges);
            }

            fn advise_tail(&mut self, len: u64) {
                (**self).advise_tail(len);
            }

            fn abandon(&mut self) {
                (**self).abandon();
            }
        }
    )*};
}

pass_on!(Box<H>, &mut H);

/// Local sources read what they are asked for; every hint is ignored.
impl Hints for std::fs::File {}

impl<T> Hints for io::Cursor<T> {}

impl<R> Hints for io::BufReader<R> {}
