//! htslib 1.16's multi-region iterator (`sam_itr_regions`: `hts_itr_multi_bam` and
//! `hts_itr_multi_next`), which `samtools view -M`, `--region-file` and `-P` use: the chunks
//! of every interval, tagged with it and read in file order; a chunk is skipped once the
//! iterator has passed the interval it was listed for, and a record is returned when it
//! overlaps an interval not yet passed ([`region::MultiCursor`], which the CRAM iterator
//! shares). samtools prints what this iterator returns, so hts does the same
//! ([`crate::Regions::Overlapping`] returns every overlapping record).
//!
//! All chunks are planned as one query; their spans are advised in file order.

use bgzf::{Source, VirtualOffset};
use index::multi_chunks::TaggedChunk;
use index::plan::{self, Plan};

use super::{Advice, Context, Start, Walk as AnyWalk};
use crate::count_check::Step;
use crate::record_reader::RecordReader;
use crate::{Error, Result};
use region::{MultiCursor, RegionSet};

/// htslib's multi-region iterator's reading state.
pub(super) struct Walk {
    /// The regions as htslib's `reg_list`, and where the iterator stands among them.
    cursor: MultiCursor,
    chunks: Vec<TaggedChunk>,
    state: State,
}

/// `hts_itr_t`'s fields that `hts_itr_multi_next` moves.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    /// The chunk being read; `None` before the first (htslib's `i = -1`).
    i: Option<usize>,
    /// Virtual offset after the last record read (0: nothing read yet).
    curr_off: u64,
    /// Where the unplaced reads start, for a `*` region.
    nocoor: Option<VirtualOffset>,
    /// Reading every record from here on (`.`, or after the first unplaced read).
    read_rest: Option<Option<VirtualOffset>>,
    finished: bool,
}

/// htslib's chunk list of every interval (`hts_itr_multi_bam`), planned as one region whose
/// spans are advised in file order. Fails as htslib does for an interval of length 0.
pub(super) fn start(regions: &RegionSet, cx: &Context<'_>) -> Result<Start> {
    let mut state = State::default();
    let cursor = MultiCursor::new(regions);
    let mut chunks = Vec::new();
    for (tid, intervals) in cursor.regions() {
        cx.index
            .multi_chunks(*tid, intervals, &mut chunks)
            .map_err(|e| Error::Query {
                name: cx.location.to_string(),
                reason: format!(
                    "Failed to create the multi-region iterator! (an empty interval at {} of reference {})",
                    e.beg, e.tid
                ),
            })?;
    }
    // htslib's special regions come after the others: `.` reads the whole file from the
    // first record (and makes the rest moot); `*` reads the unplaced reads at the end.
    if regions.all {
        let start = cx.index.first_record_start().map(|s| cx.or_first(s));
        state.read_rest = Some(start.or(Some(cx.first_record)));
        chunks.clear();
    } else if regions.unplaced {
        state.nocoor = cx.index.unplaced_start().map(|s| cx.or_first(s));
    }
    chunks.sort_by_key(|c| c.chunk.start);
    let plain: Vec<index::Chunk> = chunks.iter().map(|c| c.chunk).collect();
    let plan = plan::plan_chunks(&plain, cx.starts, cx.size, &cx.options);
    let walk = Walk {
        cursor,
        chunks,
        state,
    };
    Ok(Start {
        plan,
        walk: AnyWalk::Multi(Box::new(walk)),
        advice: Advice::FileOrder,
        past_end: None,
    })
}

impl Walk {
    /// `hts_itr_multi_next`: true when the reader holds the next record, each record read by `St`
    /// (`Held`: decoded and held; a count's `Counted` reads no more than it needs).
    pub(super) fn advance<St: Step, S: Source>(
        &mut self,
        reader: &mut RecordReader<S>,
        plan: &Plan,
    ) -> Result<bool> {
        if self.state.finished {
            return Ok(false);
        }
        if let Some(start) = self.state.read_rest {
            if let Some(at) = start {
                reader.bgzf_mut().seek(at)?;
                self.state.read_rest = Some(None);
            }
            let found = St::step(reader)?;
            self.state.finished = !found;
            return Ok(found);
        }
        loop {
            let s = &self.state;
            let cursor = &self.cursor;
            let passed = |c: &TaggedChunk| {
                s.curr_off >= c.chunk.end.raw() || cursor.passed(c.tid, c.interval)
            };
            let jump = s.curr_off == 0
                || s.i
                    .is_none_or(|i| i >= self.chunks.len() || passed(&self.chunks[i]));
            if jump {
                let mut i = s.i.map_or(0, |i| i + 1);
                while i < self.chunks.len() && passed(&self.chunks[i]) {
                    i += 1;
                }
                self.state.i = Some(i);
                if i >= self.chunks.len() {
                    return self.unplaced::<St, S>(reader);
                }
                let start = self.chunks[i].chunk.start;
                if self.state.curr_off < start.raw() {
                    self.state.curr_off = start.raw();
                    let limit = plan.regions[0].limits[i];
                    reader.bgzf_mut().seek_limit(start, limit)?;
                }
            }
            let Some(r) = St::next(reader)? else {
                self.state.finished = true;
                return Ok(false);
            };
            // As signed values, -1 for none: every interval bound is at least 0, so a record
            // without a position compares with them as one stored below 0 does.
            let tid = r.ref_id.map_or(-1, |t| t.get() as i32);
            let beg = r.pos.map_or(-1, |p| p.get() as i64);
            let end = r.end.get() as i64;
            self.state.curr_off = reader.virtual_offset().raw();
            if self.cursor.keeps(tid, beg, end) {
                return Ok(true);
            }
        }
    }

    /// After the last chunk: the unplaced reads for `*` (the placed ones in their first block
    /// skipped), else the end.
    fn unplaced<St: Step, S: Source>(&mut self, reader: &mut RecordReader<S>) -> Result<bool> {
        let Some(start) = self.state.nocoor else {
            self.state.finished = true;
            return Ok(false);
        };
        reader.bgzf_mut().seek(start)?;
        loop {
            match St::next(reader)? {
                None => {
                    self.state.finished = true;
                    return Ok(false);
                }
                Some(r) if r.ref_id.is_some() => continue,
                Some(_) => {
                    self.state.read_rest = Some(None);
                    return Ok(true);
                }
            }
        }
    }
}
