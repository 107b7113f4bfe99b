//! The record edits `samtools view` makes: `--add-flags`/`--remove-flags`, `-x`/`--keep-tag`,
//! `-B` (collapse backward CIGAR operations, samtools' `bam_remove_B`) and `-p` (mark
//! unselected reads unmapped), on the field setters of [`bam::Record`]: an edited record
//! encodes from [`Record::into_data`] as it is.

use std::fmt;

use bam::aux;
use bam::{Flags, Record};

/// Operation code of `B` (backward skip).
const BACK: u32 = 9;

/// The aux data of a record is corrupt where a tag edit walks it (samtools: "malformed aux data
/// for record").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagEditError {
    /// The read name.
    pub read_name: String,
}

impl fmt::Display for TagEditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed aux data for record \"{}\"", self.read_name)
    }
}

impl std::error::Error for TagEditError {}

fn consumes_query(op: u32) -> bool {
    matches!(op, 0 | 1 | 4 | 7 | 8)
}

fn nibble(seq: &[u8], i: usize) -> u8 {
    let b = seq[i / 2];
    if i & 1 == 0 {
        b >> 4
    } else {
        b & 0xf
    }
}

fn set_nibble(seq: &mut [u8], i: usize, c: u8) {
    let b = &mut seq[i / 2];
    *b = if i & 1 == 0 {
        (*b & 0x0f) | (c << 4)
    } else {
        (*b & 0xf0) | c
    };
}

/// The edits `samtools view` makes to a record it prints.
pub trait Edit {
    /// `samtools view -p` on an unselected record: UNMAP set, MAPQ and TLEN 0, no CIGAR.
    fn make_unmapped(&mut self);

    /// Keeps the aux fields whose tag `keep` accepts, in order (samtools' `adjust_tags`).
    fn retain_tags(&mut self, keep: impl Fn([u8; 2]) -> bool) -> Result<(), TagEditError>;

    /// samtools' `bam_remove_B`: folds `B` (backward) operations into the CIGAR, merging the
    /// overlapping bases by quality. A `B` that cannot be removed marks the read unmapped and
    /// returns false.
    fn remove_backward_ops(&mut self) -> bool;
}

impl Edit for Record {
    fn make_unmapped(&mut self) {
        self.set_flags(self.flags() | Flags::UNMAPPED);
        self.set_mapq(0);
        self.set_tlen(0);
        if !self.cigar().is_empty() {
            let (packed, qual) = (self.seq_packed().to_vec(), self.qual().to_vec());
            set_body(self, &[], &packed, &qual);
        }
    }

    fn retain_tags(&mut self, keep: impl Fn([u8; 2]) -> bool) -> Result<(), TagEditError> {
        let aux = self.aux();
        let mut kept = Vec::with_capacity(aux.len());
        let mut s = 0;
        while s < aux.len() {
            let Some(end) = aux::field_end(aux, s).filter(|_| s + 2 <= aux.len()) else {
                return Err(TagEditError {
                    read_name: String::from_utf8_lossy(self.name()).into_owned(),
                });
            };
            if keep([aux[s], aux[s + 1]]) {
                kept.extend_from_slice(&aux[s..end]);
            }
            s = end;
        }
        self.set_aux(&kept);
        Ok(())
    }

    fn remove_backward_ops(&mut self) -> bool {
        if self.flags().is_unmapped() {
            return true;
        }
        let cigar: Vec<u32> = self.cigar().iter().map(|op| op.0).collect();
        if !cigar.iter().any(|op| op & 0xf == BACK) {
            return true;
        }
        let unmap = |r: &mut Record| {
            r.set_flags(r.flags() | Flags::UNMAPPED);
            false
        };
        if cigar[0] & 0xf == BACK {
            return unmap(self);
        }
        let mut seq = self.seq_packed().to_vec();
        let mut qual = self.qual().to_vec();
        let no_qual = qual.first() == Some(&0xff);
        let n_bases = self.seq_len() as i64;
        let mut new: Vec<u32> = Vec::with_capacity(cigar.len());
        let (mut i, mut j, mut end_j) = (0i64, 0i64, -1i64);
        for (k, &op) in cigar.iter().enumerate() {
            let code = op & 0xf;
            let len = i64::from(op >> 4);
            if code == BACK {
                if k == cigar.len() - 1 {
                    break;
                }
                if len > j {
                    return unmap(self);
                }
                let mut t = new.len() as i64 - 1;
                let mut u = 0i64;
                while t >= 0 {
                    let prev = new[t as usize];
                    let len1 = i64::from(prev >> 4);
                    if consumes_query(prev & 0xf) {
                        if u + len1 >= len {
                            new[t as usize] -= ((len - u) as u32) << 4;
                            break;
                        }
                        u += len1;
                    }
                    t -= 1;
                }
                if t >= 0 && new[t as usize] >> 4 == 0 {
                    t -= 1;
                }
                new.truncate((t + 1).max(0) as usize);
                end_j = j;
                j -= len;
            } else {
                new.push(op);
                if consumes_query(code) {
                    if i != j {
                        for u in 0..len {
                            let (a, b) = (i + u, j + u);
                            if a >= n_bases || b >= n_bases {
                                continue;
                            }
                            let (a, b) = (a as usize, b as usize);
                            let c = nibble(&seq, a);
                            if j + u < end_j {
                                if c != nibble(&seq, b) {
                                    if qual[b] < qual[a] {
                                        set_nibble(&mut seq, b, c);
                                        qual[b] = qual[a] - qual[b];
                                    } else {
                                        qual[b] -= qual[a];
                                    }
                                } else {
                                    qual[b] = qual[b].max(qual[a]);
                                }
                            } else {
                                set_nibble(&mut seq, b, c);
                                qual[b] = qual[a];
                            }
                        }
                    }
                    i += len;
                    j += len;
                }
            }
        }
        if no_qual {
            qual[0] = 0xff;
        }
        for k in 1..new.len() {
            if new[k] & 0xf == new[k - 1] & 0xf {
                // htslib adds these as uint32_t, so two huge lengths wrap there too.
                new[k] = new[k].wrapping_add(new[k - 1] >> 4 << 4);
                new[k - 1] &= 0xf;
            }
        }
        new.retain(|op| op >> 4 != 0);
        let j = j.clamp(0, n_bases) as usize;
        let packed = seq[..j.div_ceil(2)].to_vec();
        let qual = qual[..j].to_vec();
        set_body(self, &new, &packed, &qual);
        true
    }
}

