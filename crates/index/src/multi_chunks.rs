//! The chunks of a multi-region query as htslib 1.16's multi-region iterator lists them
//! (`hts_itr_multi_bam` and `reg2intervals`): for each interval of each reference, the chunks
//! of the bins it overlaps, clipped to the interval's `[min_off, max_off)` (as for a single
//! region), sorted and joined where they overlap, and tagged with the interval, which the
//! iterator uses to skip chunks of intervals it has passed. The chunks of all intervals are
//! then sorted by start, but not joined with each other.

use crate::binning::for_each_level;
use crate::{Chunk, Index};

/// One chunk of a multi-region query, and the interval (its index in its reference's sorted
/// interval list) it was listed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaggedChunk {
    /// The chunk.
    pub chunk: Chunk,
    /// The reference id.
    pub tid: usize,
    /// Its interval's index in the reference's sorted interval list.
    pub interval: usize,
}

/// Why htslib refuses to build the iterator ("Failed to create the multi-region iterator!").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmptyInterval {
    /// The reference id.
    pub tid: usize,
    /// The interval's start, 0-based.
    pub beg: i64,
}

impl Index {
    /// The chunks of `intervals` (0-based, half-open, sorted and merged) on reference `tid`,
    /// appended to `out` as `hts_itr_multi_bam` lists them. A reference the index does not
    /// describe adds nothing. An interval with `end == beg` makes htslib fail the whole
    /// iterator; one with `end < beg` is skipped.
    pub fn multi_chunks(
        &self,
        tid: usize,
        intervals: &[(i64, i64)],
        out: &mut Vec<TaggedChunk>,
    ) -> Result<(), EmptyInterval> {
        let Some(r) = self.refs.get(tid) else {
            return Ok(());
        };
        if r.bins.is_empty() {
            return Ok(());
        }
        for (j, &(beg, end)) in intervals.iter().enumerate() {
            if end < beg {
                continue;
            }
            if beg >= end {
                return Err(EmptyInterval { tid, beg });
            }
            let beg = beg.max(0);
            let (min_off, max_off) = self.offset_window(r, beg, end);
            let first = out.len();
            for_each_level(
                beg as u64,
                end as u64,
                self.min_shift,
                self.depth,
                |lo, hi| {
                    for (_, bin) in r.bins.range(lo..=hi) {
                        for p in bin.chunks {
                            if p.v > min_off && p.u < max_off {
                                out.push(TaggedChunk {
                                    chunk: Chunk::from_raw(p.u.max(min_off), p.v.min(max_off)),
                                    tid,
                                    interval: j,
                                });
                            }
                        }
                    }
                },
            );
            // Sorted by start and joined where a chunk reaches the next one's start.
            let mine = &mut out[first..];
            mine.sort_by_key(|c| c.chunk.start);
            let mut kept = first;
            for k in first + 1..out.len() {
                if out[kept].chunk.end >= out[k].chunk.start {
                    out[kept].chunk.end = out[kept].chunk.end.max(out[k].chunk.end);
                } else {
                    kept += 1;
                    out[kept] = out[k];
                }
            }
            if out.len() > first {
                out.truncate(kept + 1);
            }
        }
        Ok(())
    }
}
