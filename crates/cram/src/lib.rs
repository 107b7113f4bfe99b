//! CRAM reading: the file definition, ITF8/LTF8 integers, container headers and blocks with
//! their codecs, every length checked against the bytes that hold it; records read from slices
//! and made whole (sequence against a reference, CIGAR, mates, names, MD/NM) as htslib does.
//!
//! # Examples
//!
//! ```no_run
//! let file = std::fs::File::open("sample.cram")?;
//! let reference = cram::Fasta::open("ref.fa".as_ref())?;
//! let mut reader = cram::reader::Reader::open(file, "sample.cram", Some(reference))?;
//! while let Some(records) = reader.next_container()? {
//!     for r in records {
//!         println!("{} {} {}", String::from_utf8_lossy(&r.name), r.ref_id, r.pos);
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod alignment;
pub mod block;
mod codec;
pub mod compression;
pub mod container;
pub mod crai;
pub mod encoding;
/// The crate's error type.
pub mod error;
pub mod fasta;
pub mod file;
pub mod header;
pub mod input;
mod mates;
pub mod md5;
pub mod multi;
mod names;
pub mod num;
pub mod pass;
pub mod reader;
pub mod rebuild;
pub mod record;
pub mod refpath;
mod region_range;
pub mod remote;
pub mod series;
pub mod slice;

pub use alignment::Alignment;
pub use block::{Block, ContentType, Method};
pub use compression::CompressionHeader;
pub use container::ContainerHeader;
pub use encoding::Encoding;
pub use error::Error;
pub use fasta::Fasta;
pub use file::{FileDefinition, Version};
pub use header::SamHeader;
pub use reader::Reader;
pub use slice::SliceHeader;