/// [`Record::set_body`] with parts made from the record's own: consistent by construction (the
/// packed bases cover the qualities; the CIGAR is the record's, shortened or emptied).
fn set_body(r: &mut Record, cigar: &[u32], packed: &[u8], qual: &[u8]) {
    let set = r.set_body(cigar, packed, qual);
    debug_assert!(set.is_ok(), "{set:?}");
}

#[cfg(test)]
mod tests {
    use super::Edit;
    use crate::filter::testutil::Rec;

    #[test]
    fn flags_mapq_tlen_and_unmap() {
        let mut r = Rec {
            tlen: 50,
            ..Rec::default()
        }
        .tag_i(b"NM", b'C', 1)
        .record();
        r.set_flags(bam::Flags::from_bits(0x41));
        assert_eq!(r.flags().bits(), 0x41);
        r.make_unmapped();
        assert_eq!(r.flags().bits(), 0x45);
        assert_eq!((r.mapq(), r.tlen(), r.cigar().len()), (0, 0, 0));
        assert_eq!(r.seq(), b"ACGTACGT");
        assert_eq!(r.aux(), b"NMC\x01");
        let again = bam::Record::decode(r.clone().into_data(), 3).unwrap();
        assert_eq!(
            (again.flags().bits(), again.cigar().len(), again.aux()),
            (0x45, 0, &b"NMC\x01"[..])
        );
    }

    #[test]
    fn tags_kept_and_removed() {
        let rec = Rec::default()
            .tag_i(b"NM", b'C', 1)
            .tag_z(b"RG", b"g")
            .tag_i(b"AS", b'i', 5);
        let mut r = rec.record();
        r.retain_tags(|t| &t != b"RG").unwrap();
        assert_eq!(r.aux(), b"NMC\x01ASi\x05\0\0\0");
        let mut r = rec.record();
        r.retain_tags(|t| &t == b"RG").unwrap();
        assert_eq!(r.aux(), b"RGZg\0");
        let bad = Rec {
            aux: b"NMQ\x01".to_vec(),
            ..Rec::default()
        };
        assert!(bad.record().retain_tags(|_| true).is_err());
    }

    #[test]
    fn backward_operations() {
        // 4M2B4M over AACCGGTT: the last two bases of the first segment overlap the first two
        // of the second; equal bases keep the higher quality.
        let mut r = Rec {
            cigar: vec![(4, 0), (2, 9), (4, 0)],
            seq: b"AACCCCTT".to_vec(),
            qual: vec![10, 11, 12, 13, 20, 5, 16, 17],
            ..Rec::default()
        }
        .record();
        assert!(r.remove_backward_ops());
        let ops: Vec<(u32, u8)> = r.cigar().iter().map(|o| (o.len(), o.letter())).collect();
        assert_eq!(ops, vec![(6, b'M')]);
        assert_eq!(r.seq(), b"AACCTT");
        assert_eq!(r.qual(), [10, 11, 20, 13, 16, 17]);
        // A leading B cannot be removed: the read becomes unmapped.
        let mut r = Rec {
            cigar: vec![(1, 9), (8, 0)],
            ..Rec::default()
        }
        .record();
        assert!(!r.remove_backward_ops());
        assert!(r.flags().is_unmapped());
        // Two maximal M merge past u32's length field and wrap, as htslib's uint32_t sum does.
        let max = (1 << 28) - 1;
        let mut r = Rec {
            cigar: vec![(max, 0), (max, 0), (1, 9)],
            seq: Vec::new(),
            qual: Vec::new(),
            ..Rec::default()
        }
        .record();
        assert!(r.remove_backward_ops());
        let ops: Vec<(u32, u8)> = r.cigar().iter().map(|o| (o.len(), o.letter())).collect();
        assert_eq!(ops, vec![(max - 1, b'M')]);
    }
}
