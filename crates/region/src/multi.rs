//! Where htslib's multi-region iterator stands among its intervals (`hts_itr_multi_next`'s
//! `curr_tid`, `curr_reg` and `curr_intv`), and its decision on each record read: returned
//! when it overlaps an interval not yet passed. The formats' iterators (BAM's chunks, CRAM's
//! containers) read the records and ask [`MultiCursor::keeps`]; a BAM chunk listed for an
//! interval already passed is skipped ([`MultiCursor::passed`]).
//!
//! This is not quite "every record overlapping a region": how far the iterator has got
//! depends on the records it has read, so with many intervals it can pass over records that
//! overlap a later one. samtools prints what this iterator returns, so the readers do the same.

use crate::set::RegionSet;

/// One reference's intervals as htslib's `hts_reglist_t` holds them: the reference id and
/// the intervals in signed `hts_pos_t` arithmetic, sorted and merged.
pub type RegList = (usize, Vec<(i64, i64)>);

/// htslib's `reg_list` and the iterator's place in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiCursor {
    regions: Vec<RegList>,
    curr_tid: i32,
    curr_reg: usize,
    curr_intv: usize,
}

impl MultiCursor {
    /// The intervals of `set` (its special regions aside), with the iterator at its start as
    /// `hts_itr_regions` leaves it: `curr_tid` 0 and the first region current (the fields of a
    /// zeroed `hts_itr_t`).
    pub fn new(set: &RegionSet) -> MultiCursor {
        let regions = set
            .iter()
            .map(|r| {
                // htslib's signed `hts_pos_t`, which the index's interval lists keep.
                let signed = r
                    .intervals
                    .iter()
                    .map(|i| (i.beg.get() as i64, i.end.get() as i64));
                (r.tid.get(), signed.collect())
            })
            .collect();
        MultiCursor {
            regions,
            curr_tid: 0,
            curr_reg: 0,
            curr_intv: 0,
        }
    }

    /// [`MultiCursor::new`] with `curr_tid` the first region's reference, as htslib's CRAM
    /// iterator sets it when it jumps to the first container (`hts_itr_multi_next`'s
    /// `is_cram` branch).
    pub fn at_first_region(set: &RegionSet) -> MultiCursor {
        let mut cursor = MultiCursor::new(set);
        let first = cursor.regions.first().map_or(0, |(t, _)| *t);
        cursor.curr_tid = i32::try_from(first).unwrap_or(i32::MAX);
        cursor
    }

    /// The regions, by reference in id order, in htslib's signed arithmetic.
    pub fn regions(&self) -> &[RegList] {
        &self.regions
    }

    /// True when a chunk listed for interval `interval` of reference `tid` lies behind the
    /// iterator: its reference is the current one and the interval is one already passed.
    pub fn passed(&self, tid: usize, interval: usize) -> bool {
        i32::try_from(tid).is_ok_and(|t| t == self.curr_tid) && interval < self.curr_intv
    }

    /// Whether the iterator returns a record read next (in file order) at `[beg, end)` on
    /// reference `tid`, all as htslib compares them (signed; -1 for no reference or no
    /// position): a record of a reference the regions do not name is skipped; otherwise the
    /// intervals from the current one on are tried, those the record starts past are passed,
    /// and the record is returned at the first it overlaps.
    pub fn keeps(&mut self, tid: i32, beg: i64, end: i64) -> bool {
        if tid != self.curr_tid {
            let Ok(found) = self
                .regions
                .binary_search_by_key(&i64::from(tid), |(t, _)| *t as i64)
            else {
                return false;
            };
            self.curr_reg = found;
            self.curr_tid = tid;
            self.curr_intv = 0;
        }
        let Some((_, intervals)) = self.regions.get(self.curr_reg) else {
            return false;
        };
        for (i, &(ib, ie)) in intervals.iter().enumerate().skip(self.curr_intv) {
            if end > ib && ie > beg {
                self.curr_intv = i;
                return true;
            }
            // The record starts past this interval: the interval is finished.
            if beg > ie {
                self.curr_intv = i + 1;
            }
            // No later interval can hold a record that ends before this one begins.
            if end < ib {
                break;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::{Interval, Position, RefId};

    fn set(list: &[(usize, u64, u64)]) -> RegionSet {
        let mut s = RegionSet::default();
        s.add_all(list.iter().map(|&(t, b, e)| {
            (
                RefId::new(t),
                Interval::new(Position::new(b), Position::new(e)),
            )
        }));
        s
    }

    #[test]
    fn records_in_file_order() {
        let mut c = MultiCursor::new(&set(&[(0, 100, 200), (0, 300, 400), (2, 10, 20)]));
        assert!(!c.keeps(0, 0, 50));
        assert!(c.keeps(0, 150, 160));
        // Past the first interval: it is passed, the record overlaps the second.
        assert!(c.keeps(0, 350, 360));
        assert!(c.passed(0, 0) && !c.passed(0, 1) && !c.passed(2, 0));
        // A record the iterator has passed the interval of is not returned again.
        assert!(!c.keeps(0, 150, 160));
        assert!(!c.keeps(1, 15, 16));
        assert!(c.keeps(2, 15, 16));
        assert!(!c.keeps(-1, -1, 0));
    }

    #[test]
    fn the_start_state() {
        let s = set(&[(2, 10, 20)]);
        // A zeroed iterator takes a record of reference 0 for the first region's.
        let mut zeroed = MultiCursor::new(&s);
        assert!(zeroed.keeps(0, 15, 16));
        let mut first = MultiCursor::at_first_region(&s);
        assert!(!first.keeps(0, 15, 16));
        assert!(first.keeps(2, 15, 16));
        assert_eq!(first.regions(), &[(2, vec![(10, 20)])]);
    }
}
