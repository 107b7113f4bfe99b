//! The regions of a multi-region query (`samtools view -M`, `--region-file`, `-L` through the
//! index, `-P`): intervals by reference id, sorted and merged as samtools merges them, plus
//! htslib's two special regions.

use std::collections::BTreeMap;

use crate::region::RegionList;
use crate::Header;

/// Regions by reference id, each list sorted and merged, plus htslib's two special regions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionSet {
    by_tid: BTreeMap<usize, Vec<(i64, i64)>>,
    /// `*`: the unplaced reads at the end of the file.
    pub unplaced: bool,
    /// `.`: every record of the file.
    pub all: bool,
}

impl RegionSet {
    /// Resolves named interval lists against the header (`sam_hdr_name2tid`, so `AN:` names
    /// work). `.` and `*` are the special regions; an unknown name is skipped with htslib's
    /// warning, given to `warn`.
    pub fn resolve(list: &RegionList, header: &Header, mut warn: impl FnMut(String)) -> RegionSet {
        let mut set = RegionSet::default();
        for (name, intervals) in list {
            match name.as_slice() {
                b"." => set.all = true,
                b"*" => set.unplaced = true,
                _ => match header.tid(name) {
                    Some(tid) => set.by_tid.entry(tid).or_default().extend(intervals),
                    None => warn(format!(
                        "[W::hts_itr_regions] Region '{}' specifies an unknown reference name. Continue anyway",
                        String::from_utf8_lossy(name)
                    )),
                },
            }
        }
        set.by_tid.values_mut().for_each(merge);
        set
    }

    /// Adds `[beg, end)` on `tid` and merges (samtools' `_reglist_push` then `_reglist_merge`).
    pub fn add(&mut self, tid: usize, beg: i64, end: i64) {
        self.add_all([(tid, beg, end)]);
    }

    /// Adds `(tid, beg, end)` intervals, then merges once (`-P` adds its mates' positions so).
    pub fn add_all(&mut self, intervals: impl IntoIterator<Item = (usize, i64, i64)>) {
        let mut touched = Vec::new();
        for (tid, beg, end) in intervals {
            self.by_tid.entry(tid).or_default().push((beg, end));
            touched.push(tid);
        }
        touched.sort_unstable();
        touched.dedup();
        for tid in touched {
            if let Some(v) = self.by_tid.get_mut(&tid) {
                merge(v);
            }
        }
    }

    /// True when `[beg, end)` on `tid` overlaps a region.
    pub fn overlaps(&self, tid: i32, beg: i64, end: i64) -> bool {
        let Some(v) = usize::try_from(tid).ok().and_then(|t| self.by_tid.get(&t)) else {
            return false;
        };
        let n = v.partition_point(|&(b, _)| b < end);
        // Merged intervals are disjoint and sorted, so only the last one starting before `end`
        // can reach past `beg`.
        n > 0 && v[n - 1].1 > beg
    }

    /// True when there is nothing to read.
    pub fn is_empty(&self) -> bool {
        !self.all && !self.unplaced && self.by_tid.values().all(Vec::is_empty)
    }

    /// The regions as (tid, intervals).
    pub fn iter(&self) -> impl Iterator<Item = (usize, &[(i64, i64)])> {
        self.by_tid.iter().map(|(t, v)| (*t, v.as_slice()))
    }
}

/// Sorts and merges overlapping or touching intervals (`bed_unify`, `_reglist_merge`).
fn merge(v: &mut Vec<(i64, i64)>) {
    v.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for &(b, e) in v.iter() {
        match out.last_mut() {
            Some(last) if last.1 >= b => last.1 = last.1.max(e),
            _ => out.push((b, e)),
        }
    }
    *v = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_and_overlap() {
        let mut v = vec![(10, 20), (0, 5), (5, 8), (15, 30), (40, 50)];
        merge(&mut v);
        assert_eq!(v, vec![(0, 8), (10, 30), (40, 50)]);
        let mut s = RegionSet::default();
        s.add(1, 100, 200);
        s.add(1, 300, 301);
        assert!(s.overlaps(1, 150, 151));
        assert!(s.overlaps(1, 0, 101));
        assert!(!s.overlaps(1, 200, 300));
        assert!(s.overlaps(1, 300, 300 + 1));
        assert!(!s.overlaps(0, 150, 151));
        assert!(!s.overlaps(-1, 150, 151));
    }
}
