//! What the file-level commands ([`crate::flagstat::flagstat`], [`crate::idxstats::idxstats`])
//! report on their way, besides their result: the caller words and prints each, in order.

/// A warning met on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// A cached part of a remote file turned out stale (the reason): nothing was output, and
    /// the file is read again without the cache.
    Stale(String),
    /// idxstats could not load the index (the reason): it reads the records instead, as
    /// samtools reverts to its slow method.
    SlowMethod(String),
}

/// `first`, or, when it failed on a cached part of a remote file that turned out stale (`stale`
/// gives the reason), the warning and `again`: the same work without the cache. Once only:
/// without the cache nothing can be stale.
pub(crate) fn again_if_stale<T, E>(
    first: Result<T, E>,
    stale: impl Fn(&E) -> Option<String>,
    warn: &mut dyn FnMut(Warning),
    again: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    if let Some(why) = first.as_ref().err().and_then(stale) {
        warn(Warning::Stale(why));
        return again();
    }
    first
}

/// The reason a bam error is a stale cache entry ([`bam::Error::is_changed`]).
pub(crate) fn changed(e: &bam::Error) -> Option<String> {
    e.is_changed().then(|| e.to_string())
}
