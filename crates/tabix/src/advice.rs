//! The data's bytes of a query's regions asked for while the index is still arriving: as each
//! sequence the regions name is loaded, its regions' chunks go out (in parallel, for a remote
//! file), so that the data's round trip overlaps the rest of the index's transfer.

use std::ops::Range;

use hfile::{HFile, Hints};
use index::Index;

use region::Region;

/// The regions of a query and the byte ranges found for them so far.
pub(crate) struct Spans<'a> {
    regions: &'a [String],
    /// Each region as parsed once the index's names are known (`None`: not a region with
    /// chunks, e.g. one that does not parse; the query reports it).
    parsed: Option<Vec<Option<Region>>>,
    /// Each region's ranges.
    ranges: Vec<Vec<Range<u64>>>,
    /// The data's first bytes (the header block), asked for first and kept in every advice.
    first: u64,
}

impl<'a> Spans<'a> {
    pub(crate) fn new(regions: &'a [String], first: u64) -> Spans<'a> {
        Spans {
            regions,
            parsed: None,
            ranges: vec![Vec::new(); regions.len()],
            first,
        }
    }

    /// Sequence `tid` of `index` is loaded: its regions' ranges are added and everything found
    /// so far is advised again (requests already running for the same bytes are kept).
    pub(crate) fn loaded(&mut self, tid: usize, index: &Index, data: &mut HFile) {
        if self.regions.is_empty() {
            return;
        }
        let regions = self.regions;
        let parsed = self.parsed.get_or_insert_with(|| {
            let meta = index.tabix().ok().flatten();
            regions
                .iter()
                .map(|r| match meta.as_ref().map(|m| crate::resolve(m, r)) {
                    Some(Ok(Some(reg @ Region::Ref { .. }))) => Some(reg),
                    _ => None,
                })
                .collect()
        });
        let starts = index.block_starts_of(tid);
        let mut added = false;
        for (i, reg) in parsed.iter().enumerate() {
            let Some(Region::Ref { beg, end, .. }) =
                reg.filter(|r| matches!(r, Region::Ref { tid: t, .. } if t.get() == tid))
            else {
                continue;
            };
            let chunks = index
                .query_checked(tid, beg.get(), end.get())
                .unwrap_or_default();
            // A run of chunks that follow one another is read without a seek: one range,
            // ending where the block holding its end ends (or a block's most past it).
            let mut a = 0;
            while a < chunks.len() {
                let mut b = a;
                while b + 1 < chunks.len() && chunks[b].end == chunks[b + 1].start {
                    b += 1;
                }
                let range =
                    chunks[a].start.coffset()..bgzf::byte_end(chunks[b].end, &starts, u64::MAX);
                if !range.is_empty() {
                    self.ranges[i].push(range);
                    added = true;
                }
                a = b + 1;
            }
        }
        if !added {
            return;
        }
        // In file order, overlaps merged: a range that starts inside another (a region's
        // first block is often the header's, or the last of the region before) would otherwise
        // be asked for twice, or turn the reader's sequential path into new requests.
        let mut all: Vec<Range<u64>> = std::iter::once(0..self.first)
            .chain(self.ranges.iter().flatten().cloned())
            .collect();
        all.sort_unstable_by_key(|r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::with_capacity(all.len());
        for r in all {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        data.advise(&merged);
    }
}
