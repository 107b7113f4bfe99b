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

/// An error's text for a line that names the file already: a CRAM error's message without
/// its file (as the commands have always printed it), any other error whole.
pub(crate) fn reason(e: &hts::Error) -> String {
    match e {
        hts::Error::Cram { message, .. } => message.clone(),
        e => e.to_string(),
    }
}
