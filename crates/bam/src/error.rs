//! The one error type of the `bam` crate, and the detailed causes it wraps.

use std::fmt;
use std::io;

use bgzf::VirtualOffset;

/// Errors from reading a BAM file. Every variant names the file (or URL) and says where in it the
/// problem was found.
#[derive(Debug)]
pub enum Error {
    /// Reading the decompressed stream failed at byte `offset` of that stream.
    Io {
        /// The file, as shown in messages.
        name: String,
        /// Where in the file.
        offset: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// The BAM header is invalid; `offset` is the byte of the decompressed stream where the
    /// offending field starts.
    Header {
        /// The file, as shown in messages.
        name: String,
        /// Where in the file.
        offset: u64,
        /// What is wrong.
        kind: HeaderError,
    },
    /// An alignment record is invalid; `offset` is the virtual offset of its `block_size`.
    Record {
        /// The file, as shown in messages.
        name: String,
        /// Where in the file.
        offset: VirtualOffset,
        /// What is wrong.
        kind: RecordError,
    },
    /// A record's `block_size` promised more bytes than the file holds.
    TruncatedRecord {
        /// The file, as shown in messages.
        name: String,
        /// Where in the file.
        offset: VirtualOffset,
        /// The record's `block_size`.
        block_size: usize,
        /// The underlying error.
        source: bgzf::Error,
    },
    /// The BGZF layer failed (it names the file and the block's offset).
    Bgzf(bgzf::Error),
    /// The byte source failed (it names the file or URL and the offset).
    Transport(hfile::Error),
    /// The index could not be loaded or is invalid.
    Index {
        /// The file, as shown in messages.
        name: String,
        /// The underlying error.
        source: index::Error,
    },
    /// A region query was asked for but there is no index.
    NoIndex {
        /// The file, as shown in messages.
        name: String,
    },
    /// The index names data at `offset`, at or past the end of the file (`size` bytes): the
    /// index is another file's, or the file is truncated. Nothing was output.
    IndexPastEnd {
        /// The file, as shown in messages.
        name: String,
        /// Where in the file.
        offset: VirtualOffset,
        /// The size of the file.
        size: u64,
    },
    /// A cached copy of part of the file (header, index prefix) no longer describes it: the
    /// entry was dropped; reading again without it gives the right answer. Nothing was output.
    Changed {
        /// The file, as shown in messages.
        name: String,
        /// Why.
        reason: String,
    },
    /// Writing the output failed.
    Write {
        /// The file, as shown in messages.
        name: String,
        /// The underlying error.
        source: io::Error,
    },
    /// Something cannot be written as asked (a record in BAM, a record into the index, an
    /// index of uncompressed SAM): `what` it is and why.
    Unwritable {
        /// The file, as shown in messages.
        name: String,
        /// What cannot be written.
        what: String,
        /// Why.
        reason: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The input is not BAM (SAM, CRAM, VCF, an index, ...); `format` names what it is.
    NotBam {
        /// The file, as shown in messages.
        name: String,
        /// What the input is.
        format: String,
    },
    /// A query htslib refuses to start (its words in `reason`).
    Query {
        /// The file, as shown in messages.
        name: String,
        /// Why.
        reason: String,
    },
    /// The index of a pre-signed URL cannot be derived from it and was not given.
    IndexNotGiven {
        /// The file, as shown in messages.
        name: String,
    },
}

impl Error {
    /// The file or URL the error is about.
    pub fn name(&self) -> &str {
        match self {
            Error::Io { name, .. }
            | Error::Header { name, .. }
            | Error::Record { name, .. }
            | Error::TruncatedRecord { name, .. }
            | Error::Index { name, .. }
            | Error::NoIndex { name }
            | Error::IndexPastEnd { name, .. }
            | Error::Changed { name, .. }
            | Error::Write { name, .. }
            | Error::Unwritable { name, .. }
            | Error::NotBam { name, .. }
            | Error::Query { name, .. } => name,
            Error::IndexNotGiven { name } => name,
            Error::Bgzf(e) => e.name(),
            Error::Transport(e) => e.name(),
        }
    }

    /// True when writing failed because the reader of the output went away (a closed pipe).
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Write { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }

    /// An I/O error from a reader of the decompressed stream at byte `offset`: the BGZF or
    /// transport error inside it is kept as it is (it already names the file and offset).
    pub fn from_io(source: io::Error, name: &str, offset: u64) -> Error {
        let is_ours = source
            .get_ref()
            .is_some_and(|e| e.is::<bgzf::Error>() || e.is::<hfile::Error>());
        if is_ours {
            let kind = source.kind();
            if let Some(inner) = source.into_inner() {
                return match inner.downcast::<bgzf::Error>() {
                    Ok(e) => Error::Bgzf(*e),
                    Err(inner) => match inner.downcast::<hfile::Error>() {
                        Ok(e) => Error::Transport(*e),
                        Err(other) => Error::Io {
                            name: name.to_string(),
                            offset,
                            source: io::Error::new(kind, other),
                        },
                    },
                };
            }
            return Error::Io {
                name: name.to_string(),
                offset,
                source: io::Error::from(kind),
            };
        }
        Error::Io {
            name: name.to_string(),
            offset,
            source,
        }
    }

    /// A writer's refusal of a record whose aux data is corrupt, as an error about the record in
    /// its input file (`name`, the record's virtual offset `at`); other errors unchanged.
    pub fn about_record(self, name: &str, at: VirtualOffset) -> Error {
        let Error::Unwritable {
            name: output,
            what,
            reason,
        } = self
        else {
            return self;
        };
        match reason.downcast::<RecordError>() {
            Ok(kind) if matches!(*kind, RecordError::CorruptAux { .. }) => Error::Record {
                name: name.to_string(),
                offset: at,
                kind: *kind,
            },
            Ok(kind) => Error::Unwritable {
                name: output,
                what,
                reason: kind,
            },
            Err(reason) => Error::Unwritable {
                name: output,
                what,
                reason,
            },
        }
    }

    /// True when a cached part of the file turned out stale ([`Error::Changed`]): open it again.
    pub fn is_changed(&self) -> bool {
        matches!(self, Error::Changed { .. })
    }

    /// True when the server does not tell the file's size (it can still be read to its end).
    pub fn is_size_unknown(&self) -> bool {
        match self {
            Error::Transport(e) => e.is_size_unknown(),
            Error::Bgzf(bgzf::Error::Io(e)) => e.is_size_unknown(),
            _ => false,
        }
    }

    /// True when a file or URL does not exist (used to try the next index name).
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Transport(e) => e.is_not_found(),
            Error::Bgzf(bgzf::Error::Io(e)) => e.is_not_found(),
            _ => false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io {
                name,
                offset,
                source,
            } => write!(
                f,
                "{name}: read error at byte {offset} of the BAM stream: {source}"
            ),
            Error::Header { name, offset, kind } => write!(
                f,
                "{name}: invalid BAM header at byte {offset} of the BAM stream: {kind}"
            ),
            Error::Record { name, offset, kind } => write!(
                f,
                "{name}: invalid BAM record at virtual offset {offset}: {kind}"
            ),
            Error::TruncatedRecord {
                name,
                offset,
                block_size,
                source,
            } => match source {
                bgzf::Error::UnexpectedEof { .. } => write!(
                    f,
                    "{name}: truncated BAM record at virtual offset {offset}: {block_size} bytes \
                     announced, the data ends first"
                ),
                // The BGZF error names the file and the block itself.
                other => write!(
                    f,
                    "{other} (reading the BAM record at virtual offset {offset}, {block_size} \
                     bytes announced)"
                ),
            },
            Error::Bgzf(e) => write!(f, "{e}"),
            Error::Transport(e) => write!(f, "{e}"),
            Error::Index { name, source } => write!(f, "{name}: cannot load index: {source}"),
            Error::NoIndex { name } => write!(
                f,
                "{name}: no index found (looked for {}); region queries need an index",
                hfile::derived_names(name, &crate::index_source::INDEX_EXTENSIONS).join(", ")
            ),
            Error::IndexPastEnd { name, offset, size } => write!(
                f,
                "{name}: the index points to virtual offset {offset}, past the end of the file \
                 ({size} bytes): the index is not this file's, or the file is truncated"
            ),
            Error::Changed { name, reason } => {
                write!(f, "{name}: cached copy dropped: {reason}")
            }
            Error::Write { name, source } => write!(f, "{name}: write failed: {source}"),
            Error::Unwritable { name, what, reason } => {
                write!(f, "{name}: cannot write {what}: {reason}")
            }
            Error::NotBam { name, format } => write!(
                f,
                "{name}: hts reads BAM and CRAM; this is {format} (by its bytes from byte 0)"
            ),
            Error::Query { name, reason } => write!(f, "{name}: {reason}"),
            Error::IndexNotGiven { name } => write!(
                f,
                "{name}: the index of a pre-signed URL cannot be derived from it (its signature \
                 covers the path): give the index's own URL with -X, or as URL##idx##INDEX_URL"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Header { kind, .. } => Some(kind),
            Error::Record { kind, .. } => Some(kind),
            Error::TruncatedRecord { source, .. } => Some(source),
            Error::Bgzf(e) => Some(e),
            Error::Transport(e) => Some(e),
            Error::Index { source, .. } => Some(source),
            Error::Write { source, .. } => Some(source),
            Error::Unwritable { reason, .. } => Some(reason.as_ref()),
            Error::NoIndex { .. }
            | Error::IndexPastEnd { .. }
            | Error::NotBam { .. }
            | Error::Changed { .. }
            | Error::Query { .. } => None,
            Error::IndexNotGiven { .. } => None,
        }
    }
}

/// Bytes from a file (a read name, say) for a one-line message: invalid UTF-8 replaced, and
/// control characters (a newline would split the message) escaped as `\n`, `\t`, `\u{1b}`.
pub(crate) fn printable(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if !text.chars().any(char::is_control) {
        return text.into_owned();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// What is wrong with a BAM header (the causes htslib's `bam_hdr_read` and `sam_hdr_sanitise`
/// reject).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderError {
    /// The stream does not start with `BAM\1`.
    BadMagic,
    /// The stream ended inside the named header field.
    Truncated {
        /// The field.
        field: &'static str,
    },
    /// `l_text` is negative when read as a signed 32-bit integer.
    NegativeTextLength(i32),
    /// `n_ref` is negative.
    NegativeRefCount(i32),
    /// A reference's `l_name` is zero or negative (it must count the name's NUL).
    BadNameLength {
        /// The reference's place in the header (0-based).
        index: usize,
        /// Its `l_name`.
        l_name: i32,
    },
    /// A header text line (1-based) does not start with `@` (htslib: "Malformed SAM header").
    MalformedText {
        /// The line (1-based).
        line: u32,
    },
    /// The memory for `len` bytes of the named field could not be had (htslib: "Out of
    /// memory").
    OutOfMemory {
        /// The field.
        field: &'static str,
        /// The bytes asked for.
        len: usize,
    },
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::BadMagic => write!(f, "not a BAM file (magic is not BAM\\1)"),
            HeaderError::Truncated { field } => write!(f, "truncated BAM header (in {field})"),
            HeaderError::NegativeTextLength(n) => write!(f, "header text length {n} is negative"),
            HeaderError::NegativeRefCount(n) => {
                write!(f, "reference count {n} is negative")
            }
            HeaderError::BadNameLength { index, l_name } => write!(
                f,
                "reference #{index} has name length {l_name} (must be at least 1)"
            ),
            HeaderError::MalformedText { line } => {
                write!(f, "malformed SAM header text at line {line}")
            }
            HeaderError::OutOfMemory { field, len } => {
                write!(f, "out of memory for the {len} bytes of the {field}")
            }
        }
    }
}

