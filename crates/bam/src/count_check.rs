//! The quick check a count makes of each record: a record it accepts is one that
//! [`crate::record::Record::decode_in`] also accepts, so counting it without decoding gives the
//! same count. A record it does not accept is decoded in full, which finds the same error (and
//! message) a full read finds, or accepts it after all (a long CIGAR moved in from `CG`).
//!
//! What the count's result depends on is only whether each record decodes: the fixed fields'
//! lengths inside `block_size` (as [`crate::lengths::check_fixed`]), both reference ids in range
//! and, for a mapped read with a CIGAR and a sequence, the CIGAR's query length equal to `l_seq`.
//! The bin recomputed from the CIGAR, the read name's end and the record's field offsets are
//! what printing needs, not counting.

use crate::cigar;
use crate::flags::Flags;
use crate::lengths::{check_fixed, FIXED};

/// True when `data` (one record's bytes after `block_size`) decodes without error and needs no
/// rewriting, in which case a count need not decode it.
#[inline]
pub(crate) fn decodes_as_is(data: &[u8], n_ref: usize) -> bool {
    if check_fixed(data, data.len()).is_err() {
        return false;
    }
    let word = |i: usize| u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    let in_range = |id: i32| id == -1 || (id >= 0 && (id as usize) < n_ref);
    if !in_range(word(0) as i32) || !in_range(word(20) as i32) {
        return false;
    }
    let flag_nc = word(12);
    let n_cigar = (flag_nc & 0xffff) as usize;
    if n_cigar == 0 {
        return true;
    }
    let l_read_name = (word(8) & 0xff) as usize;
    let seq_len = u64::from(word(16));
    // check_fixed showed the CIGAR inside the record.
    let start = FIXED + l_read_name;
    let ops = &data[start..start + 4 * n_cigar];
    let first = cigar::Op(u32::from_le_bytes([ops[0], ops[1], ops[2], ops[3]]));
    // A CIGAR that may stand for one in a `CG` tag is left to the full decode.
    if first.code() == cigar::SOFT_CLIP && u64::from(first.len()) == seq_len {
        return false;
    }
    let unmapped = Flags::from_bits((flag_nc >> 16) as u16).is_unmapped();
    seq_len == 0 || unmapped || cigar::Cigar::new(ops).lengths().1 == seq_len
}
