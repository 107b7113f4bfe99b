//! The facade's one error type. Each variant names the file it is about (a URL's secrets
//! hidden) and, where the format tells it, the byte: what a user needs to find the fault.

use std::fmt;

/// Why opening or reading through the facade failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// From the BAM reader: names its file, and the offset where a record or block failed.
    Bam(bam::Error),
    /// A remote file could not be opened or read (the message names it).
    Open(hfile::Error),
    /// From the tabix reader: names its file (or index) and where it failed.
    Tabix(tabix::Error),
    /// A CRAM file, its `.crai` or its reference could not be opened or read.
    Cram {
        /// The file (data, index or reference) the error is about, secrets hidden.
        file: String,
        /// The byte of `file` where it failed, when known.
        offset: Option<u64>,
        /// What went wrong, for a person.
        message: String,
    },
    /// A CRAM's reference (FASTA, its `.fai`/`.gzi`, or a `REF_PATH` entry) could not be
    /// opened or read; the message names it.
    Reference(String),
    /// The input is neither BAM nor CRAM (or, for a variant reader, not bgzipped text).
    Format {
        /// The file, secrets hidden.
        file: String,
        /// What it is instead.
        message: String,
    },
}

/// The facade's results.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A CRAM error about `file` (shown with its secrets hidden) with no known offset.
    pub(crate) fn cram(file: &str, message: impl fmt::Display) -> Error {
        Error::Cram {
            file: hfile::redact_text(file),
            offset: None,
            message: message.to_string(),
        }
    }

    /// A CRAM error about the byte `offset` of `file`.
    pub(crate) fn cram_at(file: &str, offset: u64, message: impl fmt::Display) -> Error {
        Error::Cram {
            file: hfile::redact_text(file),
            offset: Some(offset),
            message: message.to_string(),
        }
    }

    /// Whether a part of the file that came from the persistent cache turned out stale: the
    /// readers open the file again without the cache themselves, so an application sees this
    /// only when it drives the CRAM parts ([`crate::cram_cache`]) by hand.
    pub fn is_stale(&self) -> bool {
        matches!(self, Error::Bam(e) if e.is_changed())
    }

    /// Whether the output went away (a closed pipe), which a command ends on quietly.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Bam(e) if e.is_broken_pipe())
    }

    /// The file the error is about, as shown (`None` for a tabix error about a region string
    /// or a byte source, whose message names what it is about).
    pub fn file(&self) -> Option<&str> {
        match self {
            Error::Bam(e) => Some(e.name()),
            Error::Tabix(
                tabix::Error::NoIndex { name }
                | tabix::Error::NotTabix { name }
                | tabix::Error::Parse { name, .. }
                | tabix::Error::Mismatch { name, .. }
                | tabix::Error::LineTooLong { name, .. },
            ) => Some(name),
            Error::Tabix(_) | Error::Open(_) | Error::Reference(_) => None,
            Error::Cram { file, .. } | Error::Format { file, .. } => Some(file),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Bam(e) => write!(f, "{e}"),
            Error::Tabix(e) => write!(f, "{e}"),
            Error::Open(e) => write!(f, "{e}"),
            // The offset is part of the message where the format says it (as the CLI prints
            // it); it is kept apart for a program that wants it.
            Error::Cram { file, message, .. } | Error::Format { file, message } => {
                write!(f, "{file}: {message}")
            }
            Error::Reference(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Bam(e) => Some(e),
            Error::Tabix(e) => Some(e),
            Error::Open(e) => Some(e),
            Error::Cram { .. } | Error::Format { .. } | Error::Reference(_) => None,
        }
    }
}

impl From<bam::Error> for Error {
    fn from(e: bam::Error) -> Error {
        Error::Bam(e)
    }
}

impl From<tabix::Error> for Error {
    fn from(e: tabix::Error) -> Error {
        Error::Tabix(e)
    }
}
