//! Record selection as `samtools view` does it: filter expressions, flags, read groups, tags,
//! names, libraries, query length, BED targets and subsampling.

pub mod bed;
pub mod expr;
pub mod lists;
pub mod readgroup;
mod select;
pub mod subsample;

pub use select::{EvaluationErrors, FlagTests, Selection, SelectionState, TagTest};

#[cfg(test)]
pub(crate) mod testutil;
