//! htslib 1.16's multi-region iterator (`sam_itr_regions`: `hts_itr_multi_bam` and
//! `hts_itr_multi_next`), which `samtools view -M`, `--region-file` and `-P` use: the chunks
//! of every interval, tagged with it and read in file order; a chunk is skipped once the
//! iterator has passed the interval it was listed for, and a record is returned when it
//! overlaps an interval not yet passed. This is not quite "every record overlapping a region":
//! how far the iterator has got depends on the records it has read, so with many intervals it
//! can pass over records that overlap a later one. samtools prints what this iterator returns,
//! so hts does the same ([`crate::multi::MultiQuery`] returns every overlapping record).
//!
//! All chunks are planned as one query; their spans are advised in file order.

use bgzf::VirtualOffset;
use index::multi_chunks::TaggedChunk;
use index::plan::{self, Plan};
use index::Wanted;

use crate::multi::RegionSet;
use crate::reader::Reader;
use crate::record::Record;
use crate::{Error, Result};

/// htslib's multi-region iterator over one reader.
pub struct ItrMulti<'r> {
    reader: &'r mut Reader,
    /// The regions as htslib's `reg_list`: reference ids in order, each with its intervals.
    regions: Vec<(usize, Vec<(i64, i64)>)>,
    chunks: Vec<TaggedChunk>,
    /// The chunks planned as one region: its limits are the chunks', in order.
    plan: Plan,
    state: State,
}

/// `hts_itr_t`'s fields that `hts_itr_multi_next` moves.
#[derive(Debug, Clone, Copy)]
struct State {
    /// The chunk being read; `None` before the first (htslib's `i = -1`).
    i: Option<usize>,
    /// Virtual offset after the last record read (0: nothing read yet).
    curr_off: u64,
    curr_tid: i32,
    curr_reg: usize,
    curr_intv: usize,
    /// Where the unplaced reads start, for a `*` region.
    nocoor: Option<VirtualOffset>,
    /// Reading every record from here on (`.`, or after the first unplaced read).
    read_rest: Option<Option<VirtualOffset>>,
    finished: bool,
}

impl Reader {
    /// Starts htslib's multi-region iterator over `regions` (the index found with
    /// [`Reader::select_index`]; the references they name are loaded here). Every chunk is
    /// planned as one query and the byte source told the spans, in file order; cached parts of
    /// the file are shown current before this returns. Fails as htslib does for an interval of
    /// length 0.
    pub fn itr_multi(&mut self, regions: &RegionSet) -> Result<ItrMulti<'_>> {
        let needed = if regions.all {
            Wanted::none()
        } else if regions.unplaced {
            Wanted::all()
        } else {
            Wanted::refs(regions.iter().map(|(tid, _)| tid))
        };
        self.ensure_index(&needed)?;
        let index = self.index().ok_or_else(|| Error::NoIndex {
            name: self.location().to_string(),
        })?;
        let mut state = State {
            i: None,
            curr_off: 0,
            curr_tid: 0,
            curr_reg: 0,
            curr_intv: 0,
            nocoor: None,
            read_rest: None,
            finished: false,
        };
        let list: Vec<(usize, Vec<(i64, i64)>)> = regions
            .iter()
            .map(|(tid, intervals)| (tid, intervals.to_vec()))
            .collect();
        let mut chunks = Vec::new();
        for (tid, intervals) in &list {
            index
                .multi_chunks(*tid, intervals, &mut chunks)
                .map_err(|e| Error::Query {
                    name: self.location().to_string(),
                    reason: format!(
                        "Failed to create the multi-region iterator! (an empty interval at {} of reference {})",
                        e.beg, e.tid
                    ),
                })?;
        }
        // htslib's special regions come after the others: `.` reads the whole file from the
        // first record (and makes the rest moot); `*` reads the unplaced reads at the end.
        if regions.all {
            let start =
                index.first_record_start().map(
                    |s| {
                        if s.raw() == 0 {
                            self.first_record()
                        } else {
                            s
                        }
                    },
                );
            state.read_rest = Some(start.or(Some(self.first_record())));
            chunks.clear();
        } else if regions.unplaced {
            state.nocoor =
                index
                    .unplaced_start()
                    .map(|s| if s.raw() == 0 { self.first_record() } else { s });
        }
        chunks.sort_by_key(|c| c.chunk.start);
        let size = self.size()?;
        let plain: Vec<index::Chunk> = chunks.iter().map(|c| c.chunk).collect();
        let plan = plan::plan_chunks(&plain, self.block_starts(), size, &self.plan_options());
        self.bgzf_mut().advise(&plan.file_order());
        self.confirm()?;
        Ok(ItrMulti {
            reader: self,
            regions: list,
            chunks,
            plan,
            state,
        })
    }
}

