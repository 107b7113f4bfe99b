//! Multi-region queries (`samtools view -M`, `--region-file`, `-P`): every record that overlaps
//! any of the regions, once, in file order, as htslib's multi-region iterator returns them.
//!
//! Every interval of every region is one region of a single [`index::plan`] (so a BED file of
//! thousands of lines is one plan, its spans fetched ahead as for any query); the chunks of all
//! of them are then merged into one list, read in file order ([`MultiQuery::chunks`]).

use std::collections::BTreeMap;

use bgzf::VirtualOffset;
use index::plan::{self, Plan, Region};
use index::{Chunk, Wanted};

use crate::reader::Reader;
use crate::record::Record;
use crate::region::RegionList;
use crate::{Error, Header, Result};

/// Regions by reference id, each list sorted and merged, plus htslib's two special regions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionSet {
    by_tid: BTreeMap<usize, Vec<(i64, i64)>>,
    /// `*`: the unplaced reads at the end of the file.
    pub unplaced: bool,
    /// `.`: every record of the file.
    pub all: bool,
}

impl RegionSet {
    /// Resolves named interval lists against the header (`sam_hdr_name2tid`, so `AN:` names
    /// work). `.` and `*` are the special regions; an unknown name is skipped with htslib's
    /// warning, given to `warn`.
    pub fn resolve(list: &RegionList, header: &Header, mut warn: impl FnMut(String)) -> RegionSet {
        let mut set = RegionSet::default();
        for (name, intervals) in list {
            match name.as_slice() {
                b"." => set.all = true,
                b"*" => set.unplaced = true,
                _ => match header.tid(name) {
                    Some(tid) => set.by_tid.entry(tid).or_default().extend(intervals),
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

    /// Adds `[beg, end)` on `tid` and merges (samtools' `_reglist_push` then `_reglist_merge`).
    pub fn add(&mut self, tid: usize, beg: i64, end: i64) {
        self.add_all([(tid, beg, end)]);
    }

    /// Adds `(tid, beg, end)` intervals, then merges once (`-P` adds its mates' positions so).
    pub fn add_all(&mut self, intervals: impl IntoIterator<Item = (usize, i64, i64)>) {
        let mut touched = Vec::new();
        for (tid, beg, end) in intervals {
            self.by_tid.entry(tid).or_default().push((beg, end));
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

    /// True when `[beg, end)` on `tid` overlaps a region.
    pub fn overlaps(&self, tid: i32, beg: i64, end: i64) -> bool {
        let Some(v) = usize::try_from(tid).ok().and_then(|t| self.by_tid.get(&t)) else {
            return false;
        };
        let n = v.partition_point(|&(b, _)| b < end);
        // Merged intervals are disjoint and sorted, so only the last one starting before `end`
        // can reach past `beg`.
        n > 0 && v[n - 1].1 > beg
    }

    /// True when there is nothing to read.
    pub fn is_empty(&self) -> bool {
        !self.all && !self.unplaced && self.by_tid.values().all(Vec::is_empty)
    }

    /// The regions as (tid, intervals).
    pub fn iter(&self) -> impl Iterator<Item = (usize, &[(i64, i64)])> {
        self.by_tid.iter().map(|(t, v)| (*t, v.as_slice()))
    }
}

/// Sorts and merges overlapping or touching intervals (`bed_unify`, `_reglist_merge`).
fn merge(v: &mut Vec<(i64, i64)>) {
    v.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for &(b, e) in v.iter() {
        match out.last_mut() {
            Some(last) if last.1 >= b => last.1 = last.1.max(e),
            _ => out.push((b, e)),
        }
    }
    *v = out;
}

/// Where a multi-region query is.
enum Stage {
    Chunks,
    /// Seek to the unplaced reads and skip placed ones.
    UnplacedStart,
    /// Every record to the end of the file.
    Rest,
    Done,
}

/// A merged chunk to read: its bytes' fetch limit, and the last of the regions it serves as
/// `(tid, end)`; once a record at or past that has been read, the rest of the chunk can serve
/// none of them and is skipped, as htslib's multi-region iterator skips the chunks of finished
/// intervals (and, within a chunk, as its single-region iterator stops at the first record
/// past the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ToRead {
    chunk: Chunk,
    limit: u64,
    until: (i32, i64),
}

/// The records of a [`RegionSet`] in file order, each once.
pub struct MultiQuery<'r> {
    reader: &'r mut Reader,
    regions: RegionSet,
    chunks: Vec<ToRead>,
    current: Option<usize>,
    position: VirtualOffset,
    /// `(tid, pos)` of the last record read from the chunks.
    last: Option<(i32, i64)>,
    stage: Stage,
    plan: Plan,
}

impl Reader {
    /// Starts a multi-region query (the index must be found: [`Reader::select_index`]; the
    /// references the regions name are loaded). All intervals are planned as one query
    /// ([`index::plan`]), the byte source is told the spans (a remote file fetches them ahead),
    /// and cached parts of the file are shown current ([`Reader::confirm`]) before this
    /// returns; the chunks are then merged into one list read in file order.
    pub fn query_regions(&mut self, regions: RegionSet) -> Result<MultiQuery<'_>> {
        let mut wanted = Vec::new();
        if !regions.all {
            for (tid, intervals) in regions.iter() {
                for &(beg, end) in intervals {
                    if end < beg || end <= 0 {
                        continue;
                    }
                    wanted.push(Region {
                        tid,
                        beg: beg.max(0) as u64,
                        end: end as u64,
                    });
                }
            }
        }
        // `*` needs every reference's pseudo-bin (where the unplaced reads start); `.` reads
        // the whole file and needs none.
        let needed = if regions.unplaced && !regions.all {
            Wanted::all()
        } else if regions.all {
            Wanted::none()
        } else {
            Wanted::refs(regions.iter().map(|(tid, _)| tid))
        };
        self.ensure_index_for(&needed, &wanted)?;
        let size = self.size()?;
        let index = self.index().ok_or_else(|| Error::NoIndex {
            name: self.location().to_string(),
        })?;
        let the_plan = plan::plan(
            index,
            &wanted,
            self.block_starts(),
            size,
            &self.plan_options(),
        );
        let chunks: Vec<ToRead> = the_plan
            .regions
            .iter()
            .zip(&wanted)
            .flat_map(|(r, w)| {
                let until = (w.tid as i32, w.end as i64);
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
        let chunks = merge_chunks(chunks);
        // The chunks are read in file order, so the spans are wanted in file order too.
        self.bgzf_mut().advise(&the_plan.file_order());
        self.confirm()?;
        let stage = if regions.all {
            let first = self.first_record();
            self.bgzf_mut().seek(first)?;
            Stage::Rest
        } else {
            Stage::Chunks
        };
        Ok(MultiQuery {
            reader: self,
            regions,
            chunks,
            current: None,
            position: VirtualOffset::default(),
            last: None,
            stage,
            plan: the_plan,
        })
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

impl MultiQuery<'_> {
    /// The plan of the query's intervals (its spans are what a remote file is asked for).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The merged chunks this query may read, in file order.
    pub fn chunks(&self) -> Vec<Chunk> {
        self.chunks.iter().map(|c| c.chunk).collect()
    }

    /// The reader being queried: its header, location and last record read.
    pub fn reader(&self) -> &Reader {
        self.reader
    }

    /// [`Reader::has_eof_marker`] of the file being read.
    pub fn has_eof_marker(&mut self) -> Result<bool> {
        self.reader.has_eof_marker()
    }

    /// The next record overlapping a region, or `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        loop {
            match self.stage {
                Stage::Done => return Ok(None),
                Stage::Rest => {
                    let r = self.reader.read_record()?;
                    if r.is_none() {
                        self.stage = Stage::Done;
                    }
                    return Ok(r);
                }
                Stage::UnplacedStart => {
                    let start = self.reader.index().and_then(|i| i.unplaced_start());
                    let Some(start) = start else {
                        self.stage = Stage::Done;
                        continue;
                    };
                    let start = if start.raw() == 0 {
                        self.reader.first_record()
                    } else {
                        start
                    };
                    self.reader.bgzf_mut().seek(start)?;
                    // The first block of unplaced reads may hold placed ones: skip them.
                    loop {
                        match self.reader.read_record()? {
                            None => {
                                self.stage = Stage::Done;
                                return Ok(None);
                            }
                            Some(r) if r.ref_id() >= 0 => continue,
                            Some(r) => {
                                self.stage = Stage::Rest;
                                return Ok(Some(r));
                            }
                        }
                    }
                }
                Stage::Chunks => {
                    if let Some(r) = self.next_in_chunks()? {
                        return Ok(Some(r));
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

    fn next_in_chunks(&mut self) -> Result<Option<Record>> {
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
                    return Ok(None);
                }
                let ToRead { chunk, limit, .. } = self.chunks[next];
                if self.current.is_none() || chunk.start > self.position {
                    self.reader.bgzf_mut().seek_limit(chunk.start, limit)?;
                    self.position = chunk.start;
                }
                self.current = Some(next);
            }
            let Some(r) = self.reader.read_record()? else {
                self.current = Some(self.chunks.len());
                return Ok(None);
            };
            self.position = self.reader.virtual_offset();
            self.last = Some((r.ref_id(), i64::from(r.pos())));
            if self
                .regions
                .overlaps(r.ref_id(), i64::from(r.pos()), r.end_pos())
            {
                return Ok(Some(r));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_and_overlap() {
        let mut v = vec![(10, 20), (0, 5), (5, 8), (15, 30), (40, 50)];
        merge(&mut v);
        assert_eq!(v, vec![(0, 8), (10, 30), (40, 50)]);
        let mut s = RegionSet::default();
        s.add(1, 100, 200);
        s.add(1, 300, 301);
        assert!(s.overlaps(1, 150, 151));
        assert!(s.overlaps(1, 0, 101));
        assert!(!s.overlaps(1, 200, 300));
        assert!(s.overlaps(1, 300, 300 + 1));
        assert!(!s.overlaps(0, 150, 151));
        assert!(!s.overlaps(-1, 150, 151));
        let c = |a: u64, b: u64, limit: u64, until: (i32, i64)| ToRead {
            chunk: Chunk {
                start: VirtualOffset::from_raw(a),
                end: VirtualOffset::from_raw(b),
            },
            limit,
            until,
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
