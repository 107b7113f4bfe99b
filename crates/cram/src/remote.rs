//! Remote references: `http(s)://` entries of `REF_PATH` (the MD5 server) and a FASTA given
//! by URL. This crate has no transport; the caller gives one (the CLI's goes through hfile,
//! with bounded ranges and a time limit).

use std::ops::Range;

/// A transport for remote references (shared with the decoding workers, and a reader may be
/// moved to a thread of its own: the Python package reads on one).
pub trait Remote: Send + Sync {
    /// The bytes `range` of `url` (`None`: the whole file, for small ones such as a `.fai`).
    /// `Ok(None)` when the server has no such file (a `404`-like refusal): the next place is
    /// tried. `Err` for a failure (no answer in time, a refused connection), named by the
    /// caller with the URL.
    fn fetch(&self, url: &str, range: Option<Range<u64>>) -> Result<Option<Vec<u8>>, String>;

    /// A byte source on `url`, read through bounded ranges (a remote FASTA's bases).
    fn open(&self, url: &str) -> Result<Box<dyn bgzf::Source + Send>, String>;
}

/// Whether `location` is a URL (`scheme://...`) rather than a local path.
pub fn is_url(location: &str) -> bool {
    location.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}
