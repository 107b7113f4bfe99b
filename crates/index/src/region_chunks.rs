//! Chunk selection for a region, reproducing htslib 1.16's `hts_itr_query` and `hts_itr_off`.

use bgzf::VirtualOffset;

use crate::binning::{self, for_each_level};
use crate::{Bin, Chunk, Index, Reference};

fn to_signed(x: u64) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

/// A chunk collected from a bin, with htslib's secondary sort key (its index in its bin).
#[derive(Clone, Copy)]
struct Candidate {
    u: u64,
    v: u64,
    j: usize,
}

impl Index {
    /// The chunks to read for records of reference `tid` overlapping `[beg, end)` (0-based,
    /// half-open), exactly as htslib 1.16's `hts_itr_query` chooses them: the bins of
    /// [`binning::reg2bins`] that exist, each chunk clipped to `[min_off, max_off)` (the
    /// minimum from the linear index or the bins' loffsets, the maximum from the first bin to
    /// the right of the region), sorted, contained chunks dropped, overlaps trimmed and chunks
    /// that meet in one BGZF block merged.
    ///
    /// An `end` beyond [`Index::max_position`] is clamped (samtools passes `2^63`-ish for a
    /// whole reference). Returns `None` where htslib returns no iterator at all (samtools then
    /// warns that the region is invalid): `tid` is beyond the index's references or
    /// `end < beg`. `Some(vec![])` means a valid region with nothing to read.
    pub fn query_checked(&self, tid: usize, beg: u64, end: u64) -> Option<Vec<Chunk>> {
        let beg = to_signed(beg);
        let end = to_signed(end);
        if end < beg {
            return None;
        }
        let r = self.refs.get(tid)?;
        Some(self.select(r, beg, end))
    }

    /// [`Index::query_checked`], with "no iterator" reported as no chunks.
    ///
    /// ```no_run
    /// let index = index::read("sample.bam.bai")?;
    /// let chunks = index.query(0, 999, 2000); // chr:1000-2000 in samtools' 1-based syntax
    /// # Ok::<(), index::Error>(())
    /// ```
    pub fn query(&self, tid: usize, beg: u64, end: u64) -> Vec<Chunk> {
        self.query_checked(tid, beg, end).unwrap_or_default()
    }

    fn select(&self, r: &Reference, beg: i64, end: i64) -> Vec<Chunk> {
        if r.bins.is_empty() {
            return Vec::new();
        }
        let (min_off, max_off) = self.offset_window(r, beg, end);

        let mut total = 0usize;
        for_each_level(
            beg as u64,
            end as u64,
            self.min_shift,
            self.depth,
            |first, last| {
                total += r
                    .bins
                    .range(first..=last)
                    .map(|(_, b)| b.chunks.len())
                    .sum::<usize>();
            },
        );
        if total == 0 {
            return Vec::new();
        }
        let mut off = Vec::with_capacity(total);
        for_each_level(
            beg as u64,
            end as u64,
            self.min_shift,
            self.depth,
            |first, last| {
                for (_, bin) in r.bins.range(first..=last) {
                    for (j, p) in bin.chunks.iter().enumerate() {
                        if p.v > min_off && p.u < max_off {
                            off.push(Candidate {
                                u: p.u.max(min_off),
                                v: p.v.min(max_off),
                                j,
                            });
                        }
                    }
                }
            },
        );
        if off.is_empty() {
            return Vec::new();
        }
        off.sort_by_key(|c| (c.u, c.j));
        merge_sorted(&mut off);
        off.iter().map(|c| Chunk::from_raw(c.u, c.v)).collect()
    }

