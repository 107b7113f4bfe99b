//! One reference's bins as loaded: their numbers in one sorted array and all their chunks in
//! another, so a reference costs two allocations however many bins it has. A whole-genome BAI
//! holds about a hundred thousand bins; one map node and one chunk vector each made loading
//! and freeing the index most of a small query's time.

use std::ops::RangeBounds;

use byteorder::{ByteOrder, LittleEndian};

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
    /// A builder with room for `n` bins (and as many chunks) before it grows.
    pub(crate) fn with_room(n: usize) -> Builder {
        Builder {
            bins: Bins {
                entries: Vec::with_capacity(n),
                pairs: Vec::with_capacity(n),
            },
        }
    }

    /// Adds bin `id` with the chunks `raw` holds as `[u0, v0, u1, v1, ...]`.
    pub(crate) fn push(&mut self, id: u32, loffset: u64, raw: &[u64]) {
        let pairs = raw.chunks_exact(2).map(|p| Pair { u: p[0], v: p[1] });
        self.push_pairs(id, loffset, pairs);
    }

    /// Adds bin `id` with the chunks `bytes` holds as stored (16 little-endian bytes each).
    pub(crate) fn push_bytes(&mut self, id: u32, loffset: u64, bytes: &[u8]) {
        let pairs = bytes.chunks_exact(16).map(|c| Pair {
            u: LittleEndian::read_u64(&c[..8]),
            v: LittleEndian::read_u64(&c[8..]),
        });
        self.push_pairs(id, loffset, pairs);
    }

    fn push_pairs(&mut self, id: u32, loffset: u64, pairs: impl ExactSizeIterator<Item = Pair>) {
        // Within u32: an index stream is limited to `MAX_DECOMPRESSED` (1 GiB).
        let start = u32::try_from(self.bins.pairs.len()).unwrap_or(u32::MAX);
        let len = u32::try_from(pairs.len()).unwrap_or(u32::MAX);
        self.bins.pairs.extend(pairs);
        self.bins.entries.push(Entry {
            id,
            loffset,
            start,
            len,
        });
    }

    /// The bins in order of number: each put at `place(number)` when the caller knows the
    /// places (distinct numbers, see `Seen::order`), else sorted.
    pub(crate) fn finish(mut self, place: Option<impl Fn(u32) -> usize>) -> Bins {
        let entries = &mut self.bins.entries;
        let placed = place.and_then(|place| {
            let mut out = vec![None; entries.len()];
            for e in entries.iter() {
                *out.get_mut(place(e.id))? = Some(*e);
            }
            out.into_iter().collect::<Option<Vec<Entry>>>()
        });
        match placed {
            Some(placed) => *entries = placed,
            None => entries.sort_unstable_by_key(|e| e.id),
        }
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
        // As stored: [10, 20, 30, 40] in little-endian bytes.
        let stored: Vec<u8> = [10u64, 20, 30, 40]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        b.push_bytes(37450, 0, &stored);
        b.finish(None::<fn(u32) -> usize>)
    }

    #[test]
    fn bins_given_their_places_need_no_sort() {
        let mut b = Builder::with_room(2);
        b.push(9, 0, &[1, 2]);
        b.push(3, 0, &[5, 6]);
        let places = |id: u32| usize::from(id == 9);
        let bins = b.finish(Some(places));
        let ids: Vec<u32> = bins.iter().map(|(id, _)| id).collect();
        assert_eq!(ids, [3, 9]);
        assert_eq!(bins.get(3).unwrap().chunks, &[Pair { u: 5, v: 6 }]);
        // Places that do not fit are not trusted: the bins are sorted.
        let mut b = Builder::default();
        b.push(9, 0, &[]);
        b.push(3, 0, &[]);
        let ids: Vec<u32> = b.finish(Some(|_| 7)).iter().map(|(id, _)| id).collect();
        assert_eq!(ids, [3, 9]);
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
