//! The crate's one error type, sorted by the Python exception each kind becomes.

use std::fmt;

/// What went wrong. The message is the one line the `hts` command line prints after its
/// `hts view: ` prefix: it names the file (URLs without their query string) and the byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Reading failed: the file, its index or the transport (Python: `hts.HtsError`, an
    /// `OSError`).
    Read(String),
    /// An argument cannot be used: an unknown contig, coordinates out of order, a region that
    /// does not parse (Python: `ValueError`, as pysam raises).
    Argument(String),
    /// The file was closed (Python: `ValueError`, pysam's "I/O operation on closed file").
    Closed,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Read(m) | Error::Argument(m) => f.write_str(m),
            Error::Closed => f.write_str("I/O operation on closed file"),
        }
    }
}

impl std::error::Error for Error {}

impl From<bam::Error> for Error {
    fn from(e: bam::Error) -> Error {
        Error::Read(e.to_string())
    }
}

impl From<hts::Error> for Error {
    fn from(e: hts::Error) -> Error {
        Error::Read(e.to_string())
    }
}

impl From<tabix::Error> for Error {
    fn from(e: tabix::Error) -> Error {
        Error::Read(e.to_string())
    }
}