impl ItrMulti<'_> {
    /// The byte spans planned for the query, in file order.
    pub fn spans(&self) -> &[plan::Span] {
        &self.plan.spans
    }

    /// The reader being queried: its header, location and last record read.
    pub fn reader(&self) -> &Reader {
        self.reader
    }

    /// [`Reader::has_eof_marker`] of the file being read.
    pub fn has_eof_marker(&mut self) -> Result<bool> {
        self.reader.has_eof_marker()
    }

    /// `hts_itr_multi_next`: the next record, or `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        if self.state.finished {
            return Ok(None);
        }
        if let Some(start) = self.state.read_rest {
            if let Some(at) = start {
                self.reader.bgzf_mut().seek(at)?;
                self.state.read_rest = Some(None);
            }
            let r = self.reader.read_record()?;
            self.state.finished = r.is_none();
            return Ok(r);
        }
        loop {
            let s = &self.state;
            let passed = |c: &TaggedChunk| {
                s.curr_off >= c.chunk.end.raw()
                    || (c.tid as i32 == s.curr_tid && c.interval < s.curr_intv)
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
                    return self.unplaced();
                }
                let start = self.chunks[i].chunk.start;
                if self.state.curr_off < start.raw() {
                    self.state.curr_off = start.raw();
                    let limit = self.plan.regions[0].limits[i];
                    self.reader.bgzf_mut().seek_limit(start, limit)?;
                }
            }
            let Some(r) = self.reader.read_record()? else {
                self.state.finished = true;
                return Ok(None);
            };
            self.state.curr_off = self.reader.virtual_offset().raw();
            let tid = r.ref_id();
            if tid != self.state.curr_tid {
                let Ok(found) = self
                    .regions
                    .binary_search_by_key(&i64::from(tid), |(t, _)| *t as i64)
                else {
                    continue;
                };
                self.state.curr_reg = found;
                self.state.curr_tid = tid;
                self.state.curr_intv = 0;
            }
            let (beg, end) = (i64::from(r.pos()), r.end_pos());
            let Some((_, intervals)) = self.regions.get(self.state.curr_reg) else {
                continue;
            };
            for (i, &(ib, ie)) in intervals.iter().enumerate().skip(self.state.curr_intv) {
                if end > ib && ie > beg {
                    self.state.curr_intv = i;
                    return Ok(Some(r));
                }
                if beg > ie {
                    self.state.curr_intv = i + 1;
                }
                if end < ib {
                    break;
                }
            }
        }
    }

    /// After the last chunk: the unplaced reads for `*` (the placed ones in their first block
    /// skipped), else the end.
    fn unplaced(&mut self) -> Result<Option<Record>> {
        let Some(start) = self.state.nocoor else {
            self.state.finished = true;
            return Ok(None);
        };
        self.reader.bgzf_mut().seek(start)?;
        loop {
            match self.reader.read_record()? {
                None => {
                    self.state.finished = true;
                    return Ok(None);
                }
                Some(r) if r.ref_id() >= 0 => continue,
                Some(r) => {
                    self.state.read_rest = Some(None);
                    return Ok(Some(r));
                }
            }
        }
    }
}
