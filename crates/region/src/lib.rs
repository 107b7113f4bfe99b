//! Genomic regions as htslib reads them, once for every format: reference ids and 0-based
//! positions ([`RefId`], [`Position`], [`Interval`]); the region of a query ([`Region`]: an
//! interval, `.` or `*`) resolved against a list of names ([`Names`], which the BAM and CRAM
//! headers and a tabix index's sequences implement); htslib's region grammar and decimal rules
//! ([`parse_region`], [`parse_decimal`], [`parse_reg`]) with the messages htslib and samtools
//! print ([`RegionError`]); region sets merged as samtools merges them ([`RegionSet`]); and
//! where htslib's multi-region iterator stands among them ([`MultiCursor`]).
//!
//! The crate depends on no other crate of the workspace: the formats (`bam`, `cram`, `tabix`)
//! and the commands above them all speak it.
//!
//! # Examples
//!
//! ```
//! use region::{parse_region, Position, RefId, Region};
//!
//! let names: &[&str] = &["chr1", "chr2"];
//! let region = parse_region("chr2:10,001-20k", names)?;
//! assert_eq!(
//!     region,
//!     Region::Ref { tid: RefId::new(1), beg: Position::new(10_000), end: Position::new(20_000) }
//! );
//! # Ok::<(), region::RegionError>(())
//! ```

#![warn(missing_docs)]

mod decimal;
mod grammar;
mod multi;
mod names;
mod position;
mod reg;
mod region;
mod set;

pub use decimal::{parse_decimal, strtol, Decimal};
pub use grammar::{
    invalid_region_warning, parse_region, parse_region_with, ParseFlags, RegionError,
};
pub use multi::{MultiCursor, RegList};
pub use names::{distinct_references, Names};
pub use position::{Interval, Position, RefId};
pub use reg::{parse_reg, ParsedRegion};
pub use region::Region;
pub use set::{NamedIntervals, RefIntervals, RegionList, RegionSet};
