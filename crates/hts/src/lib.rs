//! One library for applications: open a BAM or CRAM file (told apart by content) or a
//! tabix-indexed text file (VCF, BED, GFF, any preset), local, remote (`https://`, `s3://`,
//! `gs://`, through hfile) or standard input, find its index as htslib does, and query it by
//! region with the `region` crate's types. Alignment records come back as [`bam::Record`]s for
//! both formats, with the header as a [`bam::Header`].
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let options = hts::Options::new().reference("https://host/GRCh38.fa.gz");
//! let mut reader = hts::alignment::Reader::open("https://host/x.cram", &options)?;
//! let region = region::parse_region("chr1:1,000,000-1,100,000", reader.header())?;
//! let mut records = reader.query(&[region])?;
//! let mut n = 0;
//! while let Some(record) = records.next_record()? {
//!     n += u64::from(!record.flags().is_unmapped());
//! }
//! println!("{n} mapped records");
//! # Ok(())
//! # }
//! ```
//!
//! A VCF region, remote or local, on the same options:
//!
//! ```no_run
//! let mut vcf = hts::variant::Reader::open("https://host/calls.vcf.gz", &hts::Options::new())?;
//! let mut lines = vcf.query_str("chr1:10,000-20,000")?;
//! while let Some(line) = lines.next_line()? {
//!     println!("{}", String::from_utf8_lossy(line));
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
