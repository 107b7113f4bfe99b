#![warn(missing_docs)]
//! samtools' command semantics, above the `bam` format library: what `samtools view` selects
//! ([`filter`]: expressions, flags, tags, read groups, names, BED targets, subsampling) and how
//! it edits what it prints ([`edit`]), `view -P` ([`pairs`]), and the `flagstat`, `idxstats` and
//! `quickcheck` commands, each on a file named, BAM or CRAM alike (the facade `hts` tells which,
//! and reads CRAM). The `hts` command line is a thin layer over this crate; a Rust application
//! can use it the same way.
//!
//! # Examples
//!
//! ```no_run
//! use bam::{OpenOptions, Reader};
//! use samtools::filter::expr::Expression;
//! use samtools::filter::Selection;
//!
//! let mut reader = Reader::open("x.bam", &OpenOptions::default())?;
//! let header = reader.header().clone();
//! let mut selection = Selection {
//!     expression: Some(Expression::parse("mapq >= 30 && !flag.dup").expect("a valid expression")),
//!     ..Selection::default()
//! };
//! let mut kept = 0;
//! let mut records = reader.records()?;
//! while let Some(mut record) = records.next_record()? {
//!     kept += u64::from(selection.select(&mut record, &header));
//! }
//! println!("{kept}");
//! # Ok::<(), bam::Error>(())
//! ```

pub mod edit;
pub mod filter;
pub mod flagstat;
pub mod idxstats;
pub mod numbers;
pub mod pairs;
pub mod quickcheck;
pub mod view;
mod warning;

pub use warning::Warning;
