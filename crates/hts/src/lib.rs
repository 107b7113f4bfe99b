//! One library for applications: open a BAM or CRAM file (told apart by content) or a
//! tabix-indexed text file (VCF, BED, GFF, any preset), local, remote (`https://`, `s3://`,
//! `gs://`, through hfile) or standard input, find its index as htslib does, and query it by
//! region with the `region` crate's types. Alignment records come back as [`bam::Record`]s for
//! both formats, with the header as a [`bam::Header`].
//!
//! The examples run against the workspace's test server (`testkit::Server`) serving
//! `fixtures/`: `url(..)` is a URL on it.
//!
//! A remote CRAM region, with a remote FASTA, counted:
//!
//! ```
//! # let server = testkit::Server::start(&testkit::workspace_root().join("fixtures")).unwrap();
//! # let url = |path: &str| server.url(path);
//! let options = hts::Options::new().reference(url("cram/ref.fa"));
//! let mut reader = hts::alignment::Reader::open(&url("cram/aligned-3.0.cram"), &options)?;
//! let region = region::parse_region("ref1:300-400", reader.header())?;
//! let mut records = reader.query(&[region])?;
//! let mut n = 0;
//! while let Some(record) = records.next_record()? {
//!     n += u64::from(!record.flags().is_unmapped());
//! }
//! println!("{n} mapped records");
//! # assert!(n > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A remote BAM region as SAM text (what `samtools view URL REGION` prints):
//!
//! ```
//! # let server = testkit::Server::start(&testkit::workspace_root().join("fixtures")).unwrap();
//! # let url = |path: &str| server.url(path);
//! let options = hts::Options::new();
//! let mut reader = hts::alignment::Reader::open(&url("conformance/data/rand.bam"), &options)?;
//! let region = region::parse_region("chr1:10000-10500", reader.header())?;
//! let header = reader.header().clone();
//! let mut sam = Vec::new();
//! for record in reader.query(&[region])? {
//!     bam::write_sam(&record?, &header, &mut sam)?;
//! }
//! print!("{}", String::from_utf8_lossy(&sam));
//! # let golden = testkit::workspace_root().join("fixtures/conformance/expected/rand_region.out");
//! # assert_eq!(sam, std::fs::read(golden)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A remote VCF region, on the same options:
//!
//! ```
//! # let server = testkit::Server::start(&testkit::workspace_root().join("fixtures")).unwrap();
//! # let url = |path: &str| server.url(path);
//! let options = hts::Options::new();
//! let mut vcf = hts::variant::Reader::open(&url("tabix/small.vcf.gz"), &options)?;
//! let mut lines = vcf.query_str("chr1:1,000-20,100")?;
//! while let Some(line) = lines.next_line()? {
//!     println!("{}", String::from_utf8_lossy(line));
//! }
//! # Ok::<(), hts::Error>(())
//! ```
//!
//! The layers under it are not re-exported: an application that names `bam::Record` or
//! `region::Region` depends on those crates itself. The `cram_*` modules are the CRAM read
//! path's parts (opening through the cache, the `.crai` plan, the record layout) for a
//! program that drives them itself; the `hts` command reads both formats through
//! `alignment::Reader`, as samtools' commands (the `samtools` crate) do.

#![warn(missing_docs)]

pub mod alignment;
pub mod cohort;
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
