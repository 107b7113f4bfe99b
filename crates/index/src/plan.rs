//! The plan of a whole query (docs/ARCHITECTURE.md, rules 2, 3 and 5): for every region, its
//! chunks and the byte limit each is read with, and the byte spans to fetch, each with the
//! regions it serves. The plan is the one place a byte end is computed; the readers below take
//! it as given.
//!
//! ```
//! # fn main() -> Result<(), index::Error> {
//! # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"),
//! #     "/../../fixtures/conformance/data/rand.bam.bai")).unwrap();
//! let index = index::Index::from_bytes("rand.bam.bai", &bytes)?;
//! let regions = [
//!     index::plan::Region { tid: 0, beg: 9_999, end: 10_500 },
//!     index::plan::Region { tid: 1, beg: 4_999, end: 5_400 },
//! ];
//! let starts = index.block_starts();
//! let plan = index::plan::plan(&index, &regions, &starts, 389_340, &Default::default());
//! assert_eq!(plan.regions.len(), 2);
//! for span in &plan.spans {
//!     println!("bytes {}-{} serve regions {:?}", span.start, span.end - 1, span.regions);
//! }
//! # Ok(()) }
//! ```

use std::ops::Range;

use bgzf::{byte_end, VirtualOffset};

use crate::span::split_range;
use crate::{Chunk, Index};

/// One region of a query: reference `tid`, 0-based half-open `[beg, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub tid: usize,
    pub beg: u64,
    pub end: u64,
}

/// Limits for [`plan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Pieces separated by less than this many bytes are fetched together (default 64 KiB).
    pub max_gap: u64,
    /// Gap-separated pieces are joined only while the span stays at most this long (default
    /// 5 MB).
    pub max_merged_span: u64,
    /// No span is longer than this, if a known block start allows a cut (default 8 MiB; some
    /// object stores fail very large ranges).
    pub max_span: u64,
    /// Ask for a region's bytes only up to where its records probably end
    /// ([`Index::estimate_end`]) rather than to the end of its chunks; the reader reads on past
    /// the estimate when the region goes on (default on).
    pub tight_ends: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_gap: 64 * 1024,
            max_merged_span: 5_000_000,
            max_span: 8 * 1024 * 1024,
            tight_ends: true,
        }
    }
}

/// How one region is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionPlan {
    /// The chunks htslib would read, in order; empty for a region with nothing to read.
    pub chunks: Vec<Chunk>,
    /// For each chunk, the byte limit it is read with (`seek_limit(chunk.start, limit)`): the
    /// end of the last span that holds its bytes, or, for a chunk not fetched ahead (past the
    /// tight end), the end of its own bytes.
    pub limits: Vec<u64>,
    /// False where htslib has no iterator for the region (a reference beyond the index, an
    /// end before the start): samtools warns and goes on.
    pub valid: bool,
}

/// A byte range of the file to fetch in one request, and the regions (indexes into the query's
/// regions) whose chunks it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    /// One past the last byte (rule 2).
    pub end: u64,
    pub regions: Vec<usize>,
}

impl Span {
    /// The number of bytes to fetch.
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// True when there is nothing to fetch.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// A query's plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// One per region, in the query's order.
    pub regions: Vec<RegionPlan>,
    /// The spans to fetch, in file order, without overlaps.
    pub spans: Vec<Span>,
}

impl Plan {
    /// The spans' byte ranges in the order a reader going through the regions in turn uses
    /// them (a span serving several regions in a row once; a span needed again after others,
    /// again): the advice for the byte source.
    pub fn read_order(&self) -> Vec<Range<u64>> {
        let mut out: Vec<Range<u64>> = Vec::new();
        for r in 0..self.regions.len() {
            for s in self.spans.iter().filter(|s| s.regions.contains(&r)) {
                let range = s.start..s.end;
                if out.last() != Some(&range) {
                    out.push(range);
                }
            }
        }
        out
    }

    /// The bytes the spans cover.
    pub fn bytes(&self) -> u64 {
        self.spans.iter().map(Span::len).sum()
    }
}

/// A chunk's bytes to fetch ahead: `[start, end)`, for region `region`.
#[derive(Clone, Copy, Debug)]
struct Piece {
    start: u64,
    end: u64,
    region: usize,
}