    /// htslib's `min_off` and `max_off` for a region.
    pub(crate) fn offset_window(&self, r: &Reference, beg: i64, end: i64) -> (u64, u64) {
        let pseudo = binning::pseudo_bin(self.depth);
        // htslib reads the unmapped count into a uint32_t; with no pseudo-bin it assumes there
        // may be unmapped reads. A pseudo-bin with fewer than two pairs is read out of bounds
        // by htslib; we take the conservative value (more chunks, never fewer).
        let unmapped = match r.bins.get(pseudo) {
            Some(b) => b.chunks.get(1).map_or(1, |p| p.v as u32),
            None => 1,
        };

        // min_off: the loffset of the nearest existing bin at or left of the region's first
        // bottom-level bin, walking left among siblings and then up (bin numbers are C ints).
        let rel_off = (beg >> self.min_shift) as u32;
        let bin = binning::first_bin(self.depth).wrapping_add(rel_off) as i32;
        let found = nearest_bin_left(r, bin);
        let mut min_off = found.map_or(0, |b| b.loffset);
        if let Some(linear) = &r.linear {
            if let Some(&entry) = linear.get(rel_off as usize) {
                min_off = min_off.max(entry);
                if unmapped != 0 {
                    // Unmapped reads are not in the linear index: look back for a smaller
                    // offset, and fall back to the bin's loffset if that went too far.
                    let mut tmp = i64::from(rel_off) - 1;
                    while tmp >= 0 {
                        let o = linear[tmp as usize];
                        if o < min_off {
                            min_off = o;
                            break;
                        }
                        tmp -= 1;
                    }
                    if let Some(b) = found {
                        if min_off < b.loffset || tmp < 0 {
                            min_off = b.loffset;
                        }
                    }
                }
            }
        }

        // max_off: the first chunk of the nearest non-empty bin to the right of the region,
        // moving right and up; computed in a C int, which can wrap for huge region ends.
        let n_bins = binning::bin_count(self.depth) as i32;
        let mut bin = i64::from(binning::first_bin(self.depth))
            .wrapping_add((end.wrapping_sub(1)) >> self.min_shift)
            .wrapping_add(1) as i32;
        if bin >= n_bins {
            bin = 0;
        }
        let max_off = loop {
            while bin % 8 == 1 {
                bin = (bin - 1) >> 3;
            }
            if bin == 0 {
                break u64::MAX;
            }
            if bin < 0 {
                // htslib counts up through the negative numbers to 0, looking each up as an
                // unsigned key; only keys >= 2^31 can match.
                break r
                    .bins
                    .range(bin as u32..)
                    .find_map(|(_, b)| b.chunks.first().map(|p| p.u))
                    .unwrap_or(u64::MAX);
            }
            if let Some(p) = r.bins.get(bin as u32).and_then(|b| b.chunks.first()) {
                break p.u;
            }
            bin += 1;
        };
        (min_off, max_off)
    }

    /// An estimate of where the records of reference `tid` that start at or after `end` begin:
    /// the smallest offset of the records overlapping the first index window after the one
    /// holding `end - 1` (the linear index for BAI; for CSI, the loffset of the existing bin
    /// that starts first at or after that window, since htslib folds small bins into their
    /// parents and a parent's loffset describes its own start). Reading up to the block holding
    /// it usually sees the first record past `end`, which ends a region query; it is only an
    /// estimate (a long record from before can sit later in the file), so a reader must be
    /// ready to read on. `None` when the index has no entry that far (the region runs to the
    /// end of the reference's data).
    pub fn estimate_end(&self, tid: usize, end: u64) -> Option<VirtualOffset> {
        let r = self.refs.get(tid)?;
        let window = (end.max(1) - 1) >> self.min_shift;
        let next = window.checked_add(1)?;
        if let Some(linear) = &r.linear {
            return linear
                .get(usize::try_from(next).ok()?)
                .map(|&o| VirtualOffset::from_raw(o))
                .filter(|v| v.raw() != 0);
        }
        let pos = next.checked_shl(self.min_shift)?;
        if pos >= self.max_position() {
            return None;
        }
        // A bin's loffset is the linear index at its first window, so the bin starting first
        // at or after `pos` gives the tightest value that is not before `pos`'s own. At each
        // level the bins up to a parent's width on are enough: past them, the parent's level
        // has one.
        let mut best: Option<(u64, u64)> = None;
        for level in 0..=self.depth {
            let shift = self.min_shift + 3 * (self.depth - level);
            let bins_here = 1u64 << (3 * level);
            let first = u64::from(binning::first_bin(level));
            let k0 = pos.div_ceil(1u64 << shift);
            for k in k0..(k0 + 8).min(bins_here) {
                let start = k << shift;
                if best.is_some_and(|(s, _)| s <= start) {
                    break;
                }
                let Ok(bin) = u32::try_from(first + k) else {
                    break;
                };
                if let Some(b) = r.bins.get(bin) {
                    if b.loffset != 0 {
                        best = Some((start, b.loffset));
                    }
                    break;
                }
            }
        }
        best.map(|(_, loffset)| VirtualOffset::from_raw(loffset))
    }

