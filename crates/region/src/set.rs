//! The regions of a multi-region query (`samtools view -M`, `--region-file`, `-L` through the
//! index, `-P`): by name as read ([`RegionList`]), then by reference id, sorted and merged as
//! samtools merges them, plus htslib's two special regions ([`RegionSet`]).

use std::collections::BTreeMap;

use crate::names::Names;
use crate::position::{Interval, Position, RefId};

/// Reference names with their 0-based half-open intervals, sorted and merged: regions by name,
/// before they are resolved against a list of names ([`RegionSet::resolve`]).
pub type RegionList = Vec<NamedIntervals>;

/// One reference's intervals, by name (an entry of a [`RegionList`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NamedIntervals {
    /// The reference name (`.` and `*` for htslib's special regions).
    pub name: Vec<u8>,
    /// 0-based half-open intervals.
    pub intervals: Vec<Interval>,
}

/// Regions by reference id, each list sorted and merged, plus htslib's two special regions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionSet {
    by_tid: BTreeMap<RefId, Vec<Interval>>,
    /// `*`: the unplaced reads at the end of the file.
    pub unplaced: bool,
    /// `.`: every record of the file.
    pub all: bool,
}

/// The merged intervals of one reference in a [`RegionSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefIntervals<'a> {
    /// The reference.
    pub tid: RefId,
    /// Its intervals, sorted, disjoint and not touching.
    pub intervals: &'a [Interval],
}

impl RegionSet {
    /// Resolves named interval lists against `names` (a header's `sam_hdr_name2tid`, so `AN:`
    /// names work). `.` and `*` are the special regions; an unknown name is skipped with
    /// htslib's warning, given to `warn`.
    pub fn resolve<N: Names + ?Sized>(
        list: &RegionList,
        names: &N,
        mut warn: impl FnMut(String),
    ) -> RegionSet {
        let mut set = RegionSet::default();
        for named in list {
            match named.name.as_slice() {
                b"." => set.all = true,
                b"*" => set.unplaced = true,
                name => match names.tid(name) {
                    Some(tid) => set.by_tid.entry(tid).or_default().extend(&named.intervals),
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

    /// Adds `interval` on `tid` and merges (samtools' `_reglist_push` then `_reglist_merge`).
    pub fn add(&mut self, tid: RefId, interval: Interval) {
        self.add_all([(tid, interval)]);
    }

    /// Adds intervals, then merges once (`-P` adds its mates' positions so).
    pub fn add_all(&mut self, intervals: impl IntoIterator<Item = (RefId, Interval)>) {
        let mut touched = Vec::new();
        for (tid, interval) in intervals {
            self.by_tid.entry(tid).or_default().push(interval);
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

    /// True when `interval` on `tid` overlaps a region.
    pub fn overlaps(&self, tid: RefId, interval: Interval) -> bool {
        self.overlaps_span(Some(tid), Some(interval.beg), interval.end)
    }

    /// True when a record at `[beg, end)` on `tid` overlaps a region; a record without a
    /// reference overlaps none, one without a position starts before every region.
    #[inline]
    pub fn overlaps_span(&self, tid: Option<RefId>, beg: Option<Position>, end: Position) -> bool {
        let Some(v) = tid.and_then(|t| self.by_tid.get(&t)) else {
            return false;
        };
        let n = v.partition_point(|i| i.beg < end);
        // Merged intervals are disjoint and sorted, so only the last one starting before `end`
        // can reach past `beg`.
        n > 0 && beg.is_none_or(|beg| v[n - 1].end > beg)
    }

    /// True when there is nothing to read.
    pub fn is_empty(&self) -> bool {
        !self.all && !self.unplaced && self.by_tid.values().all(Vec::is_empty)
    }

    /// The regions, by reference in id order.
    pub fn iter(&self) -> impl Iterator<Item = RefIntervals<'_>> {
        self.by_tid.iter().map(|(&tid, v)| RefIntervals {
            tid,
            intervals: v.as_slice(),
        })
    }
}

/// Sorts and merges overlapping or touching intervals (`bed_unify`, `_reglist_merge`).
fn merge(v: &mut Vec<Interval>) {
    v.sort_unstable();
    let mut out: Vec<Interval> = Vec::with_capacity(v.len());
    for &i in v.iter() {
        match out.last_mut() {
            Some(last) if last.end >= i.beg => last.end = last.end.max(i.end),
            _ => out.push(i),
        }
    }
    *v = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(beg: u64, end: u64) -> Interval {
        Interval::new(Position::new(beg), Position::new(end))
    }

    #[test]
    fn merging_and_overlap() {
        let mut v = vec![iv(10, 20), iv(0, 5), iv(5, 8), iv(15, 30), iv(40, 50)];
        merge(&mut v);
        assert_eq!(v, vec![iv(0, 8), iv(10, 30), iv(40, 50)]);
        let mut s = RegionSet::default();
        let (t0, t1) = (RefId::new(0), RefId::new(1));
        s.add(t1, iv(100, 200));
        s.add(t1, iv(300, 301));
        assert!(s.overlaps(t1, iv(150, 151)));
        assert!(s.overlaps(t1, iv(0, 101)));
        assert!(!s.overlaps(t1, iv(200, 300)));
        assert!(s.overlaps(t1, iv(300, 300 + 1)));
        assert!(!s.overlaps(t0, iv(150, 151)));
        assert!(!s.overlaps_span(None, Some(Position::new(150)), Position::new(151)));
        assert!(s.overlaps_span(Some(t1), None, Position::new(101)));
        assert!(!s.overlaps_span(Some(t1), None, Position::new(100)));
    }

    #[test]
    fn resolving_names() {
        let names: &[&str] = &["chr1", "chr2"];
        let list = vec![
            NamedIntervals {
                name: b"chr2".to_vec(),
                intervals: vec![iv(5, 10), iv(0, 6)],
            },
            NamedIntervals {
                name: b"chrX".to_vec(),
                intervals: vec![iv(0, 1)],
            },
            NamedIntervals {
                name: b"*".to_vec(),
                intervals: vec![],
            },
        ];
        let mut warned = Vec::new();
        let set = RegionSet::resolve(&list, names, |w| warned.push(w));
        assert!(set.unplaced && !set.all);
        let refs: Vec<_> = set.iter().collect();
        assert_eq!(refs.len(), 1);
        assert_eq!(refs[0].tid, RefId::new(1));
        assert_eq!(refs[0].intervals, &[iv(0, 10)]);
        assert_eq!(
            warned,
            ["[W::hts_itr_regions] Region 'chrX' specifies an unknown reference name. Continue anyway"]
        );
    }
}
