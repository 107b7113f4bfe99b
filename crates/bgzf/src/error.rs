use std::fmt;
use std::io;

use crate::VirtualOffset;

/// Errors from reading or writing BGZF data.
///
/// Format errors name the file and the compressed offset of the block they were found in, so a
/// message is useful on its own.
#[derive(Debug)]
pub enum Error {
    /// The byte source failed (already names the file and offset).
    Io(hfile::Error),
    /// A block does not start with the gzip magic bytes `1f 8b`.
    BadMagic {
        /// The file (path or URL) it is about.
        name: String,
        /// The compressed offset of the block.
        offset: u64,
    },
    /// A block's gzip header is not a BGZF header (`reason` says why).
    BadHeader {
        /// The file (path or URL) it is about.
        name: String,
        /// The compressed offset of the block.
        offset: u64,
        /// Why.
        reason: String,
    },
    /// The `BC` subfield gives a block size too small to hold the header and trailer.
    BadBlockSize {
        /// The file (path or URL) it is about.
        name: String,
        /// The compressed offset of the block.
        offset: u64,
        /// The block size its header gives.
        block_size: usize,
        /// The fewest bytes a block can take (header and trailer).
        minimum: usize,
    },
    /// The file ends inside a block: `available` of the `needed` bytes are there.
    TruncatedBlock {
        /// The file (path or URL) it is about.
        name: String,
        /// The compressed offset of the block.
        offset: u64,
        /// Bytes the block needs.
        needed: usize,
        /// Bytes that are there.
        available: usize,
    },
    /// The deflate data of a block does not inflate.
    Inflate {
        /// The file (path or URL) it is about.
        name: String,
        /// The compressed offset of the block.
        offset: u64,
        /// Why.
        reason: &'static str,
    },
    /// The CRC32 of the inflated data differs from the one stored in the block.
    CrcMismatch {
        /// The file (path or URL) it is about.
        name: String,
        /// The compressed offset of the block.
        offset: u64,
        /// The value stored in the block.
        stored: u32,
        /// The CRC32 of the inflated data.
        computed: u32,
    },
    /// The inflated length differs from the ISIZE stored in the block.
    IsizeMismatch {
        /// The file (path or URL) it is about.
        name: String,
        /// The compressed offset of the block.
        offset: u64,
        /// The value stored in the block.
        stored: u32,
        /// The length of the inflated data.
        inflated: usize,
    },
    /// The data ended after `got` of `wanted` bytes, reading from `at`.
    UnexpectedEof {
        /// The file (path or URL) it is about.
        name: String,
        /// The virtual offset the read started at.
        at: VirtualOffset,
        /// Bytes asked for.
        wanted: usize,
        /// Bytes read.
        got: usize,
    },
    /// A plain gzip stream failed to decompress (`offset`: the uncompressed bytes produced so far).
    Gzip {
        /// The file (path or URL) it is about.
        name: String,
        /// Uncompressed bytes produced before the failure.
        offset: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// A seek to `target` was asked of data that is not BGZF (plain gzip, or uncompressed),
    /// from compressed byte `since` on (0: the whole file; else where a gzip member that is not
    /// a BGZF block was met, after which htslib reads on as plain gzip).
    SeekUnsupported {
        /// The file (path or URL) it is about.
        name: String,
        /// The container found.
        format: crate::Format,
        /// The virtual offset asked for.
        target: VirtualOffset,
        /// The compressed offset from which seeking is impossible (0: the whole file).
        since: u64,
    },
    /// A seek named an in-block offset past the end of the block's data.
    SeekPastBlock {
        /// The file (path or URL) it is about.
        name: String,
        /// The virtual offset asked for.
        target: VirtualOffset,
        /// The length of the block's data.
        block_len: usize,
    },
    /// A compression level libdeflate does not know (valid: 0 to 12).
    InvalidLevel {
        /// The level asked for.
        level: u32,
    },
    /// A `.gzi` index cannot be read.
    IndexFile {
        /// The index file.
        name: String,
        /// Why.
        source: io::Error,
    },
    /// A `.gzi` index cannot be written.
    IndexWrite {
        /// The index file.
        name: String,
        /// Why.
        source: io::Error,
    },
    /// A `.gzi` index holds fewer bytes than its count of block starts needs.
    IndexTruncated {
        /// The index file.
        name: String,
        /// The count it gives.
        count: u64,
        /// Its length in bytes.
        len: u64,
    },
    /// bgzip's work on a file failed ([`crate::bgzip::run`]).
    Bgzip(Box<crate::bgzip::Failure>),
    /// A decoding thread stopped before returning the block at `offset`.
    Thread {
        /// The file (path or URL) it is about.
        name: String,
        /// The compressed offset of the block.
        offset: u64,
    },
}

impl Error {
    /// The file the error is about (empty for [`Error::InvalidLevel`]).
    pub fn name(&self) -> &str {
        match self {
            Error::Io(e) => e.name(),
            Error::BadMagic { name, .. }
            | Error::BadHeader { name, .. }
            | Error::BadBlockSize { name, .. }
            | Error::TruncatedBlock { name, .. }
            | Error::Inflate { name, .. }
            | Error::CrcMismatch { name, .. }
            | Error::IsizeMismatch { name, .. }
            | Error::UnexpectedEof { name, .. }
            | Error::Gzip { name, .. }
            | Error::SeekUnsupported { name, .. }
            | Error::SeekPastBlock { name, .. }
            | Error::IndexFile { name, .. }
            | Error::IndexWrite { name, .. }
            | Error::IndexTruncated { name, .. }
            | Error::Thread { name, .. } => name,
            Error::InvalidLevel { .. } | Error::Bgzip(_) => "",
        }
    }

