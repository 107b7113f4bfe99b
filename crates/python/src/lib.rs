//! The Rust half of the Python package `hts`: pysam's `AlignmentFile`, `AlignedSegment` and
//! `TabixFile` over this workspace's readers, with records decoded in batches on a thread of
//! their own (no GIL held) and Arrow tables handed over through the Arrow PyCapsule interface.
//!
//! The pieces that do not need Python are plain Rust, built and tested with the workspace:
//!
//! - [`alignments`]: the seam between the package and the format libraries: BAM or CRAM,
//!   told apart by content, through the `hts` facade (`hts::alignment::Reader`).
//! - [`variants`]: the same seam for tabix-indexed text (`tabix::Reader`).
//! - [`region`]: pysam's `fetch(contig, start, stop, region)` arguments as query targets.
//! - [`producer`]: a query run on its own thread, its output handed over in batches through a
//!   bounded channel, so Python threads wait for records without holding the GIL.
//! - [`arrow`]: records as Arrow record batches, with oxbow's column names.
//! - [`cohort`]: the same regions from many files (`hts.Cohort`): counts, one Arrow stream.
//!
//! The PyO3 bindings (`py`) are built only with the `python` feature, which maturin turns on
//! (`crates/python/pyproject.toml`); see `crates/python/README.md`.

#![warn(missing_docs)]

pub mod alignments;
pub mod arrow;
pub mod batches;
pub mod cohort;
mod error;
pub mod lending;
pub mod producer;
pub mod region;
pub mod tag;
pub mod variants;

// pysam's methods take many keyword arguments, each a parameter of the Rust function.
#[cfg(feature = "python")]
#[allow(clippy::too_many_arguments)]
mod py;

pub use error::Error;
