//! htslib's multi-region iterator over a CRAM whose records are laid out as BAM: the walk of
//! [`cram::multi`] judging a [`bam::Record`] by the stored fields it judges a CRAM record by.

use cram::multi::Filter;

/// Whether the iterator returns `r`, a record already laid out as BAM.
pub fn keeps_record<D: AsRef<[u8]>>(filter: &mut Filter, r: &bam::Record<D>) -> bool {
    let stored = r.stored_coordinates();
    filter.keeps_at(stored.ref_id, i64::from(stored.pos), r.stored_end_pos())
}