/// Plans `regions` (in the order they will be read) over `index`, for a file of `size` bytes
/// whose known block starts are `starts` (sorted, e.g. [`Index::block_starts`]).
///
/// Each region's chunks are htslib's ([`Index::query_checked`]). With `tight_ends`, a chunk's
/// bytes are cut at the estimated end of the region's records (the block holding
/// [`Index::estimate_end`] read whole). The pieces of all regions are then sorted, their union
/// taken, cut at known block starts where longer than `max_span`, and joined while they touch,
/// or their gap is below `max_gap` and the span stays within `max_merged_span` (never past
/// `max_span`).
pub fn plan(
    index: &Index,
    regions: &[Region],
    starts: &[u64],
    size: u64,
    options: &Options,
) -> Plan {
    let mut region_plans = Vec::with_capacity(regions.len());
    let mut pieces = Vec::new();
    for (i, r) in regions.iter().enumerate() {
        let Some(chunks) = index.query_checked(r.tid, r.beg, r.end) else {
            region_plans.push(RegionPlan {
                chunks: Vec::new(),
                limits: Vec::new(),
                valid: false,
            });
            continue;
        };
        let cut = if options.tight_ends {
            index
                .estimate_end(r.tid, r.end)
                .map(|e| byte_end(VirtualOffset::new(e.coffset(), 1), starts, size))
        } else {
            None
        };
        for c in &chunks {
            let start = c.start.coffset().min(size);
            let mut end = byte_end(c.end, starts, size).max(start);
            if let Some(cut) = cut {
                end = end.min(cut.max(start));
            }
            if end > start {
                pieces.push(Piece {
                    start,
                    end,
                    region: i,
                });
            }
        }
        region_plans.push(RegionPlan {
            limits: vec![0; chunks.len()],
            chunks,
            valid: true,
        });
    }
    let spans = merge(pieces, starts, options);
    for plan in &mut region_plans {
        for (c, limit) in plan.chunks.iter().zip(plan.limits.iter_mut()) {
            let start = c.start.coffset().min(size);
            let own = byte_end(c.end, starts, size).max(start);
            // The last span holding the start of this chunk's bytes, and those after it that
            // continue them without a gap.
            let mut end = None;
            for s in spans.iter().filter(|s| s.end > start && s.start < own) {
                match end {
                    None if s.start <= start => end = Some(s.end),
                    Some(e) if s.start == e => end = Some(s.end),
                    _ => {}
                }
            }
            *limit = end.unwrap_or(own);
        }
    }
    Plan {
        regions: region_plans,
        spans,
    }
}

