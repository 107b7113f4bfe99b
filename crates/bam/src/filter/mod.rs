//! Record selection as `samtools view` does it: filter expressions, flags, read groups, tags,
//! names, libraries, query length, BED targets and subsampling.

pub mod expr;
pub mod readgroup;

#[cfg(test)]
pub(crate) mod testutil;
