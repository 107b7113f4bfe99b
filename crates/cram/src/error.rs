use std::fmt;

/// One error type for the crate: what is wrong and the byte offset it was found at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Byte offset in the input where the fault was found.
    pub offset: u64,
    /// What is wrong.
    pub what: String,
}

/// What [`Error::is_not_cram`] looks for.
pub(crate) const NOT_CRAM: &str = "not a CRAM file (no CRAM magic)";

impl Error {
    /// Whether the input does not start with CRAM's magic (another format, not a damaged
    /// CRAM): a reader that guessed CRAM from a name may try another format.
    pub fn is_not_cram(&self) -> bool {
        self.offset == 0 && self.what == NOT_CRAM
    }

    pub(crate) fn at(offset: u64, what: impl Into<String>) -> Self {
        Error {
            offset,
            what: what.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

impl std::error::Error for Error {}