    /// Where htslib starts reading for the region `*` (reads without coordinates), as
    /// `hts_itr_off(idx, HTS_IDX_NOCOOR)`: the largest pseudo-bin end offset over all
    /// references; or 0 when no reference has a pseudo-bin but `n_no_coor` is non-zero.
    /// `None` where htslib returns no iterator (no pseudo-bins and no unplaced reads counted).
    ///
    /// htslib then reads every record to the end of the file without checking its reference.
    /// Note that a start of 0 makes htslib skip the seek (`if (iter->curr_off)`), so reading
    /// continues from where the stream is: right after the header, i.e. from the first
    /// record.
    pub fn unplaced_start(&self) -> Option<VirtualOffset> {
        let pseudo = binning::pseudo_bin(self.depth);
        let mut off0 = u64::MAX;
        for r in &self.refs {
            if let Some(p) = r.bins.get(pseudo).and_then(|b| b.chunks.first()) {
                if off0 == u64::MAX || off0 < p.v {
                    off0 = p.v;
                }
            }
        }
        self.fallback(off0)
    }

    /// Where htslib starts reading for the region `.` (`HTS_IDX_START`): the smallest
    /// pseudo-bin start offset, with the same fallbacks as [`Index::unplaced_start`].
    pub fn first_record_start(&self) -> Option<VirtualOffset> {
        let pseudo = binning::pseudo_bin(self.depth);
        let mut off0 = u64::MAX;
        for r in &self.refs {
            if let Some(p) = r.bins.get(pseudo).and_then(|b| b.chunks.first()) {
                off0 = off0.min(p.u);
            }
        }
        self.fallback(off0)
    }

    fn fallback(&self, mut off0: u64) -> Option<VirtualOffset> {
        if off0 == u64::MAX && self.n_no_coor.unwrap_or(0) != 0 {
            off0 = 0;
        }
        (off0 != u64::MAX).then(|| VirtualOffset::from_raw(off0))
    }
}

/// htslib's search for `min_off`'s bin: from `bin`, step left while not the first of its
/// siblings, else up to the parent, until a bin exists or the root is reached. Where htslib
/// would loop forever (negative bin numbers from a region start beyond 2^45, or a missing root
/// in a depth-0 scheme) we report no bin.
fn nearest_bin_left(r: &Reference, mut bin: i32) -> Option<Bin<'_>> {
    loop {
        if bin < 0 {
            return None;
        }
        if let Some(b) = r.bins.get(bin as u32) {
            return Some(b);
        }
        if bin == 0 {
            return None;
        }
        let first = (((bin - 1) >> 3) << 3) + 1;
        if bin > first {
            bin -= 1;
        } else {
            bin = (bin - 1) >> 3;
        }
        if bin == 0 {
            return r.bins.get(0);
        }
    }
}

/// The tail of `hts_itr_query` on chunks sorted by start: drop chunks contained in the one
/// before, trim overlaps, and merge chunks where one ends in the block the next starts in.
fn merge_sorted(off: &mut Vec<Candidate>) {
    let mut l = 0;
    for i in 1..off.len() {
        if off[l].v < off[i].v {
            l += 1;
            off[l] = off[i];
        }
    }
    off.truncate(l + 1);
    for i in 1..off.len() {
        if off[i - 1].v >= off[i].u {
            off[i - 1].v = off[i].u;
        }
    }
    let mut l = 0;
    for i in 1..off.len() {
        if off[l].v >> 16 == off[i].u >> 16 {
            off[l].v = off[i].v;
        } else {
            l += 1;
            off[l] = off[i];
        }
    }
    off.truncate(l + 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(u: u64, v: u64) -> Candidate {
        Candidate { u, v, j: 0 }
    }

    fn run(mut v: Vec<Candidate>) -> Vec<(u64, u64)> {
        merge_sorted(&mut v);
        v.iter().map(|c| (c.u, c.v)).collect()
    }

    #[test]
    fn contained_overlapping_and_same_block() {
        let b = |coff: u64, uoff: u64| coff << 16 | uoff;
        // Contained chunk dropped.
        assert_eq!(
            run(vec![c(b(1, 0), b(9, 0)), c(b(2, 0), b(3, 0))]),
            vec![(b(1, 0), b(9, 0))]
        );
        // Overlap trimmed, then merged because the trimmed end is in the next start's block.
        assert_eq!(
            run(vec![c(b(1, 0), b(5, 10)), c(b(5, 5), b(8, 0))]),
            vec![(b(1, 0), b(8, 0))]
        );
        // Disjoint, different blocks: kept apart.
        assert_eq!(
            run(vec![c(b(1, 0), b(2, 10)), c(b(3, 0), b(4, 0))]),
            vec![(b(1, 0), b(2, 10)), (b(3, 0), b(4, 0))]
        );
        // Disjoint but the first ends in the block where the second starts: merged.
        assert_eq!(
            run(vec![c(b(1, 0), b(3, 10)), c(b(3, 20), b(4, 0))]),
            vec![(b(1, 0), b(4, 0))]
        );
    }
}
