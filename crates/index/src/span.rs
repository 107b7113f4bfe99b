//! Planning the byte spans to fetch for a whole query (docs/ARCHITECTURE.md, rule 3).
//!
//! The chunks of every region of a query are gathered, overlaps removed, and neighbours joined
//! into [`Span`]s: contiguous byte ranges of the BAM file, each fetched with one bounded
//! request. Records are still produced region by region by the reader; the plan only says which
//! bytes to ask for.
//!
//! ```
//! use bgzf::VirtualOffset as V;
//! use index::span::{plan, Options};
//! use index::Chunk;
//!
//! let chunks = [
//!     Chunk::new(V::new(1000, 0), V::new(2000, 10)),  // ends inside the block at 2000
//!     Chunk::new(V::new(3000, 0), V::new(4000, 0)),   // 1000-byte gap: merged
//!     Chunk::new(V::new(900_000, 5), V::new(900_500, 0)), // far away: its own span
//! ];
//! let starts = [1000, 2000, 2500, 3000, 4000, 900_000, 900_500];
//! let spans = plan(&chunks, &starts, 1_000_000, &Options::default());
//! assert_eq!(spans.len(), 2);
//! assert_eq!((spans[0].start, spans[0].end), (1000, 4000));
//! assert_eq!((spans[1].start, spans[1].end), (900_000, 900_500));
//! ```

use bgzf::VirtualOffset;

use crate::Chunk;

/// Limits for [`plan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Chunks separated by less than this many bytes are fetched together (default 64 KiB).
    pub max_gap: u64,
    /// Gap-separated chunks are joined only while the span stays at most this long
    /// (default 5 MB).
    pub max_merged_span: u64,
    /// No span is longer than this, if the index offers a block start to split at
    /// (default 8 MiB; some object stores fail very large ranges).
    pub max_span: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_gap: 64 * 1024,
            max_merged_span: 5_000_000,
            max_span: 8 * 1024 * 1024,
        }
    }
}

/// A byte range `[start, end)` of the BAM file to fetch in one request, and the
/// non-overlapping chunks, sorted, that it serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The first byte: the compressed offset of the first chunk's block.
    pub start: u64,
    /// One past the last byte needed (docs/ARCHITECTURE.md, rule 2: [`bgzf::byte_end`]).
    pub end: u64,
    /// The chunks read from this span, in file order.
    pub chunks: Vec<Chunk>,
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

    /// True when the block at compressed offset `coffset` starts inside this span.
    pub fn contains(&self, coffset: u64) -> bool {
        self.start <= coffset && coffset < self.end
    }
}

use bgzf::byte_end;

/// Plans the spans for `chunks` (from one or many regions, in any order, possibly
/// overlapping), given the known block starts (sorted, e.g. [`crate::Index::block_starts`])
/// and the BAM file's size.
///
/// Chunks are sorted and their union taken; a chunk whose bytes alone exceed
/// `options.max_span` is cut at known block starts; then neighbours are joined while they
/// overlap or touch (up to `max_span`), or their gap is below `max_gap` and the result stays
/// within `max_merged_span`. Spans come out in file order.
///
/// ```
/// use bgzf::VirtualOffset as V;
/// use index::span::{plan, Options};
/// use index::Chunk;
///
/// // The same region asked twice, and an overlapping one: fetched once.
/// let a = Chunk::new(V::new(0, 100), V::new(700, 0));
/// let b = Chunk::new(V::new(300, 0), V::new(900, 0));
/// let spans = plan(&[a, a, b], &[0, 300, 700, 900], 2000, &Options::default());
/// assert_eq!(spans.len(), 1);
/// assert_eq!(spans[0].chunks, vec![Chunk::new(V::new(0, 100), V::new(900, 0))]);
/// assert_eq!((spans[0].start, spans[0].end), (0, 900));
/// ```
pub fn plan(chunks: &[Chunk], starts: &[u64], size: u64, options: &Options) -> Vec<Span> {
    let mut sorted: Vec<Chunk> = chunks.iter().copied().filter(|c| c.end > c.start).collect();
    sorted.sort_unstable();
    let mut union: Vec<Chunk> = Vec::with_capacity(sorted.len());
    for c in sorted {
        match union.last_mut() {
            Some(last) if c.start <= last.end => last.end = last.end.max(c.end),
            _ => union.push(c),
        }
    }

    let mut pieces = Vec::with_capacity(union.len());
    for c in union {
        split_chunk(c, starts, size, options.max_span, &mut pieces);
    }

    let mut spans: Vec<Span> = Vec::new();
    for c in pieces {
        let cs = c.start.coffset().min(size);
        let ce = byte_end(c.end, starts, size).max(cs);
        if let Some(span) = spans.last_mut() {
            let new_end = span.end.max(ce);
            let new_len = new_end - span.start;
            let touching = cs <= span.end;
            let close =
                cs.saturating_sub(span.end) < options.max_gap && new_len <= options.max_merged_span;
            if new_len <= options.max_span && (touching || close) {
                span.end = new_end;
                span.chunks.push(c);
                continue;
            }
        }
        spans.push(Span {
            start: cs,
            end: ce,
            chunks: vec![c],
        });
    }
    spans
}

