//! Targets one after another (`samtools view FILE REGION...`): each target's records in file
//! order, target by target as given; reading a target stops at its first record past its end.
//! A target asked twice is read twice. This is htslib's `hts_itr_next` once per target.

use bgzf::{Source, VirtualOffset};
use index::plan::{self, Plan};
use index::{Chunk, Wanted};

use super::{Advice, Context, Start, Walk as AnyWalk};
use crate::count_check::{Span, Step};
use crate::query::FetchPlan;
use crate::record_reader::RecordReader;
use crate::Result;
use region::{Position, RefId, Region};

/// Where one target stands.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    /// The chunk being read; `None` before the first.
    chunk: Option<usize>,
    /// Virtual offset after the last record read.
    position: VirtualOffset,
    started: bool,
}

/// The reading state of a query of targets.
pub(super) struct Walk {
    targets: Vec<Region>,
    /// For each target, its region in the plan (`Ref` targets only).
    region_of: Vec<Option<usize>>,
    /// For `*` and `.`: where reading starts.
    starts: Vec<Option<VirtualOffset>>,
    current: usize,
    cursor: Cursor,
}

/// The regions the plan is made of (the `Ref` targets, in order), and the index's references
/// they need (`*` and `.` need every reference's pseudo-bin).
pub(super) fn needs(targets: &[Region]) -> (Wanted, Vec<plan::Region>) {
    let regions: Vec<plan::Region> = targets
        .iter()
        .filter_map(|t| match *t {
            Region::Ref { tid, beg, end } => Some(plan::Region {
                tid: tid.get(),
                beg: beg.get(),
                end: end.get(),
            }),
            _ => None,
        })
        .collect();
    let whole = targets.iter().any(|t| !matches!(t, Region::Ref { .. }));
    let wanted = if whole {
        Wanted::all()
    } else {
        Wanted::refs(regions.iter().map(|r| r.tid))
    };
    (wanted, regions)
}

/// The walk over `targets`, along `plan` (of the `Ref` targets, in order).
pub(super) fn start(targets: Vec<Region>, plan: Plan, cx: &Context<'_>) -> Start {
    let mut next_region = 0;
    let mut region_of = Vec::with_capacity(targets.len());
    let mut starts = Vec::with_capacity(targets.len());
    for t in &targets {
        let (region, start) = match *t {
            Region::Ref { .. } => {
                next_region += 1;
                (Some(next_region - 1), None)
            }
            Region::Unplaced => (None, cx.index.unplaced_start().map(|s| cx.or_first(s))),
            Region::All => (None, Some(cx.first_record)),
        };
        region_of.push(region);
        starts.push(start);
    }
    let advice = match cx.fetch {
        FetchPlan::Planned => Advice::ReadOrder,
        FetchPlan::PerChunk => Advice::None,
    };
    let walk = Walk {
        targets,
        region_of,
        starts,
        current: 0,
        cursor: Cursor::default(),
    };
    Start {
        past_end: super::past_end(&plan, cx.size),
        plan,
        walk: AnyWalk::Targets(walk),
        advice,
    }
}

impl Walk {
    /// True when the index cannot answer target `i` at all (see [`super::Query::is_invalid`]).
    pub(super) fn is_invalid(&self, plan: &Plan, i: usize) -> bool {
        self.region_of
            .get(i)
            .copied()
            .flatten()
            .is_some_and(|r| !plan.regions[r].valid)
    }

    /// Reads on to the next record of a target; true when the reader holds one, each record read by `St`
    /// (`Held`: decoded and held; a count's `Counted` reads no more than it needs).
    pub(super) fn advance<St: Step, S: Source>(
        &mut self,
        reader: &mut RecordReader<S>,
        plan: &Plan,
    ) -> Result<bool> {
        while self.current < self.targets.len() {
            let found = match self.targets[self.current] {
                Region::Ref { tid, beg, end } => {
                    self.next_in_region::<St, S>(reader, plan, tid, beg, end)?
                }
                Region::Unplaced | Region::All => self.next_from_start::<St, S>(reader)?,
            };
            if found {
                return Ok(true);
            }
            self.current += 1;
            self.cursor = Cursor::default();
        }
        Ok(false)
    }

    /// `*` and `.`: every record from the start offset to the end of the file.
    fn next_from_start<St: Step, S: Source>(
        &mut self,
        reader: &mut RecordReader<S>,
    ) -> Result<bool> {
        let Some(start) = self.starts[self.current] else {
            return Ok(false);
        };
        if !self.cursor.started {
            self.cursor.started = true;
            reader.bgzf_mut().seek(start)?;
        }
        St::step(reader)
    }

    /// htslib's `hts_itr_next` for one region.
    fn next_in_region<St: Step, S: Source>(
        &mut self,
        reader: &mut RecordReader<S>,
        plan: &Plan,
        tid: RefId,
        beg: Position,
        end: Position,
    ) -> Result<bool> {
        let Some(r) = self.region_of[self.current] else {
            return Ok(false);
        };
        let region = &plan.regions[r];
        let chunks: &[Chunk] = &region.chunks;
        loop {
            let need_next = match self.cursor.chunk {
                None => true,
                Some(i) => self.cursor.position >= chunks[i].end,
            };
            if need_next {
                let next = self.cursor.chunk.map_or(0, |i| i + 1);
                if next >= chunks.len() {
                    return Ok(false);
                }
                let contiguous = self
                    .cursor
                    .chunk
                    .is_some_and(|i| chunks[i].end == chunks[next].start);
                if !contiguous {
                    let (start, limit) = (chunks[next].start, region.limits[next]);
                    reader.bgzf_mut().seek_limit(start, limit)?;
                    self.cursor.position = start;
                }
                self.cursor.chunk = Some(next);
            }
            let Some(Span {
                ref_id,
                pos,
                end: rec_end,
            }) = St::next(reader)?
            else {
                // htslib ends the iteration quietly when a chunk points past the end of the file.
                return Ok(false);
            };
            self.cursor.position = reader.virtual_offset();
            if ref_id != Some(tid) || pos.is_some_and(|pos| pos >= end) {
                return Ok(false);
            }
            // A record without a position starts before `end`.
            if rec_end > beg && pos.is_none_or(|pos| end > pos) {
                return Ok(true);
            }
        }
    }
}
