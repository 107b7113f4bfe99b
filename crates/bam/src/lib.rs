//! The BAM facade: open a local or remote BAM file, read its header and records, query regions
//! through its index, format records as SAM text identical to `samtools view`, and write BAM,
//! SAM or BGZF SAM ([`Writer`]) with the `@PG` line samtools would add ([`pg`]) and an index
//! built on the way.
//!
//! ```no_run
//! use bam::{Reader, OpenOptions, Regions};
//! use region::{Position, Region};
//! let mut reader = Reader::open("https://example.org/x.bam", &OpenOptions::default())?;
//! reader.select_index(None)?; // x.bam.csi, x.csi, x.bam.bai, x.bai
//! let tid = reader.header().tid("chr1").expect("chr1 is in the header");
//! let (beg, end) = (Position::new(10_000), Position::new(20_000));
//! let target = Region::Ref { tid, beg, end };
//! let mut query = reader.query(Regions::Targets(vec![target]))?;
//! let mut line = Vec::new();
//! while let Some(record) = query.next_record()? {
//!     line.clear();
//!     bam::write_sam(&record, query.header(), &mut line).expect("valid aux data");
//!     print!("{}", String::from_utf8_lossy(&line));
//! }
//! # Ok::<(), bam::Error>(())
//! ```
//!
//! Copying a region into an indexed BAM file: `examples/region_to_bam.rs`.
//!
//! [`RecordReader`] is the record reader under [`Reader`], generic over its byte source (a
//! `std::fs::File`, bytes in memory, any [`bgzf::Source`]), with the index passed in:
//! `RecordReader::new(source)?.query(&index, regions)`. [`Reader`] adds opening paths and URLs,
//! the persistent cache of remote headers and indexes, and finding the index.
//!
//! samtools' command semantics (view's selection and record edits, `-P`, flagstat, idxstats,
//! quickcheck) are in the `samtools` crate above this one.
//!
//! Layers below: [`index`] (chunks and spans), [`bgzf`] (blocks and bounded seeks), [`hfile`]
//! (byte sources), and the `region` crate's positions and regions. They are not re-exported:
//! an application that names one of their items depends on that crate itself.

#![warn(missing_docs)]

pub mod aux;
pub mod cached;
pub mod cigar;
mod count_check;
mod encode;
pub mod error;
mod flags;
pub mod format;
pub mod header;
mod header_lines;
mod index_source;
mod lengths;
mod location;
mod opened;
pub mod pg;
mod query;
mod reader;
pub mod record;
mod record_reader;
pub mod sam;
pub mod writer;

pub use encode::EncodeError;
pub use error::{Error, HeaderError, RecordError};
pub use flags::Flags;
pub use header::{Header, Reference};
pub use index_source::IndexHint;
pub use query::{FetchPlan, Prepared, Query, Regions};
pub use reader::{Confirmed, OpenOptions, Reader};
pub use record::{Record, RecordRef, StoredCoordinates};
pub use record_reader::RecordReader;
pub use sam::{write_sam, SamWriteError, SamWriter};
pub use writer::{Finished, OutputFormat, Writer, WriterOptions};

/// The versions of the libraries under this crate that a user may need to know (for
/// `--version`).
#[derive(Debug, Clone)]
pub struct Versions {
    /// libcurl, as it reports itself at run time.
    pub libcurl: String,
    /// The libdeflate bundled with the `libdeflater` crate.
    pub libdeflate: &'static str,
}

/// See [`Versions`].
pub fn versions() -> Versions {
    Versions {
        libcurl: hfile::curl_version(),
        libdeflate: bgzf::LIBDEFLATE_VERSION,
    }
}

/// A shorthand for results whose error is [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