fn merge(mut pieces: Vec<Piece>, starts: &[u64], options: &Options) -> Vec<Span> {
    pieces.sort_by_key(|p| (p.start, p.end));
    let mut union: Vec<Range<u64>> = Vec::new();
    for p in &pieces {
        match union.last_mut() {
            Some(last) if p.start <= last.end => last.end = last.end.max(p.end),
            _ => union.push(p.start..p.end),
        }
    }
    let mut spans: Vec<Span> = Vec::new();
    for range in union {
        for piece in split_range(range, starts, options.max_span) {
            if let Some(span) = spans.last_mut() {
                let new_end = span.end.max(piece.end);
                let new_len = new_end - span.start;
                let touching = piece.start <= span.end;
                let close = piece.start.saturating_sub(span.end) < options.max_gap
                    && new_len <= options.max_merged_span;
                if new_len <= options.max_span && (touching || close) {
                    span.end = new_end;
                    continue;
                }
            }
            spans.push(Span {
                start: piece.start,
                end: piece.end,
                regions: Vec::new(),
            });
        }
    }
    // Each span serves the regions whose pieces it overlaps.
    for p in &pieces {
        let first = spans.partition_point(|s| s.end <= p.start);
        for s in spans[first..].iter_mut().take_while(|s| s.start < p.end) {
            if !s.regions.contains(&p.region) {
                s.regions.push(p.region);
            }
        }
    }
    for s in &mut spans {
        s.regions.sort_unstable();
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    const KB: u64 = 1024;

    /// One reference of a test BAI: its bins `(bin, [(start, end)])` as raw virtual offsets,
    /// and its linear index.
    type TestRef = (Vec<(u32, Vec<(u64, u64)>)>, Vec<u64>);

    fn bai(refs: &[TestRef]) -> Index {
        let mut b = b"BAI\x01".to_vec();
        b.extend_from_slice(&(refs.len() as u32).to_le_bytes());
        for (bins, linear) in refs {
            b.extend_from_slice(&(bins.len() as u32).to_le_bytes());
            for (bin, chunks) in bins {
                b.extend_from_slice(&bin.to_le_bytes());
                b.extend_from_slice(&(chunks.len() as u32).to_le_bytes());
                for (u, v) in chunks {
                    b.extend_from_slice(&u.to_le_bytes());
                    b.extend_from_slice(&v.to_le_bytes());
                }
            }
            b.extend_from_slice(&(linear.len() as u32).to_le_bytes());
            for l in linear {
                b.extend_from_slice(&l.to_le_bytes());
            }
        }
        Index::from_bytes("test.bai", &b).unwrap()
    }

    fn vo(c: u64) -> u64 {
        c << 16
    }

    /// One reference whose records sit in 16 kbp bin `4681 + w` at bytes `[w MB, w MB + len)`
    /// for windows 0..n, with a linear index pointing at each window's first byte.
    fn windows(n: u64, len: u64) -> Index {
        let mb = 1024 * KB;
        let bins = (0..n)
            .map(|w| (4681 + w as u32, vec![(vo(w * mb), vo(w * mb + len))]))
            .collect();
        let linear = (0..n).map(|w| vo(w * mb)).collect();
        bai(&[(bins, linear)])
    }

    fn starts(n: u64) -> Vec<u64> {
        (0..=n).map(|w| w * 1024 * KB).collect()
    }

    fn region(w: u64) -> Region {
        Region {
            tid: 0,
            beg: w * 16384,
            end: w * 16384 + 100,
        }
    }

    #[test]
    fn close_regions_share_a_span_and_far_ones_do_not() {
        // Windows a megabyte apart: each region its own span, in file order.
        let idx = windows(4, 10 * KB);
        let st = starts(4);
        let p = plan(
            &idx,
            &[region(2), region(0)],
            &st,
            8 << 20,
            &Options::default(),
        );
        let bounds: Vec<(u64, u64)> = p.spans.iter().map(|s| (s.start, s.end)).collect();
        // A chunk ending at uoffset 0 needs nothing of the block there.
        assert_eq!(bounds, vec![(0, 10 * KB), (2048 * KB, 2058 * KB)]);
        assert_eq!(p.spans[0].regions, vec![1]);
        assert_eq!(p.spans[1].regions, vec![0]);
        // Read in the regions' order, not the file's.
        assert_eq!(p.read_order(), vec![2048 * KB..2058 * KB, 0..10 * KB]);
        // With a gap allowance over a megabyte, one span serves both.
        let o = Options {
            max_gap: 3 << 20,
            ..Options::default()
        };
        let p = plan(&idx, &[region(0), region(2)], &st, 8 << 20, &o);
        assert_eq!(p.spans.len(), 1);
        assert_eq!(p.spans[0].regions, vec![0, 1]);
        assert_eq!(p.read_order().len(), 1);
        assert_eq!(p.regions[0].limits, vec![p.spans[0].end]);
    }

    #[test]
    fn repeated_and_overlapping_regions() {
        let idx = windows(4, 10 * KB);
        let st = starts(4);
        let o = Options::default();
        let p = plan(&idx, &[region(1), region(3), region(1)], &st, 8 << 20, &o);
        assert_eq!(
            p.spans.len(),
            2,
            "a region asked twice is fetched as one span"
        );
        let one = 1024 * KB..1034 * KB;
        let three = 3072 * KB..3082 * KB;
        assert_eq!(p.read_order(), vec![one.clone(), three, one]);
        // Overlapping regions in a row: one span, read once.
        let wide = Region {
            tid: 0,
            beg: 16384,
            end: 16384 + 5000,
        };
        let p = plan(&idx, &[region(1), wide], &st, 8 << 20, &o);
        assert_eq!(p.spans.len(), 1);
        assert_eq!(p.read_order().len(), 1);
    }

    #[test]
    fn a_long_chunk_is_split_and_read_with_the_last_span_as_limit() {
        // One chunk of 20 MB with a known block start every MB.
        let mb = 1024 * KB;
        let idx = bai(&[(vec![(4681, vec![(0, vo(20 * mb))])], vec![0])]);
        let st: Vec<u64> = (0..=20).map(|i| i * mb).collect();
        let o = Options {
            tight_ends: false,
            ..Options::default()
        };
        let r = Region {
            tid: 0,
            beg: 0,
            end: 100,
        };
        let p = plan(&idx, &[r], &st, 30 * mb, &o);
        let bounds: Vec<(u64, u64)> = p.spans.iter().map(|s| (s.start, s.end)).collect();
        assert_eq!(
            bounds,
            vec![(0, 8 * mb), (8 * mb, 16 * mb), (16 * mb, 20 * mb)]
        );
        assert!(p.spans.iter().all(|s| s.regions == vec![0]));
        assert_eq!(
            p.read_order().len(),
            3,
            "one region served by several spans"
        );
        assert_eq!(p.regions[0].limits, vec![20 * mb]);
        assert_eq!(p.bytes(), 20 * mb);
    }

    #[test]
    fn tight_ends_cut_at_the_next_window_and_leave_later_chunks_to_the_reader() {
        let mb = 1024 * KB;
        // One reference: a 4 MB chunk in window 0 and a chunk at 6 MB in window 3; the linear
        // index says window 1 starts at 100 KB.
        let bins = vec![
            (4681, vec![(0, vo(4 * mb))]),
            (4684, vec![(vo(6 * mb), vo(7 * mb))]),
        ];
        let linear = vec![0, vo(100 * KB), vo(3 * mb), vo(6 * mb)];
        let idx = bai(&[(bins, linear)]);
        let st = vec![0, 100 * KB, 164 * KB, 3 * mb, 4 * mb, 6 * mb, 7 * mb];
        let r = Region {
            tid: 0,
            beg: 0,
            end: 16384,
        };
        let p = plan(&idx, &[r], &st, 8 * mb, &Options::default());
        // The block at 100 KB is read whole: up to the next known start.
        assert_eq!(p.spans.len(), 1);
        assert_eq!((p.spans[0].start, p.spans[0].end), (0, 164 * KB));
        assert_eq!(p.regions[0].limits, vec![164 * KB]);
        // Without the estimate: the whole chunk.
        let loose = Options {
            tight_ends: false,
            ..Options::default()
        };
        let p = plan(&idx, &[r], &st, 8 * mb, &loose);
        assert_eq!((p.spans[0].start, p.spans[0].end), (0, 4 * mb));

        // A region over windows 0-3: chunks in bins 4681 and 4684 (and the estimate is beyond
        // the linear index: no cut).
        let r = Region {
            tid: 0,
            beg: 0,
            end: 4 * 16384,
        };
        let p = plan(&idx, &[r], &st, 8 * mb, &Options::default());
        assert_eq!(p.regions[0].chunks.len(), 2);
        assert_eq!(p.bytes(), 4 * mb + mb);
        // A region ending in window 2: the second chunk lies past the estimate (3 MB), so it is
        // not fetched ahead and is read with its own end as limit.
        let r = Region {
            tid: 0,
            beg: 0,
            end: 2 * 16384 + 1,
        };
        let p = plan(&idx, &[r], &st, 8 * mb, &Options::default());
        let chunks = &p.regions[0].chunks;
        if chunks.len() == 2 {
            assert_eq!(p.regions[0].limits[1], 7 * mb);
        }
        assert!(p.spans.iter().all(|s| s.end <= 4 * mb), "{:?}", p.spans);
    }

    #[test]
    fn invalid_regions_have_no_chunks() {
        let idx = windows(2, KB);
        let p = plan(
            &idx,
            &[Region {
                tid: 5,
                beg: 0,
                end: 10,
            }],
            &starts(2),
            4 << 20,
            &Options::default(),
        );
        assert!(!p.regions[0].valid);
        assert!(p.spans.is_empty());
        assert!(p.read_order().is_empty());
    }
}
