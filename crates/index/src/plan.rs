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

use crate::{Chunk, Index};

/// One region of a query: reference `tid`, 0-based half-open `[beg, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// The reference id.
    pub tid: usize,
    /// The start, 0-based.
    pub beg: u64,
    /// The end (exclusive).
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
    /// The first byte.
    pub start: u64,
    /// One past the last byte (rule 2).
    pub end: u64,
    /// The regions (indexes into the query's) whose chunks it holds.
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

    /// The spans' byte ranges in file order: the advice for a reader that reads the chunks of
    /// all regions in file order (the multi-region iterators).
    pub fn file_order(&self) -> Vec<Range<u64>> {
        self.spans.iter().map(|s| s.start..s.end).collect()
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
    let listed = regions
        .iter()
        .map(|r| {
            let chunks = index.query_checked(r.tid, r.beg, r.end);
            let estimate = options
                .tight_ends
                .then(|| index.estimate_end(r.tid, r.end))
                .flatten();
            Listed { chunks, estimate }
        })
        .collect();
    assemble(listed, starts, size, options)
}

/// Plans chunks chosen by the caller (htslib's multi-region iterator lists the chunks of all
/// its intervals in file order) as one region of a plan: no tight end, the same spans and
/// limits as [`plan`] gives. `regions[0]` of the result holds `chunks` as given, each with its
/// limit.
///
/// ```
/// use bgzf::VirtualOffset as V;
/// use index::plan::{plan_chunks, Options};
/// use index::Chunk;
///
/// let chunks = [
///     Chunk::new(V::new(1000, 0), V::new(2000, 10)),      // ends inside the block at 2000
///     Chunk::new(V::new(3000, 0), V::new(4000, 0)),       // 1000-byte gap: merged
///     Chunk::new(V::new(900_000, 5), V::new(900_500, 0)), // far away: its own span
/// ];
/// let starts = [1000, 2000, 2500, 3000, 4000, 900_000, 900_500];
/// let plan = plan_chunks(&chunks, &starts, 1_000_000, &Options::default());
/// let spans: Vec<_> = plan.spans.iter().map(|s| (s.start, s.end)).collect();
/// assert_eq!(spans, [(1000, 4000), (900_000, 900_500)]);
/// assert_eq!(plan.regions[0].limits, [4000, 4000, 900_500]);
/// ```
pub fn plan_chunks(chunks: &[Chunk], starts: &[u64], size: u64, options: &Options) -> Plan {
    let listed = vec![Listed {
        chunks: Some(chunks.to_vec()),
        estimate: None,
    }];
    assemble(listed, starts, size, options)
}

/// Plans byte ranges chosen by the caller, one region each, for a format whose index gives
/// exact byte ends (a CRAM container runs from its offset to the next container's): the same
/// union, cuts at `starts` (where a read may begin) and joins as [`plan`]. Each region's
/// `limits` holds one entry, the end of the last span that continues its range without a gap.
///
/// ```
/// use index::plan::{plan_ranges, Options};
///
/// let ranges = [100..600, 9_000_000..9_000_400, 600..900];
/// let starts = [100, 600, 900, 9_000_000];
/// let plan = plan_ranges(&ranges, &starts, &Options::default());
/// let spans: Vec<_> = plan.spans.iter().map(|s| (s.start, s.end)).collect();
/// assert_eq!(spans, [(100, 900), (9_000_000, 9_000_400)]);
/// assert_eq!(plan.read_order(), [100..900, 9_000_000..9_000_400, 100..900]);
/// ```
pub fn plan_ranges(ranges: &[Range<u64>], starts: &[u64], options: &Options) -> Plan {
    let pieces = ranges
        .iter()
        .enumerate()
        .filter(|(_, r)| r.end > r.start)
        .map(|(region, r)| Piece {
            start: r.start,
            end: r.end,
            region,
        })
        .collect();
    let spans = merge(pieces, starts, options);
    let regions = ranges
        .iter()
        .map(|r| RegionPlan {
            chunks: Vec::new(),
            limits: vec![limit_of(&spans, r)],
            valid: true,
        })
        .collect();
    Plan { regions, spans }
}

/// htslib PR #1998's request pattern, for comparison (`--fetch-mode per-chunk`): no spans
/// fetched ahead, no estimate, each run of touching chunks read on its own to the end of its
/// last block.
pub fn per_chunk(index: &Index, regions: &[Region], starts: &[u64], size: u64) -> Plan {
    let mut out = Plan::default();
    for r in regions {
        let Some(chunks) = index.query_checked(r.tid, r.beg, r.end) else {
            out.regions.push(RegionPlan {
                chunks: Vec::new(),
                limits: Vec::new(),
                valid: false,
            });
            continue;
        };
        let mut limits = vec![0; chunks.len()];
        let mut run_end = 0;
        for i in (0..chunks.len()).rev() {
            if i + 1 == chunks.len() || chunks[i].end != chunks[i + 1].start {
                run_end = byte_end(chunks[i].end, starts, size);
            }
            limits[i] = run_end;
        }
        out.regions.push(RegionPlan {
            chunks,
            limits,
            valid: true,
        });
    }
    out
}

