//! The BAM facade: open a local or remote BAM file, read its header and records, query regions
//! through its index, and format records as SAM text identical to `samtools view`.
//!
//! ```no_run
//! use bam::{Reader, OpenOptions, Target};
//! let mut reader = Reader::open("https://example.org/x.bam", &OpenOptions::default())?;
//! reader.load_index(None)?; // x.bam.csi, else x.bam.bai
//! let tid = reader.header().tid("chr1").expect("chr1 is in the header");
//! let mut query = reader.query(Target::Ref { tid, beg: 10_000, end: 20_000 })?;
//! let mut line = Vec::new();
//! while let Some(record) = query.next_record()? {
//!     line.clear();
//!     bam::write_sam(&record, query.header(), &mut line).expect("valid aux data");
//!     print!("{}", String::from_utf8_lossy(&line));
//! }
//! # Ok::<(), bam::Error>(())
//! ```
//!
//! Layers below: [`index`] (chunks and spans), [`bgzf`] (blocks and bounded seeks), [`hfile`]
//! (byte sources). They are re-exported so an application needs only this crate.

pub mod aux;
pub mod cigar;
pub mod error;
pub mod header;
mod index_source;
mod query;
mod reader;
pub mod record;
pub mod region;
pub mod sam;

pub use bgzf;
pub use hfile;
pub use index;

pub use error::{Error, HeaderError, RecordError};
pub use header::{Header, Reference};
pub use index_source::{sibling, IndexHint};
pub use query::{FetchPlan, Query};
pub use reader::{OpenOptions, Reader};
pub use record::{Record, RecordRef};
pub use region::{parse_region, RegionError, Target};
pub use sam::{write_sam, SamWriteError, SamWriter};

/// A shorthand for results whose error is [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
