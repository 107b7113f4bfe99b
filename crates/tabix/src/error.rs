use std::fmt;
use std::io;

/// What can go wrong reading a tabix-indexed file; each names the file.
#[derive(Debug)]
pub enum Error {
    /// The data file could not be opened or read.
    Data(bgzf::Error),
    /// The byte source could not be opened.
    Open(hfile::Error),
    /// No index was found under any name tabix tries.
    NoIndex {
        /// The data file.
        name: String,
    },
    /// The index could not be read.
    Index(index::Error),
    /// The index holds no tabix meta (a BAI, or a CSI made for BAM or BCF).
    NotTabix {
        /// The index file.
        name: String,
    },
    /// A line in a region could not be parsed with the index's columns.
    Parse {
        /// The data file.
        name: String,
        /// The virtual offset of the line.
        offset: bgzf::VirtualOffset,
        /// The line, cut to 200 bytes.
        line: String,
    },
    /// A region string htslib does not accept.
    Region {
        /// The region string.
        region: String,
        /// htslib's complaint.
        why: String,
    },
    /// The data does not fit its index: a line of another sequence, or out of order, inside
    /// the index's chunks for a region; a line running past a chunk's end; an index whose
    /// name table does not match its reference count.
    Mismatch {
        /// The data file (or the index, for its name table).
        name: String,
        /// Where: the line's virtual offset, or the index's byte.
        at: String,
        /// What does not fit.
        what: String,
    },
    /// A number option's text has more than a number (`tabix::conf`).
    Argument {
        /// The option's letter.
        letter: char,
        /// The text given.
        value: String,
    },
    /// `-p` names no preset tabix knows.
    Preset {
        /// The name given.
        name: String,
    },
    /// Reheader: the file's first block holds no data.
    EmptyFirstBlock {
        /// The data file.
        name: String,
    },
    /// Reheader: the file holds only header lines.
    NoBody {
        /// The data file.
        name: String,
    },
    /// Reheader: the new header's file cannot be read.
    HeaderFile {
        /// The header file.
        name: String,
        /// Why.
        source: io::Error,
    },
    /// Reading or seeking in the data's bytes failed.
    Io {
        /// The data file.
        name: String,
        /// Why.
        source: io::Error,
    },
    /// Writing the output failed.
    Write(io::Error),
    /// A line longer than the bound (1 GiB) has no newline.
    LineTooLong {
        /// The data file.
        name: String,
        /// Where the line starts.
        offset: bgzf::VirtualOffset,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Data(e) => write!(f, "{e}"),
            Error::Open(e) => write!(f, "{e}"),
            Error::NoIndex { name } => write!(f, "{name}: no .tbi or .csi index found"),
            Error::Index(e) => write!(f, "{e}"),
            Error::NotTabix { name } => write!(f, "{name}: not a tabix index (no column meta)"),
            Error::Parse { name, offset, line } => write!(
                f,
                "{name}: failed to parse the line at virtual offset {offset} with the index's \
                 columns: {line:?}"
            ),
            Error::Region { region, why } => write!(f, "region {region:?}: {why}"),
            Error::Mismatch { name, at, what } => write!(f, "{name}: {what} at {at}"),
            Error::Argument { letter, value } => {
                write!(f, "Could not parse argument: -{letter} {value}")
            }
            Error::Preset { name } => write!(f, "The preset string not recognised: '{name}'"),
            Error::EmptyFirstBlock { name } => write!(f, "{name}: the first block is empty"),
            Error::NoBody { name } => write!(f, "{name}: no body after the header"),
            Error::HeaderFile { name, source } => {
                // The C library's text (`strerror`), without Rust's "(os error N)".
                let s = source.to_string();
                let s = s.split(" (os error").next().unwrap_or(&s);
                write!(f, "{name}: {s}")
            }
            Error::Io { name, source } => write!(f, "{name}: {source}"),
            Error::Write(e) => write!(f, "writing the output failed: {e}"),
            Error::LineTooLong { name, offset } => {
                write!(
                    f,
                    "{name}: a line at virtual offset {offset} is longer than 1 GiB"
                )
            }
        }
    }
}

impl std::error::Error for Error {}

impl From<bgzf::Error> for Error {
    fn from(e: bgzf::Error) -> Error {
        Error::Data(e)
    }
}
