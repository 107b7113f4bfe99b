//! One reference's bins as loaded: their numbers in one sorted array and all their chunks in
//! another, so a reference costs two allocations however many bins it has. A whole-genome BAI
//! holds about a hundred thousand bins; one map node and one chunk vector each made loading
//! and freeing the index most of a small query's time.

use std::ops::RangeBounds;

use crate::Pair;

/// The bins of one reference, by increasing number.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bins {
    entries: Vec<Entry>,
    pairs: Vec<Pair>,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    id: u32,
    /// For CSI, as stored; for BAI, derived from the linear index as htslib does.
    loffset: u64,
    /// The bin's chunks: `pairs[start..start + len]` (an index stream is at most 1 GiB, so
    /// fewer than 2^32 pairs).
    start: u32,
    len: u32,
}

/// One bin: its loffset and its chunks (for the pseudo-bin, its two special pairs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bin<'a> {
    pub(crate) loffset: u64,
    pub(crate) chunks: &'a [Pair],
}

impl Bins {
    /// No bins.
    pub(crate) const fn new() -> Bins {
        Bins {
            entries: Vec::new(),
            pairs: Vec::new(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    fn bin(&self, e: &Entry) -> (u32, Bin<'_>) {
        let start = e.start as usize;
        // Always in range for an index within the loader's 1 GiB stream limit (under 2^32
        // pairs); past it, a bin reads as empty rather than panicking.
        let chunks = self
            .pairs
            .get(start..start.saturating_add(e.len as usize))
            .unwrap_or_default();
        (
            e.id,
            Bin {
                loffset: e.loffset,
                chunks,
            },
        )
    }

    /// The bin numbered `id`.
    pub(crate) fn get(&self, id: u32) -> Option<Bin<'_>> {
        let i = self.entries.binary_search_by_key(&id, |e| e.id).ok()?;
        Some(self.bin(&self.entries[i]).1)
    }

    /// The bins numbered within `range`, by increasing number.
    pub(crate) fn range(
        &self,
        range: impl RangeBounds<u32>,
    ) -> impl Iterator<Item = (u32, Bin<'_>)> {
        use std::ops::Bound;
        let from = match range.start_bound() {
            Bound::Included(&a) => self.entries.partition_point(|e| e.id < a),
            Bound::Excluded(&a) => self.entries.partition_point(|e| e.id <= a),
            Bound::Unbounded => 0,
        };
        let to = match range.end_bound() {
            Bound::Included(&b) => self.entries.partition_point(|e| e.id <= b),
            Bound::Excluded(&b) => self.entries.partition_point(|e| e.id < b),
            Bound::Unbounded => self.entries.len(),
        };
        self.entries[from..to.max(from)]
            .iter()
            .map(move |e| self.bin(e))
    }

    /// Every bin, by increasing number.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, Bin<'_>)> {
        self.range(..)
    }

    /// Sets each bin's loffset to `loffset(number)`.
    pub(crate) fn set_loffsets(&mut self, loffset: impl Fn(u32) -> u64) {
        for e in &mut self.entries {
            e.loffset = loffset(e.id);
        }
    }
}

/// Bins as they come in the file (in no order); [`Builder::finish`] sorts them. The caller
/// refuses a repeated number before pushing it.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    bins: Bins,
}

impl Builder {
    /// Adds bin `id` with the chunks `raw` holds as `[u0, v0, u1, v1, ...]`.
    pub(crate) fn push(&mut self, id: u32, loffset: u64, raw: &[u64]) {
        // Within u32: an index stream is limited to `MAX_DECOMPRESSED` (1 GiB).
        let start = u32::try_from(self.bins.pairs.len()).unwrap_or(u32::MAX);
        let len = u32::try_from(raw.len() / 2).unwrap_or(u32::MAX);
        self.bins
            .pairs
            .extend(raw.chunks_exact(2).map(|p| Pair { u: p[0], v: p[1] }));
        self.bins.entries.push(Entry {
            id,
            loffset,
            start,
            len,
        });
    }

    pub(crate) fn finish(mut self) -> Bins {
        self.bins.entries.sort_unstable_by_key(|e| e.id);
        self.bins.entries.shrink_to_fit();
        self.bins.pairs.shrink_to_fit();
        self.bins
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Bins {
        let mut b = Builder::default();
        b.push(9, 90, &[1, 2, 3, 4]);
        b.push(0, 0, &[5, 6]);
        b.push(4681, 7, &[]);
        b.push(37450, 0, &[10, 20, 30, 40]);
        b.finish()
    }

    #[test]
    fn bins_are_found_by_number_and_listed_in_order() {
        let bins = sample();
        assert_eq!(bins.len(), 4);
        let ids: Vec<u32> = bins.iter().map(|(id, _)| id).collect();
        assert_eq!(ids, [0, 9, 4681, 37450]);
        let nine = bins.get(9).unwrap();
        assert_eq!(nine.loffset, 90);
        assert_eq!(nine.chunks, &[Pair { u: 1, v: 2 }, Pair { u: 3, v: 4 }]);
        assert!(bins.get(10).is_none());
        assert!(bins.get(4681).unwrap().chunks.is_empty());
        let some: Vec<u32> = bins.range(1..=4681).map(|(id, _)| id).collect();
        assert_eq!(some, [9, 4681]);
        let from: Vec<u32> = bins.range(4682..).map(|(id, _)| id).collect();
        assert_eq!(from, [37450]);
        let (lo, hi) = (5, 4);
        assert_eq!(bins.range(lo..=hi).count(), 0);
        assert!(Bins::new().is_empty());
    }

    #[test]
    fn loffsets_are_set_by_number() {
        let mut bins = sample();
        bins.set_loffsets(|id| u64::from(id) * 2);
        assert_eq!(bins.get(37450).unwrap().loffset, 74900);
        assert_eq!(bins.get(0).unwrap().loffset, 0);
    }
}
