//! Region queries: one plan for all the regions of a query ([`index::plan`]), the byte source
//! told the spans in the order they will be read (so a remote one fetches them ahead, several
//! at once), and records returned region by region with samtools' semantics.

use bgzf::VirtualOffset;
use index::plan::{self, Plan, Region};
use index::{Chunk, Wanted};

use crate::reader::Reader;
use crate::record::{Record, RecordRef};
use crate::region::Target;
use crate::{Error, Result};

/// How a query's chunks become requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FetchPlan {
    /// One plan for the whole query: chunks a small gap apart fetched as one span, regions'
    /// ends estimated from the index, spans fetched ahead in parallel.
    #[default]
    Planned,
    /// Each run of touching chunks read on its own, one after another, to the end of its last
    /// block (htslib PR #1998's behaviour; with [`hfile::RangeMode::Unbounded`], htslib's).
    PerChunk,
}

/// Where one target stands.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    /// The chunk being read; `None` before the first.
    chunk: Option<usize>,
    /// Virtual offset after the last record read.
    position: VirtualOffset,
    started: bool,
}

/// Records of the targets of one query, in samtools' order: target by target as given, each
/// the records overlapping it in file order; reading a target stops at its first record past
/// the end. A target asked twice is read twice.
pub struct Query<'r> {
    reader: &'r mut Reader,
    targets: Vec<Target>,
    /// The plan of the `Ref` targets, in their order.
    plan: Plan,
    /// For each target, its region in the plan.
    region_of: Vec<Option<usize>>,
    /// For `*` and `.`: where reading starts.
    starts: Vec<Option<VirtualOffset>>,
    current: usize,
    cursor: Cursor,
}

impl Reader {
    /// Starts a query of one target. The index must be loaded ([`Reader::load_index`]).
    pub fn query(&mut self, target: Target) -> Result<Query<'_>> {
        self.query_all(&[target])
    }

    /// Starts a query of several targets, planned as one: their spans are known before the
    /// first record is read, and a remote file fetches them ahead. The index must be loaded.
    pub fn query_all(&mut self, targets: &[Target]) -> Result<Query<'_>> {
        // The references these targets need; `*` and `.` need every reference's pseudo-bin.
        let whole = targets.iter().any(|t| !matches!(t, Target::Ref { .. }));
        let regions: Vec<Region> = targets
            .iter()
            .filter_map(|t| match *t {
                Target::Ref { tid, beg, end } => Some(Region { tid, beg, end }),
                _ => None,
            })
            .collect();
        let wanted = if whole {
            Wanted::all()
        } else {
            Wanted::refs(regions.iter().map(|r| r.tid))
        };
        self.ensure_index_for(&wanted, &regions)?;
        let index = self.index().ok_or_else(|| Error::NoIndex {
            name: self.location().to_string(),
        })?;
        // The `Ref` targets are `regions`, in order.
        let mut next_region = 0;
        let mut region_of = Vec::with_capacity(targets.len());
        let mut starts = Vec::with_capacity(targets.len());
        for t in targets {
            match *t {
                Target::Ref { .. } => {
                    region_of.push(Some(next_region));
                    next_region += 1;
                    starts.push(None);
                }
                // Offset 0 is htslib's "no seek": read on from the first record.
                Target::Unplaced => {
                    region_of.push(None);
                    starts.push(index.unplaced_start().map(|s| {
                        if s.raw() == 0 {
                            self.first_record()
                        } else {
                            s
                        }
                    }));
                }
                Target::All => {
                    region_of.push(None);
                    starts.push(Some(self.first_record()));
                }
            }
        }
        let fetch = self.fetch_plan();
        // A server that does not tell the size (htslib never asks it) leaves the spans bounded
        // by the index alone and the past-the-end check undone.
        let known_size = match self.size() {
            Err(e) if e.is_size_unknown() => None,
            other => Some(other?),
        };
        let size = known_size.unwrap_or(u64::MAX);
        let index = self.index().ok_or_else(|| Error::NoIndex {
            name: self.location().to_string(),
        })?;
        let starts_known = self.block_starts();
        let plan = match fetch {
            FetchPlan::Planned => {
                plan::plan(index, &regions, starts_known, size, &self.plan_options())
            }
            FetchPlan::PerChunk => plan::per_chunk(index, &regions, starts_known, size),
        };
        // Every chunk holds a record, so one that starts at or past the end of the file shows
        // an index that does not fit it (samtools reads nothing there and exits 0).
        let past_end = plan
            .regions
            .iter()
            .flat_map(|r| r.chunks.iter())
            .find(|c| c.start.coffset() >= size);
        if let Some(c) = past_end {
            // The size may be a cached one, an older file's: a stale entry is the answer then.
            self.confirm()?;
            return Err(Error::IndexPastEnd {
                name: self.location().to_string(),
                offset: c.start,
                size,
            });
        }
        if fetch == FetchPlan::Planned {
            self.bgzf_mut().advise(&plan.read_order());
        }
        // With the spans on their way, show that cached parts of the file are current.
        self.confirm()?;
        Ok(Query {
            reader: self,
            targets: targets.to_vec(),
            plan,
            region_of,
            starts,
            current: 0,
            cursor: Cursor {
                chunk: None,
                position: VirtualOffset::default(),
                started: false,
            },
        })
    }
}