/// One region's chunks (`None`: htslib has no iterator for it) and where its records
/// probably end.
struct Listed {
    chunks: Option<Vec<Chunk>>,
    estimate: Option<VirtualOffset>,
}

/// The byte range of a chunk's blocks: from its first block's start to the end of the block
/// holding its last byte. Every byte end of a plan is computed here.
fn bytes_of(c: &Chunk, starts: &[u64], size: u64) -> Range<u64> {
    let start = c.start.coffset().min(size);
    start..byte_end(c.end, starts, size).max(start)
}

/// The spans of the regions' chunks, and each chunk's limit.
fn assemble(listed: Vec<Listed>, starts: &[u64], size: u64, options: &Options) -> Plan {
    let mut region_plans = Vec::with_capacity(listed.len());
    let mut pieces = Vec::new();
    // Each chunk's own bytes, region by region, for the limits below.
    let mut own: Vec<Vec<Range<u64>>> = Vec::with_capacity(listed.len());
    for (i, Listed { chunks, estimate }) in listed.into_iter().enumerate() {
        let Some(chunks) = chunks else {
            region_plans.push(RegionPlan {
                chunks: Vec::new(),
                limits: Vec::new(),
                valid: false,
            });
            own.push(Vec::new());
            continue;
        };
        // The block holding the estimate is read whole.
        let cut = estimate.map(|e| byte_end(VirtualOffset::new(e.coffset(), 1), starts, size));
        let bytes: Vec<Range<u64>> = chunks.iter().map(|c| bytes_of(c, starts, size)).collect();
        for b in &bytes {
            let end = cut.map_or(b.end, |cut| b.end.min(cut.max(b.start)));
            if end > b.start {
                pieces.push(Piece {
                    start: b.start,
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
        own.push(bytes);
    }
    let spans = merge(pieces, starts, options);
    for (plan, bytes) in region_plans.iter_mut().zip(&own) {
        for (limit, b) in plan.limits.iter_mut().zip(bytes) {
            *limit = limit_of(&spans, b);
        }
    }
    Plan {
        regions: region_plans,
        spans,
    }
}

/// A chunk's limit: the end of the last span holding the start of its bytes and of those
/// after it that continue them without a gap; its own end where no span holds it (a chunk
/// past the tight end, not fetched ahead).
fn limit_of(spans: &[Span], bytes: &Range<u64>) -> u64 {
    let first = spans.partition_point(|s| s.end <= bytes.start);
    let mut end = None;
    for s in spans[first..].iter().take_while(|s| s.start < bytes.end) {
        match end {
            None if s.start <= bytes.start => end = Some(s.end),
            Some(e) if s.start == e => end = Some(s.end),
            _ => {}
        }
    }
    end.unwrap_or(bytes.end)
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

/// Cuts the byte range `r` where it exceeds `max_span`, at known block starts (`starts`,
/// sorted) inside it, each piece as long as the cap allows (a piece is longer only when no
/// block start falls within the cap).
///
/// ```
/// use index::plan::split_range;
/// let starts = [0, 400, 900, 1300, 2100, 2500];
/// assert_eq!(split_range(0..2500, &starts, 1000), vec![0..900, 900..1300, 1300..2100, 2100..2500]);
/// assert_eq!(split_range(0..2500, &[], 1000), vec![0..2500]);
/// ```
pub fn split_range(
    r: std::ops::Range<u64>,
    starts: &[u64],
    max_span: u64,
) -> Vec<std::ops::Range<u64>> {
    let mut out = Vec::new();
    let mut from = r.start;
    while r.end.saturating_sub(from) > max_span {
        let lo = starts.partition_point(|&s| s <= from);
        let hi = starts.partition_point(|&s| s < r.end);
        if lo >= hi {
            break;
        }
        let inside = &starts[lo..hi];
        let limit = from.saturating_add(max_span);
        let within = inside.partition_point(|&s| s <= limit);
        let cut = if within > 0 {
            inside[within - 1]
        } else {
            inside[0]
        };
        out.push(from..cut);
        from = cut;
    }
    if from < r.end || out.is_empty() {
        out.push(from..r.end);
    }
    out
}

#[cfg(test)]
mod tests;
