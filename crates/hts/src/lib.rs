//! One library for applications: open a BAM or CRAM file (told apart by content) or a
//! tabix-indexed text file (VCF, BED, GFF, any preset), local, remote (`https://`, `s3://`,
//! `gs://`, through hfile) or standard input, find its index as htslib does, and query it by
//! region with the `region` crate's types. Alignment records come back as [`bam::Record`]s for
//! both formats, with the header as a [`bam::Header`].
//!
//! ```no_run
//! use region::{Position, Region};
//! let mut reader = hts::alignment::Reader::open("https://example.org/x.cram", &hts::Options::new())?;
//! let tid = reader.header().tid("chr1").expect("chr1 is in the header");
//! let chr1 = Region::Ref { tid, beg: Position::new(10_000), end: Position::new(20_000) };
//! let mut records = reader.query(&[chr1])?;
//! while let Some(record) = records.next_record()? {
//!     println!("{}", String::from_utf8_lossy(record.name()));
//! }
//! # Ok::<(), hts::Error>(())
//! ```
//!
//! The layers under it are not re-exported: an application that names `bam::Record` or
//! `region::Region` depends on those crates itself. The `cram_*` modules are the CRAM read
//! path's parts (opening through the cache, the `.crai` plan, the record layout) for a
//! program that drives them itself, as the `hts` command does.

#![warn(missing_docs)]

pub mod alignment;
mod cram_alignment;
pub mod cram_cache;
pub mod cram_input;
pub mod cram_layout;
pub mod cram_multi;
pub mod cram_open;
pub mod cram_refs;
pub mod cram_regions;
mod error;
mod options;
pub mod sniff;
pub mod variant;

pub use error::{Error, Result};
pub use options::Options;