impl Query<'_> {
    /// True when the index cannot answer target `i` at all (a reference beyond the index, an
    /// end before the start): samtools warns that the region is invalid and carries on.
    pub fn is_invalid(&self, i: usize) -> bool {
        self.region_of
            .get(i)
            .copied()
            .flatten()
            .is_some_and(|r| !self.plan.regions[r].valid)
    }

    /// The plan of the query's regions.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The header of the file being queried.
    pub fn header(&self) -> &crate::Header {
        self.reader.header()
    }

    /// The file's location and the virtual offset of the last record read (see
    /// [`crate::Reader::last_record_offset`]).
    pub fn last_record(&self) -> (&str, bgzf::VirtualOffset) {
        (self.reader.location(), self.reader.last_record_offset())
    }

    /// [`Reader::has_eof_marker`] of the file being queried.
    pub fn has_eof_marker(&mut self) -> Result<bool> {
        self.reader.has_eof_marker()
    }

    fn next_target(&mut self) {
        self.current += 1;
        self.cursor = Cursor {
            chunk: None,
            position: VirtualOffset::default(),
            started: false,
        };
    }

    /// The next record, or `None` when every target is exhausted. Before the first, the
    /// parts of the file that came from the cache are shown current ([`Reader::confirm`]).
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        Ok(self.next_record_ref()?.map(|r| r.to_owned_record()))
    }

    /// The next record read in place (see [`Reader::read_record_ref`]): no copy, no
    /// allocation. `None` when every target is exhausted.
    pub fn next_record_ref(&mut self) -> Result<Option<RecordRef<'_>>> {
        while self.current < self.targets.len() {
            let found = match self.targets[self.current] {
                Target::Ref { tid, beg, end } => self.next_in_region(tid, beg, end)?,
                Target::Unplaced | Target::All => self.next_from_start()?,
            };
            if found {
                let record = self.reader.last_record_ref();
                debug_assert!(record.is_some(), "the record just read is held");
                return Ok(record);
            }
            self.next_target();
        }
        Ok(None)
    }

    /// `*` and `.`: every record from the start offset to the end of the file. True when a
    /// record was read (the reader holds it).
    fn next_from_start(&mut self) -> Result<bool> {
        let Some(start) = self.starts[self.current] else {
            return Ok(false);
        };
        if !self.cursor.started {
            self.cursor.started = true;
            self.reader.bgzf_mut().seek(start)?;
        }
        Ok(self.reader.read_record_ref_held()?.is_some())
    }

    /// htslib's `hts_itr_next` for one region. True when a record of the region was read (the
    /// reader holds it).
    fn next_in_region(&mut self, tid: usize, beg: u64, end: u64) -> Result<bool> {
        let Some(r) = self.region_of[self.current] else {
            return Ok(false);
        };
        let region = &self.plan.regions[r];
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
                    self.reader.bgzf_mut().seek_limit(start, limit)?;
                    self.cursor.position = start;
                }
                self.cursor.chunk = Some(next);
            }
            let Some(record) = self.reader.read_record_ref_held()? else {
                // htslib ends the iteration quietly when a chunk points past the end of the file.
                return Ok(false);
            };
            let (ref_id, pos, rec_end) =
                (record.ref_id(), i64::from(record.pos()), record.end_pos());
            self.cursor.position = self.reader.virtual_offset();
            if ref_id != tid as i32 || (pos >= 0 && pos as u64 >= end) {
                return Ok(false);
            }
            if rec_end > beg as i64 && (end as i64) > pos {
                return Ok(true);
            }
        }
    }
}
