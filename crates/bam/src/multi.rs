//! Multi-region queries (`samtools view -M`, `--region-file`, `-P`): every record that overlaps
//! any of the regions, once, in file order, as htslib's multi-region iterator returns them.
//!
//! Every interval of every region is one region of a single [`index::plan`] (so a BED file of
//! thousands of lines is one plan, its spans fetched ahead as for any query); the chunks of all
//! of them are then merged into one list, read in file order ([`MultiQuery::chunks`]).

use std::collections::BTreeMap;

use bgzf::VirtualOffset;
use index::plan::{self, Region};
use index::{Chunk, Wanted};

use crate::filter::bed::RegionList;
use crate::reader::Reader;
use crate::record::Record;
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

/// The records of a [`RegionSet`] in file order, each once.
pub struct MultiQuery<'r> {
    reader: &'r mut Reader,
    regions: RegionSet,
    chunks: Vec<Chunk>,
    fetch_ends: Vec<u64>,
    current: Option<usize>,
    position: VirtualOffset,
    stage: Stage,
}

impl Reader {
    /// Starts a multi-region query (the index must be found: [`Reader::select_index`]; the
    /// references the regions name are loaded). All intervals are planned as one query
    /// ([`index::plan`]), the byte source is told the spans (a remote file fetches them ahead),
    /// and cached parts of the file are shown current ([`Reader::confirm`]) before this
    /// returns; the chunks are then merged into one list read in file order.
    pub fn query_regions(&mut self, regions: RegionSet) -> Result<MultiQuery<'_>> {
        // `*` needs every reference's pseudo-bin (where the unplaced reads start); `.` reads
        // the whole file and needs none.
        let needed = if regions.unplaced && !regions.all {
            Wanted::all()
        } else if regions.all {
            Wanted::none()
        } else {
            Wanted::refs(regions.iter().map(|(tid, _)| tid))
        };
        self.ensure_index(&needed)?;
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
        let mut chunks: Vec<(Chunk, u64)> = the_plan
            .regions
            .iter()
            .flat_map(|r| r.chunks.iter().copied().zip(r.limits.iter().copied()))
            .collect();
        chunks = merge_chunks(chunks);
        self.bgzf_mut().advise(&the_plan.read_order());
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
            fetch_ends: chunks.iter().map(|c| c.1).collect(),
            chunks: chunks.into_iter().map(|c| c.0).collect(),
            current: None,
            position: VirtualOffset::default(),
            stage,
        })
    }
}

/// Sorts chunks by start and joins those that overlap or touch; a joined chunk is read with the
/// largest of the limits.
fn merge_chunks(mut chunks: Vec<(Chunk, u64)>) -> Vec<(Chunk, u64)> {
    chunks.sort_by_key(|(c, _)| (c.start, c.end));
    let mut out: Vec<(Chunk, u64)> = Vec::with_capacity(chunks.len());
    for (c, limit) in chunks {
        match out.last_mut() {
            Some((last, last_limit)) if c.start <= last.end => {
                last.end = last.end.max(c.end);
                *last_limit = (*last_limit).max(limit);
            }
            _ => out.push((c, limit)),
        }
    }
    out
}

impl MultiQuery<'_> {
    /// The merged chunks this query reads, in file order.
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// The header of the file being read.
    pub fn header(&self) -> &Header {
        self.reader.header()
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
            let need_next = match self.current {
                None => true,
                Some(i) => self.position >= self.chunks[i].end,
            };
            if need_next {
                let next = self.current.map_or(0, |i| i + 1);
                if next >= self.chunks.len() {
                    return Ok(None);
                }
                let (start, limit) = (self.chunks[next].start, self.fetch_ends[next]);
                if self.current.is_none() || start > self.position {
                    self.reader.bgzf_mut().seek_limit(start, limit)?;
                    self.position = start;
                }
                self.current = Some(next);
            }
            let Some(r) = self.reader.read_record()? else {
                self.current = Some(self.chunks.len());
                return Ok(None);
            };
            self.position = self.reader.virtual_offset();
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
        let c = |a: u64, b: u64| Chunk {
            start: VirtualOffset::from_raw(a),
            end: VirtualOffset::from_raw(b),
        };
        assert_eq!(
            merge_chunks(vec![
                (c(50, 60), 9),
                (c(10, 20), 2),
                (c(15, 30), 5),
                (c(30, 40), 3)
            ]),
            vec![(c(10, 40), 5), (c(50, 60), 9)]
        );
    }
}