    /// True when the data itself is damaged or not BGZF (as opposed to a failing transport).
    pub fn is_format_error(&self) -> bool {
        !matches!(
            self,
            Error::Io(_)
                | Error::SeekUnsupported { .. }
                | Error::InvalidLevel { .. }
                | Error::Thread { .. }
                | Error::IndexFile { .. }
                | Error::IndexWrite { .. }
                | Error::Bgzip(_)
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "{e}"),
            Error::UnexpectedEof {
                name,
                at,
                wanted,
                got,
            } => write!(
                f,
                "{name}: unexpected end of data at virtual offset {at}: got {got} of {wanted} bytes"
            ),
            Error::Gzip {
                name,
                offset,
                source,
            } => write!(
                f,
                "{name}: gzip decompression failed after {offset} uncompressed bytes: {source}"
            ),
            Error::SeekUnsupported {
                name,
                format,
                target,
                since: 0,
            } => write!(
                f,
                "{name}: cannot seek to virtual offset {target}: the file is {format}, not BGZF \
                 (random access needs BGZF)"
            ),
            Error::SeekUnsupported {
                name,
                format,
                target,
                since,
            } => write!(
                f,
                "{name}: cannot seek to virtual offset {target}: the data is {format} from byte \
                 {since} on (a gzip member without a BGZF header), and random access needs BGZF"
            ),
            Error::SeekPastBlock {
                name,
                target,
                block_len,
            } => write!(
                f,
                "{name}: cannot seek to virtual offset {target}: that block holds only \
                 {block_len} bytes"
            ),
            Error::InvalidLevel { level } => {
                write!(f, "invalid compression level {level} (valid: 0 to 12)")
            }
            Error::Thread { name, offset } => write!(
                f,
                "{name}: a decoding thread stopped before inflating the block at offset {offset}"
            ),
            Error::IndexFile { name, source } => write!(f, "{name}: {source}"),
            Error::IndexWrite { name, source } => {
                write!(f, "Could not write index to '{name}': {source}")
            }
            Error::IndexTruncated { name, .. } => {
                write!(f, "{name}: the index is shorter than its count says")
            }
            Error::Bgzip(e) => write!(f, "{e}"),
            block => block.fmt_block(f),
        }
    }
}

impl Error {
    /// The message of an error found in one block's bytes.
    fn fmt_block(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadMagic { name, offset } => write!(
                f,
                "{name}: invalid BGZF header at offset {offset}: no gzip magic bytes"
            ),
            Error::BadHeader {
                name,
                offset,
                reason,
            } => write!(
                f,
                "{name}: invalid BGZF header at offset {offset}: {reason}"
            ),
            Error::BadBlockSize {
                name,
                offset,
                block_size,
                minimum,
            } => write!(
                f,
                "{name}: invalid BGZF block at offset {offset}: block size {block_size} is below \
                 the {minimum} bytes its header and trailer take"
            ),
            Error::TruncatedBlock {
                name,
                offset,
                needed,
                available,
            } => write!(
                f,
                "{name}: truncated block at offset {offset}: the file ends {available} bytes \
                 into it, {needed} needed"
            ),
            Error::Inflate {
                name,
                offset,
                reason,
            } => write!(
                f,
                "{name}: inflate failed for the BGZF block at offset {offset}: {reason}"
            ),
            Error::CrcMismatch {
                name,
                offset,
                stored,
                computed,
            } => write!(
                f,
                "{name}: CRC32 checksum mismatch in the BGZF block at offset {offset}: stored \
                 {stored:08x}, data has {computed:08x}"
            ),
            Error::IsizeMismatch {
                name,
                offset,
                stored,
                inflated,
            } => write!(
                f,
                "{name}: length mismatch in the BGZF block at offset {offset}: ISIZE says \
                 {stored}, the data inflates to {inflated} bytes"
            ),
            other => write!(f, "{other:?}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Gzip { source, .. }
            | Error::IndexFile { source, .. }
            | Error::IndexWrite { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<hfile::Error> for Error {
    fn from(e: hfile::Error) -> Error {
        Error::Io(e)
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        match e {
            Error::Io(e) => io::Error::from(e),
            Error::UnexpectedEof { .. } | Error::TruncatedBlock { .. } => {
                io::Error::new(io::ErrorKind::UnexpectedEof, e)
            }
            Error::SeekUnsupported { .. } | Error::SeekPastBlock { .. } => {
                io::Error::new(io::ErrorKind::InvalidInput, e)
            }
            _ => io::Error::new(io::ErrorKind::InvalidData, e),
        }
    }
}
