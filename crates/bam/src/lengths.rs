//! Lengths read from a BAM file, checked before anything is allocated for them.
//!
//! A BAM states its own sizes (`l_text`, `n_ref`, `l_name`, `block_size`, `l_read_name`,
//! `n_cigar_op`, `l_seq`), and a hostile or damaged file states any size it likes. Two rules
//! keep memory bounded by what the file really holds:
//!
//! - what a length promises is checked against what holds it first: a record's variable fields
//!   against its `block_size` as soon as the 32 fixed bytes are in ([`check_fixed`]), as
//!   htslib's `bam_read1` does, so a false `block_size` fails before its bytes are read;
//! - what is still to come is read in bounded pieces, and the buffer grows with
//!   [`grow`], which reports a failed allocation as an error instead of aborting the process
//!   (a BGZF block of zeros inflates 1000-fold, so a few MB of file can really hold the 2 GB a
//!   length promises; samtools then says "Out of memory" and exits 1).

use std::collections::TryReserveError;

use crate::error::RecordError;

/// Bytes of a record's fixed fields, from `refID` to `tlen`.
pub(crate) const FIXED: usize = 32;

/// Grows `buf` to `len` bytes (zeros), or says the memory could not be had. On failure the
/// buffer is released, so that the error can still be reported with memory nearly exhausted.
pub(crate) fn grow(buf: &mut Vec<u8>, len: usize) -> Result<(), TryReserveError> {
    let extra = len.saturating_sub(buf.len());
    // Doubling first (amortised); if that much cannot be had, exactly what is needed.
    if buf.try_reserve(extra).is_err() {
        if let Err(e) = buf.try_reserve_exact(extra) {
            *buf = Vec::new();
            return Err(e);
        }
    }
    buf.resize(len, 0);
    Ok(())
}

/// Room for `n` more items in `v`, or the allocation failure.
pub(crate) fn room_for<T>(v: &mut Vec<T>, n: usize) -> Result<(), TryReserveError> {
    if v.try_reserve(n).is_err() {
        v.try_reserve_exact(n)?;
    }
    Ok(())
}

/// htslib's `bam_read1` checks on a record's fixed fields (`fixed`: at least the 32 bytes after
/// `block_size`), before the rest is read: `l_seq` not negative, `l_read_name` not 0, and the
/// read name, CIGAR, SEQ and QUAL inside the `block_size - 32` bytes that follow.
#[inline]
pub(crate) fn check_fixed(fixed: &[u8], block_size: usize) -> Result<(), RecordError> {
    let Some(fixed) = fixed.get(..FIXED) else {
        return Err(RecordError::TooShort {
            block_size: block_size as u32,
        });
    };
    let word = |i: usize| u32::from_le_bytes([fixed[i], fixed[i + 1], fixed[i + 2], fixed[i + 3]]);
    let l_read_name = u64::from(word(8) & 0xff);
    let n_cigar = u64::from(word(12) & 0xffff);
    let l_seq = word(16) as i32;
    if l_seq < 0 {
        return Err(RecordError::NegativeSeqLength(l_seq));
    }
    if l_read_name == 0 {
        return Err(RecordError::EmptyReadName);
    }
    let seq_len = l_seq as u64;
    let needed = n_cigar * 4 + l_read_name + seq_len.div_ceil(2) + seq_len;
    let available = block_size.saturating_sub(FIXED) as u64;
    if needed > available {
        return Err(RecordError::FieldsPastEnd { needed, available });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(l_read_name: u8, n_cigar: u16, l_seq: i32) -> Vec<u8> {
        let mut f = vec![0u8; FIXED];
        f[8] = l_read_name;
        f[12..14].copy_from_slice(&n_cigar.to_le_bytes());
        f[16..20].copy_from_slice(&l_seq.to_le_bytes());
        f
    }

    #[test]
    fn fixed_fields_are_checked_against_the_block_size() {
        // 3 (name) + 8 (2 ops) + 2 + 4 (seq, qual) = 17 bytes after the fixed ones.
        assert_eq!(check_fixed(&fixed(3, 2, 4), 32 + 17), Ok(()));
        assert_eq!(
            check_fixed(&fixed(3, 2, 4), 32 + 16),
            Err(RecordError::FieldsPastEnd {
                needed: 17,
                available: 16
            })
        );
        assert_eq!(
            check_fixed(&fixed(0, 0, 0), 0x7fff_fff0),
            Err(RecordError::EmptyReadName)
        );
        assert_eq!(
            check_fixed(&fixed(1, 0, -1), 100),
            Err(RecordError::NegativeSeqLength(-1))
        );
        // The largest fields a record can state still fit in u64 arithmetic.
        assert!(check_fixed(&fixed(255, 0xffff, i32::MAX), 0x7fff_ffff).is_err());
        assert!(check_fixed(&[0u8; 31], 40).is_err());
    }

    #[test]
    fn growth_reports_what_cannot_be_had() {
        let mut v = vec![1u8, 2];
        grow(&mut v, 5).unwrap();
        assert_eq!(v, [1, 2, 0, 0, 0]);
        // More than any allocator gives: an error, not an abort.
        let mut huge: Vec<u8> = vec![7; 100];
        assert!(grow(&mut huge, usize::MAX / 2).is_err());
        assert_eq!(huge.capacity(), 0, "released");
        let mut items: Vec<u64> = Vec::new();
        assert!(room_for(&mut items, usize::MAX / 16).is_err());
        room_for(&mut items, 3).unwrap();
        assert!(items.capacity() >= 3);
    }
}