impl std::error::Error for HeaderError {}

/// What is wrong with one alignment record (htslib's `bam_read1` checks, the reference-ID range
/// check of `sam_read1`, and the aux checks of `sam_format1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// `block_size` is below the 32 bytes of fixed fields.
    TooShort {
        /// The record's `block_size`.
        block_size: u32,
    },
    /// `l_read_name` is 0.
    EmptyReadName,
    /// `l_seq` is negative.
    NegativeSeqLength(i32),
    /// The read name, CIGAR, SEQ and QUAL together need more bytes than the record holds.
    FieldsPastEnd {
        /// Bytes the fields need.
        needed: u64,
        /// Bytes the record holds.
        available: u64,
    },
    /// `refID` or `next_refID` is outside `-1..n_ref`.
    RefIdOutOfRange {
        /// The reference id read.
        ref_id: i32,
        /// The references the header has.
        n_ref: usize,
    },
    /// The CIGAR's query length differs from `l_seq` (htslib: "CIGAR and query sequence lengths
    /// differ").
    CigarSeqMismatch {
        /// The read name.
        read_name: String,
        /// The CIGAR's query length.
        cigar_len: u64,
        /// `l_seq`.
        seq_len: u64,
    },
    /// The aux data is corrupt (unknown type, or a value running past the record); `offset` is
    /// the byte of the aux field within the record data.
    CorruptAux {
        /// The read name.
        read_name: String,
        /// Where in the file.
        offset: usize,
    },
    /// The memory for a record of `block_size` bytes could not be had.
    OutOfMemory {
        /// The record's `block_size`.
        block_size: usize,
    },
    /// [`crate::Record::set_body`] was given parts that do not make a record: more CIGAR
    /// operations than BAM's 16-bit count holds, or packed bases that are not
    /// `ceil(qual / 2)` bytes.
    BodyLengths {
        /// CIGAR operations given.
        ops: usize,
        /// Packed base bytes given.
        packed: usize,
        /// Quality values given.
        qual: usize,
    },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::TooShort { block_size } => {
                write!(f, "block_size {block_size} is below the 32 fixed bytes")
            }
            RecordError::EmptyReadName => write!(f, "l_read_name is 0"),
            RecordError::NegativeSeqLength(n) => write!(f, "l_seq {n} is negative"),
            RecordError::FieldsPastEnd { needed, available } => write!(
                f,
                "read name, CIGAR, SEQ and QUAL need {needed} bytes but the record has {available}"
            ),
            RecordError::RefIdOutOfRange { ref_id, n_ref } => write!(
                f,
                "reference id {ref_id} is out of range (the header has {n_ref} references)"
            ),
            RecordError::CigarSeqMismatch {
                read_name,
                cigar_len,
                seq_len,
            } => write!(
                f,
                "CIGAR and query sequence lengths differ for {read_name} ({cigar_len} vs {seq_len})"
            ),
            RecordError::CorruptAux { read_name, offset } => write!(
                f,
                "corrupted aux data for read {read_name} (at byte {offset} of the record)"
            ),
            RecordError::OutOfMemory { block_size } => {
                write!(f, "out of memory for a record of {block_size} bytes")
            }
            RecordError::BodyLengths { ops, packed, qual } => write!(
                f,
                "a record body of {ops} CIGAR operations, {packed} packed SEQ bytes and {qual} \
                 QUAL bytes is not valid BAM"
            ),
        }
    }
}

impl std::error::Error for RecordError {}

impl From<bgzf::Error> for Error {
    fn from(e: bgzf::Error) -> Error {
        Error::Bgzf(e)
    }
}

impl From<hfile::Error> for Error {
    fn from(e: hfile::Error) -> Error {
        Error::Transport(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_stay_on_one_line() {
        assert_eq!(printable(b"read1"), "read1");
        assert_eq!(printable(b"r\nx\t\x1b\xff"), "r\\nx\\t\\u{1b}\u{fffd}");
        let e = RecordError::CorruptAux {
            read_name: printable(b"two\nlines"),
            offset: 3,
        };
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}
