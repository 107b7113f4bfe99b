//! Every record that overlaps any of a set of regions, once, in file order (`-L` on a remote
//! file, through the index): every interval of every region is one region of a single
//! [`index::plan`] (so a BED file of thousands of lines is one plan, its spans fetched ahead as
//! for any query); the chunks of all of them are then merged into one list, read in file
//! order.

use bgzf::{Source, VirtualOffset};
use index::plan::{Plan, Region};
use index::Chunk;

use super::{Advice, Context, Start, Walk as AnyWalk};
use crate::count_check::Step;
use crate::record_reader::RecordReader;
use crate::Result;
use region::{Position, RefId};
use region::{RefIntervals, RegionSet};

/// Where the walk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Chunks,
    /// Seek to the unplaced reads and skip placed ones.
    UnplacedStart,
    /// Every record to the end of the file (`.` from the first record, or after `*`'s first).
    Rest {
        seek: Option<VirtualOffset>,
    },
    Done,
}

/// Where a record lies in a coordinate-sorted file: its reference, then its position (a record
/// without either sorts first, as -1 does in the file).
type Place = (Option<RefId>, Option<Position>);

/// A merged chunk to read: its bytes' fetch limit, and the last of the regions it serves as
/// `(tid, end)`; once a record at or past that has been read, the rest of the chunk can serve
/// none of them and is skipped, as htslib's multi-region iterator skips the chunks of finished
/// intervals (and, within a chunk, as its single-region iterator stops at the first record
/// past the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ToRead {
    chunk: Chunk,
    limit: u64,
    until: Place,
}

/// The reading state of a query of every overlapping record.
pub(super) struct Walk {
    regions: RegionSet,
    chunks: Vec<ToRead>,
    current: Option<usize>,
    position: VirtualOffset,
    /// `(tid, pos)` of the last record read from the chunks.
    last: Option<Place>,
    stage: Stage,
    /// Where the unplaced reads start, for `*`.
    unplaced: Option<VirtualOffset>,
}

/// Every interval of `regions` as a region of the plan (none for `.`, which reads the whole
/// file).
pub(super) fn regions_of(regions: &RegionSet) -> Vec<Region> {
    if regions.all {
        return Vec::new();
    }
    let mut out = Vec::new();
    for RefIntervals { tid, intervals } in regions.iter() {
        for i in intervals {
            if i.end < i.beg || i.end == Position::ZERO {
                continue;
            }
            out.push(Region {
                tid: tid.get(),
                beg: i.beg.get(),
                end: i.end.get(),
            });
        }
    }
    out
}

/// The walk along `the_plan` (of `wanted`, every interval): the merged chunks to read in file
/// order.
pub(super) fn start(
    regions: RegionSet,
    the_plan: Plan,
    wanted: &[Region],
    cx: &Context<'_>,
) -> Start {
    let chunks: Vec<ToRead> = the_plan
        .regions
        .iter()
        .zip(wanted)
        .flat_map(|(r, w)| {
            let until = (Some(RefId::new(w.tid)), Some(Position::new(w.end)));
            r.chunks
                .iter()
                .zip(&r.limits)
                .map(move |(&chunk, &limit)| ToRead {
                    chunk,
                    limit,
                    until,
                })
        })
        .collect();
    let stage = if regions.all {
        Stage::Rest {
            seek: Some(cx.first_record),
        }
    } else {
        Stage::Chunks
    };
    let unplaced = if regions.unplaced {
        cx.index.unplaced_start().map(|s| cx.or_first(s))
    } else {
        None
    };
    let walk = Walk {
        regions,
        chunks: merge_chunks(chunks),
        current: None,
        position: VirtualOffset::default(),
        last: None,
        stage,
        unplaced,
    };
    Start {
        plan: the_plan,
        walk: AnyWalk::Overlapping(walk),
        // The chunks are read in file order, so the spans are wanted in file order too.
        advice: Advice::FileOrder,
        past_end: None,
    }
}

