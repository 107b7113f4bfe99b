use bgzf::VirtualOffset;
use index::Chunk;

use crate::reader::Reader;
use crate::record::Record;
use crate::region::Target;
use crate::{Error, Result};

/// How a query's chunks become requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FetchPlan {
    /// Chunks with small gaps between them are fetched as one span (one bounded request).
    #[default]
    Merged,
    /// Each run of touching chunks is fetched on its own (htslib PR #1998's behaviour).
    PerChunk,
}

/// Records of one region, in file order, with samtools' semantics: a record is returned when it
/// overlaps the region; reading stops at the first record past the region's end.
pub struct Query<'r> {
    reader: &'r mut Reader,
    target: Target,
    chunks: Vec<Chunk>,
    /// For each chunk, the byte end of the request it is fetched with (the readahead limit).
    fetch_ends: Vec<u64>,
    /// Index of the chunk being read; `None` before the first.
    current: Option<usize>,
    /// Virtual offset after the last record read.
    position: VirtualOffset,
    started: bool,
    done: bool,
    invalid: bool,
}

impl Reader {
    /// Starts a query. The index must be loaded ([`Reader::load_index`]).
    pub fn query(&mut self, target: Target) -> Result<Query<'_>> {
        let index = self.index().ok_or_else(|| Error::NoIndex {
            name: self.location().to_string(),
        })?;
        let mut invalid = false;
        let (chunks, done) = match target {
            Target::Ref { tid, beg, end } => match index.query_checked(tid, beg, end) {
                Some(chunks) => {
                    let done = chunks.is_empty();
                    (chunks, done)
                }
                None => {
                    invalid = true;
                    (Vec::new(), true)
                }
            },
            // Offset 0 is htslib's "no seek": read on from the first record.
            Target::Unplaced => match index.unplaced_start() {
                Some(start) => {
                    let start = if start.raw() == 0 {
                        self.first_record()
                    } else {
                        start
                    };
                    (
                        vec![Chunk {
                            start,
                            end: VirtualOffset::from_raw(u64::MAX),
                        }],
                        false,
                    )
                }
                None => (Vec::new(), true),
            },
            Target::All => (
                vec![Chunk {
                    start: self.first_record(),
                    end: VirtualOffset::from_raw(u64::MAX),
                }],
                false,
            ),
        };
        let size = self.size()?;
        let starts = self.block_starts();
        let fetch_ends = match self.fetch_plan() {
            FetchPlan::PerChunk => fetch_ends(&chunks)
                .into_iter()
                .map(|end| bgzf::byte_end(end, starts, size))
                .collect(),
            FetchPlan::Merged => span_ends(&chunks, starts, size),
        };
        Ok(Query {
            reader: self,
            target,
            chunks,
            fetch_ends,
            current: None,
            position: VirtualOffset::default(),
            started: false,
            done,
            invalid,
        })
    }
}

/// Each chunk's limit is the end of the planned span that holds it: chunks a small gap apart are
/// one bounded request, and a seek across the gap stays inside that response.
fn span_ends(chunks: &[Chunk], starts: &[u64], size: u64) -> Vec<u64> {
    let spans = index::span::plan(chunks, starts, size, &index::span::Options::default());
    chunks
        .iter()
        .map(|c| {
            spans
                .iter()
                .find(|s| s.contains(c.start.coffset()))
                .map_or_else(|| bgzf::byte_end(c.end, starts, size), |s| s.end)
        })
        .collect()
}

/// Chunks that touch (one ends where the next starts) are read as one stream, so each chunk's
/// limit is the end of its run: one request instead of one per chunk.
fn fetch_ends(chunks: &[Chunk]) -> Vec<VirtualOffset> {
    let mut ends = vec![VirtualOffset::default(); chunks.len()];
    let mut run_end = VirtualOffset::default();
    for i in (0..chunks.len()).rev() {
        if i + 1 == chunks.len() || chunks[i].end != chunks[i + 1].start {
            run_end = chunks[i].end;
        }
        ends[i] = run_end;
    }
    ends
}

impl Query<'_> {
    /// True when the index cannot answer the region at all (a reference beyond the index, an end
    /// before the start): samtools warns that the region is invalid and carries on.
    pub fn is_invalid(&self) -> bool {
        self.invalid
    }

    /// The header of the file being queried.
    pub fn header(&self) -> &crate::Header {
        self.reader.header()
    }

    /// The next overlapping record, or `None` when the region is exhausted.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        loop {
            if self.done {
                return Ok(None);
            }
            if let Target::Unplaced | Target::All = self.target {
                if !self.started {
                    self.started = true;
                    self.reader.bgzf_mut().seek(self.chunks[0].start)?;
                }
                let record = self.reader.read_record()?;
                if record.is_none() {
                    self.done = true;
                }
                return Ok(record);
            }
            let Target::Ref { tid, beg, end } = self.target else {
                unreachable!()
            };
            let need_next = match self.current {
                None => true,
                Some(i) => self.position >= self.chunks[i].end,
            };
            if need_next {
                let next = self.current.map_or(0, |i| i + 1);
                if next >= self.chunks.len() {
                    self.done = true;
                    return Ok(None);
                }
                let contiguous = self
                    .current
                    .is_some_and(|i| self.chunks[i].end == self.chunks[next].start);
                if !contiguous {
                    let (start, limit) = (self.chunks[next].start, self.fetch_ends[next]);
                    self.reader.bgzf_mut().seek_limit(start, limit)?;
                    self.position = start;
                }
                self.current = Some(next);
            }
            let Some(record) = self.reader.read_record()? else {
                // htslib ends the iteration quietly when a chunk points past the end of the file.
                self.done = true;
                return Ok(None);
            };
            self.position = self.reader.virtual_offset();
            let pos = i64::from(record.pos());
            if record.ref_id() != tid as i32 || (pos >= 0 && pos as u64 >= end) {
                self.done = true;
                return Ok(None);
            }
            let rec_end = record.end_pos();
            if rec_end > beg as i64 && (end as i64) > pos {
                return Ok(Some(record));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(a: u64, b: u64) -> Chunk {
        Chunk {
            start: VirtualOffset::from_raw(a),
            end: VirtualOffset::from_raw(b),
        }
    }

    #[test]
    fn touching_chunks_share_one_fetch_end() {
        let chunks = [c(10, 20), c(20, 30), c(40, 50), c(50, 60), c(70, 80)];
        let ends: Vec<u64> = fetch_ends(&chunks).iter().map(|v| v.raw()).collect();
        assert_eq!(ends, vec![30, 30, 60, 60, 80]);
        assert!(fetch_ends(&[]).is_empty());
    }
}
