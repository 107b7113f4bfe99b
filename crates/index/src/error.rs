use std::fmt;
use std::io;

/// Everything that can go wrong while loading a BAI or CSI index.
///
/// Every variant names the index file (or URL) it is about. Offsets are byte offsets into the
/// index as stored for a BAI; for a BGZF-compressed CSI they are offsets into the decompressed
/// index stream, and the message says so.
#[derive(Debug)]
pub enum Error {
    /// The file could not be read at all.
    Io {
        /// The index file.
        name: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// The gzip/BGZF layer of a compressed index is damaged or cut short.
    Decompress {
        /// The index file.
        name: String,
        /// How many decompressed bytes were produced before the failure.
        offset: u64,
        /// What the decompressor said.
        source: io::Error,
    },
    /// The index stream (decompressed, for a compressed index) is longer than the limit.
    TooLarge {
        /// The index file.
        name: String,
        /// The limit, in decompressed bytes.
        limit: u64,
    },
    /// The first four bytes are neither `BAI\1` nor `CSI\1`.
    BadMagic {
        /// The index file.
        name: String,
        /// The bytes found (fewer than four if the file is that short).
        found: Vec<u8>,
    },
    /// The data ends before a field that must be there.
    Truncated {
        /// The index file.
        name: String,
        /// Where the missing field starts.
        offset: u64,
        /// Which field was being read.
        what: &'static str,
        /// Whether `offset` is in the decompressed stream of a compressed index.
        compressed: bool,
    },
    /// A field holds a value the format does not allow (negative count, duplicate bin, a count
    /// larger than the bytes left, an unsupported binning geometry).
    Invalid {
        /// The index file.
        name: String,
        /// Where the offending field starts.
        offset: u64,
        /// What is wrong with it.
        message: String,
        /// Whether `offset` is in the decompressed stream of a compressed index.
        compressed: bool,
    },
    /// A query needs a reference (or, `tid: None`, the whole index) that a partial load
    /// skipped (see [`crate::Loader`]).
    NotLoaded {
        /// The index file.
        name: String,
        /// The reference asked for; `None` when the whole index was needed.
        tid: Option<usize>,
    },
}

impl Error {
    /// The index file the error is about.
    pub fn name(&self) -> &str {
        match self {
            Error::Io { name, .. }
            | Error::Decompress { name, .. }
            | Error::TooLarge { name, .. }
            | Error::BadMagic { name, .. }
            | Error::Truncated { name, .. }
            | Error::Invalid { name, .. }
            | Error::NotLoaded { name, .. } => name,
        }
    }
}

fn where_(offset: u64, compressed: bool) -> String {
    if compressed {
        format!("at byte {offset} of the decompressed index stream")
    } else {
        format!("at byte {offset}")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { name, source } => write!(f, "{name}: cannot read index: {source}"),
            Error::Decompress {
                name,
                offset,
                source,
            } => write!(
                f,
                "{name}: cannot decompress index after {offset} decompressed bytes: {source}"
            ),
            Error::TooLarge { name, limit } => write!(
                f,
                "{name}: index (decompressed) is larger than {limit} bytes; refusing to load it"
            ),
            Error::BadMagic { name, found } => write!(
                f,
                "{name}: not a BAI or CSI index (magic {}, expected BAI\\1 or CSI\\1) at byte 0",
                escape(found)
            ),
            Error::Truncated {
                name,
                offset,
                what,
                compressed,
            } => write!(
                f,
                "{name}: index truncated: {what} missing {}",
                where_(*offset, *compressed)
            ),
            Error::Invalid {
                name,
                offset,
                message,
                compressed,
            } => write!(
                f,
                "{name}: invalid index {}: {message}",
                where_(*offset, *compressed)
            ),
            Error::NotLoaded {
                name,
                tid: Some(tid),
            } => write!(
                f,
                "{name}: reference {tid} was not loaded from the index (a partial load skipped it)"
            ),
            Error::NotLoaded { name, tid: None } => write!(
                f,
                "{name}: the whole index is needed, but only part of it was loaded"
            ),
        }
    }
}

fn escape(bytes: &[u8]) -> String {
    bytes
        .iter()
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect()
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::Decompress { source, .. } => Some(source),
            _ => None,
        }
    }
}