/// Cuts the byte range `r` where it exceeds `max_span`, at known block starts (`starts`,
/// sorted) inside it, each piece as long as the cap allows (a piece is longer only when no
/// block start falls within the cap).
///
/// ```
/// use index::span::split_range;
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

/// Cuts a chunk whose bytes exceed `max_span` at known block starts inside it, each piece as
/// long as the cap allows (a piece is longer only when no block start falls within the cap).
fn split_chunk(c: Chunk, starts: &[u64], size: u64, max_span: u64, out: &mut Vec<Chunk>) {
    let mut rest = c;
    loop {
        let from = rest.start.coffset();
        let to = byte_end(rest.end, starts, size);
        if to.saturating_sub(from) <= max_span {
            break;
        }
        // Block starts b with rest.start < (b, 0) < rest.end.
        let lo = starts.partition_point(|&s| s <= from);
        let hi = starts.partition_point(|&s| VirtualOffset::new(s, 0) < rest.end);
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
        let at = VirtualOffset::new(cut, 0);
        out.push(Chunk::new(rest.start, at));
        rest = Chunk::new(at, rest.end);
    }
    out.push(rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use bgzf::VirtualOffset as V;

    fn ch(a: u64, au: u16, b: u64, bu: u16) -> Chunk {
        Chunk::new(V::new(a, au), V::new(b, bu))
    }

    #[test]
    fn byte_end_rules() {
        let starts = [0, 100, 200, 300];
        assert_eq!(byte_end(V::new(100, 0), &starts, 1000), 100);
        assert_eq!(byte_end(V::new(100, 1), &starts, 1000), 200);
        assert_eq!(byte_end(V::new(150, 1), &starts, 1000), 200);
        assert_eq!(byte_end(V::new(300, 1), &starts, 1000), 1000);
        assert_eq!(byte_end(V::new(300, 1), &starts, 100_000), 300 + 65536);
        assert_eq!(byte_end(V::new(5000, 0), &starts, 1000), 1000);
    }

    #[test]
    fn gap_limits() {
        let o = Options::default();
        let starts: Vec<u64> = vec![];
        // Gap of exactly 64 KiB is not "less than" the limit: separate spans.
        let a = ch(0, 0, 1000, 0);
        let b = ch(1000 + 65536, 0, 1000 + 65536 + 10, 0);
        assert_eq!(plan(&[a, b], &starts, 1 << 30, &o).len(), 2);
        let b = ch(1000 + 65535, 0, 1000 + 65536 + 10, 0);
        let spans = plan(&[b, a], &starts, 1 << 30, &o);
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].chunks, vec![a, b]);
        // Gap-merging stops at the 5 MB merged span.
        let a = ch(0, 0, 4_990_000, 0);
        let b = ch(5_000_000, 0, 5_000_001, 0);
        assert_eq!(plan(&[a, b], &starts, 1 << 30, &o).len(), 2);
        let b = ch(4_999_000, 0, 5_000_000, 0);
        assert_eq!(plan(&[a, b], &starts, 1 << 30, &o).len(), 1);
    }

    #[test]
    fn touching_chunks_merge_beyond_five_mb_but_not_cap() {
        let o = Options::default();
        let starts = [0, 6_000_000, 8_000_000, 9_000_000];
        let a = ch(0, 0, 6_000_000, 10);
        let b = ch(6_000_000, 20, 8_000_000, 0);
        let spans = plan(&[a, b], &starts, 1 << 30, &o);
        assert_eq!(spans.len(), 1);
        assert_eq!((spans[0].start, spans[0].end), (0, 8_000_000));
        // Adding a third pushes past 8 MiB: it starts a new span at its own block.
        let c = ch(8_000_000, 5, 9_000_000, 0);
        let spans = plan(&[a, b, c], &starts, 1 << 30, &o);
        assert_eq!(spans.len(), 2);
        assert_eq!((spans[1].start, spans[1].end), (8_000_000, 9_000_000));
    }

    #[test]
    fn huge_chunk_split_at_block_starts() {
        let o = Options {
            max_span: 1000,
            ..Options::default()
        };
        let starts = [0, 400, 900, 1300, 2100, 2500];
        let spans = plan(&[ch(0, 5, 2500, 0)], &starts, 3000, &o);
        let bounds: Vec<(u64, u64)> = spans.iter().map(|s| (s.start, s.end)).collect();
        assert_eq!(
            bounds,
            vec![(0, 900), (900, 1300), (1300, 2100), (2100, 2500)]
        );
        assert_eq!(spans[0].chunks, vec![ch(0, 5, 900, 0)]);
        assert_eq!(spans[3].chunks, vec![ch(2100, 0, 2500, 0)]);
        let total: u64 = spans.iter().map(Span::len).sum();
        assert_eq!(total, 2500);
        // No block start to cut at: one long span.
        let spans = plan(&[ch(0, 5, 2500, 0)], &[], 3000, &o);
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].len(), 2500);
    }

    #[test]
    fn empty_and_degenerate() {
        let o = Options::default();
        assert!(plan(&[], &[], 100, &o).is_empty());
        assert!(plan(&[ch(5, 0, 5, 0)], &[], 100, &o).is_empty());
        // Chunks past the end of the file are clamped, not dropped.
        let spans = plan(&[ch(200, 0, 300, 4)], &[], 100, &o);
        assert_eq!((spans[0].start, spans[0].end), (100, 100));
        assert!(spans[0].is_empty());
    }
}
