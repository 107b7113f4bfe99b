//! Why bgzip's work on a file failed ([`crate::Error::Bgzip`]): each displays as bgzip
//! 1.16's message (after its `[bgzip] `), naming the file or offset it is about.

use std::fmt;
use std::io;

/// A refusal or failure of [`crate::bgzip::run`].
#[derive(Debug)]
pub enum Failure {
    /// `-b` and `-s` name no range: the start and end they give (-1: no end).
    IllegalRegion(i64, i64),
    /// `-l` outside -1 to 9.
    Level(i64),
    /// The input file cannot be opened.
    Open(String, io::Error),
    /// The compressed file to read cannot be opened.
    OpenData(String, hfile::Error),
    /// `-i` or `-g` on standard input without `-I`.
    NoIndexNameWriting,
    /// `-r` on standard input without `-I`.
    NoIndexNameReading,
    /// `-i` with `-g`.
    IndexAndRebgzip,
    /// The `.gzi` to use cannot be loaded (`named`: the name bgzip's `-g` message gives).
    LoadIndex {
        /// The name in the message, when it is not the failing index's own.
        named: Option<String>,
        /// Why.
        source: Box<crate::Error>,
    },
    /// The output file exists (`None`) or cannot be created.
    Create(String, Option<io::Error>),
    /// Writing the compressed output failed.
    Write(io::Error),
    /// Writing `n` bytes of decompressed output failed.
    WriteBytes(usize, io::Error),
    /// Flushing the decompressed output failed.
    Flush(io::Error),
    /// Reading the data failed.
    Read(String, io::Error),
    /// The input file cannot be removed after its output was written.
    Remove(String, io::Error),
    /// Standard input is not a file, and the work needs to seek in it.
    StdinNotFile,
    /// `-r` on data that is not BGZF (with the error that showed it, if reading did).
    NotBgzf(Option<Box<crate::Error>>),
    /// `-d` on a name without an extension.
    NoExtension(String),
    /// `-d` on a name whose extension is not bgzip's: the extension and the output name.
    UnknownExtension(String, String),
    /// `-b` on standard input without `-I`.
    SeekNeedsIndex,
    /// `-d` on a file that is not compressed.
    NotCompressed(String),
    /// `-b`'s uncompressed offset cannot be reached.
    Seek(u64),
    /// `-b`'s offset is at the end of the data and bytes are wanted.
    SeekBeyond(u64),
    /// Setting up the writer's threads failed.
    Threads(io::Error),
}

/// The C library's text for an I/O error (`strerror`), without Rust's "(os error N)".
fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    s.split(" (os error").next().unwrap_or(&s).to_string()
}

const NOT_BGZF: &str = "Is the file gzipped or bgzipped? The latter is required for indexing.";

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::IllegalRegion(b, e) => write!(f, "Illegal region: [{b}, {e}]"),
            Failure::Level(l) => write!(f, "Invalid compress-level: {l}"),
            Failure::Open(n, e) => write!(f, "{}: {n}", strerror(e)),
            Failure::OpenData(n, e) => write!(f, "Could not open {n}: {e}"),
            Failure::NoIndexNameWriting => {
                write!(f, "Index file name expected when writing to stdout")
            }
            Failure::NoIndexNameReading => {
                write!(f, "Index file name expected when reading from stdin")
            }
            Failure::IndexAndRebgzip => {
                write!(f, "Can't produce a index and rebgzip simultaneously")
            }
            Failure::LoadIndex {
                named: Some(n),
                source,
            } => write!(f, "Could not load index: {n} ({source})"),
            Failure::LoadIndex { source, .. } => write!(f, "Could not load index: {source}"),
            Failure::Create(n, None) => write!(f, "can't create {n}: File exists"),
            Failure::Create(n, Some(e)) => write!(f, "can't create {n}: {}", strerror(e)),
            Failure::Write(e) => write!(f, "write failed: {e}"),
            Failure::WriteBytes(n, e) => write!(f, "Could not write {n} bytes: {e}"),
            Failure::Flush(e) => write!(f, "Could not write: {e}"),
            Failure::Read(n, e) => write!(f, "{n}: {e}"),
            Failure::Remove(n, e) => write!(f, "cannot remove {n}: {e}"),
            Failure::StdinNotFile => {
                write!(f, "standard input must be a file to index or seek in")
            }
            Failure::NotBgzf(None) => write!(f, "{NOT_BGZF}"),
            Failure::NotBgzf(Some(e)) => write!(f, "{e}\n{NOT_BGZF}"),
            Failure::NoExtension(n) => {
                write!(f, "can't remove an extension from {n} -- please rename")
            }
            Failure::UnknownExtension(ext, n) => write!(
                f,
                "unknown extension .{ext} -- declining to decompress to {n}"
            ),
            Failure::SeekNeedsIndex => write!(
                f,
                "The -b option requires -I when reading from stdin (and stdin must be seekable)"
            ),
            Failure::NotCompressed(n) => write!(f, "{n}: not a compressed file -- ignored"),
            Failure::Seek(at) => write!(f, "Could not seek to {at}-th (uncompressd) byte"),
            Failure::SeekBeyond(at) => {
                write!(f, "BGZF block offset set beyond the data at {at}")
            }
            Failure::Threads(e) => write!(f, "{e}"),
        }
    }
}

impl From<Failure> for crate::Error {
    fn from(f: Failure) -> crate::Error {
        crate::Error::Bgzip(Box::new(f))
    }
}