/// Sorts chunks by start and joins those that overlap or touch; a joined chunk is read with the
/// largest of the limits, and serves the regions of both.
fn merge_chunks(mut chunks: Vec<ToRead>) -> Vec<ToRead> {
    chunks.sort_by_key(|c| (c.chunk.start, c.chunk.end));
    let mut out: Vec<ToRead> = Vec::with_capacity(chunks.len());
    for c in chunks {
        match out.last_mut() {
            Some(last) if c.chunk.start <= last.chunk.end => {
                last.chunk.end = last.chunk.end.max(c.chunk.end);
                last.limit = last.limit.max(c.limit);
                last.until = last.until.max(c.until);
            }
            _ => out.push(c),
        }
    }
    out
}

impl Walk {
    /// True when the reader holds the next record overlapping a region, each record read by `St`
    /// (`Held`: decoded and held; a count's `Counted` reads no more than it needs).
    pub(super) fn advance<St: Step, S: Source>(
        &mut self,
        reader: &mut RecordReader<S>,
    ) -> Result<bool> {
        loop {
            match self.stage {
                Stage::Done => return Ok(false),
                Stage::Rest { seek } => {
                    if let Some(at) = seek {
                        reader.bgzf_mut().seek(at)?;
                        self.stage = Stage::Rest { seek: None };
                    }
                    let found = St::step(reader)?;
                    if !found {
                        self.stage = Stage::Done;
                    }
                    return Ok(found);
                }
                Stage::UnplacedStart => {
                    let Some(start) = self.unplaced else {
                        self.stage = Stage::Done;
                        continue;
                    };
                    reader.bgzf_mut().seek(start)?;
                    // The first block of unplaced reads may hold placed ones: skip them.
                    loop {
                        match St::next(reader)? {
                            None => {
                                self.stage = Stage::Done;
                                return Ok(false);
                            }
                            Some(r) if r.ref_id.is_some() => continue,
                            Some(_) => {
                                self.stage = Stage::Rest { seek: None };
                                return Ok(true);
                            }
                        }
                    }
                }
                Stage::Chunks => {
                    if self.next_in_chunks::<St, S>(reader)? {
                        return Ok(true);
                    }
                    self.stage = if self.regions.unplaced {
                        Stage::UnplacedStart
                    } else {
                        Stage::Done
                    };
                }
            }
        }
    }

    fn next_in_chunks<St: Step, S: Source>(
        &mut self,
        reader: &mut RecordReader<S>,
    ) -> Result<bool> {
        loop {
            // A chunk is done at its end, or once a record starts past every region it serves:
            // the records after it start further on, so they overlap none of those regions,
            // and any other region's records are in that region's own chunks (joined with
            // this one where they share bytes).
            let passed = |c: &ToRead| self.last.is_some_and(|last| last >= c.until);
            let need_next = match self.current {
                None => true,
                Some(i) => self.position >= self.chunks[i].chunk.end || passed(&self.chunks[i]),
            };
            if need_next {
                let mut next = self.current.map_or(0, |i| i + 1);
                while self.chunks.get(next).is_some_and(passed) {
                    next += 1;
                }
                if next >= self.chunks.len() {
                    return Ok(false);
                }
                let ToRead { chunk, limit, .. } = self.chunks[next];
                if self.current.is_none() || chunk.start > self.position {
                    reader.bgzf_mut().seek_limit(chunk.start, limit)?;
                    self.position = chunk.start;
                }
                self.current = Some(next);
            }
            let Some(r) = St::next(reader)? else {
                self.current = Some(self.chunks.len());
                return Ok(false);
            };
            let (place, overlaps) = (
                (r.ref_id, r.pos),
                self.regions.overlaps_span(r.ref_id, r.pos, r.end),
            );
            self.position = reader.virtual_offset();
            self.last = Some(place);
            if overlaps {
                return Ok(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_merge_with_the_largest_limit_and_end() {
        let c = |a: u64, b: u64, limit: u64, (t, p): (usize, u64)| ToRead {
            chunk: Chunk {
                start: VirtualOffset::from_raw(a),
                end: VirtualOffset::from_raw(b),
            },
            limit,
            until: (Some(RefId::new(t)), Some(Position::new(p))),
        };
        assert_eq!(
            merge_chunks(vec![
                c(50, 60, 9, (0, 7)),
                c(10, 20, 2, (1, 5)),
                c(15, 30, 5, (0, 900)),
                c(30, 40, 3, (1, 2))
            ]),
            vec![c(10, 40, 5, (1, 5)), c(50, 60, 9, (0, 7))]
        );
    }
}
