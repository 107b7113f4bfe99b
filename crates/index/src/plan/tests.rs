//! Tests of the query plan.

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

// Spans of chunks given by the caller (the multi-region iterator's), without an index.

fn ch(a: u64, au: u16, b: u64, bu: u16) -> Chunk {
    Chunk::new(VirtualOffset::new(a, au), VirtualOffset::new(b, bu))
}

fn bounds(p: &Plan) -> Vec<(u64, u64)> {
    p.spans.iter().map(|s| (s.start, s.end)).collect()
}

#[test]
fn gap_limits() {
    let o = Options::default();
    // A gap of exactly 64 KiB is not "less than" the limit: separate spans.
    let a = ch(0, 0, 1000, 0);
    let b = ch(1000 + 65536, 0, 1000 + 65536 + 10, 0);
    assert_eq!(plan_chunks(&[a, b], &[], 1 << 30, &o).spans.len(), 2);
    let b = ch(1000 + 65535, 0, 1000 + 65536 + 10, 0);
    let p = plan_chunks(&[b, a], &[], 1 << 30, &o);
    assert_eq!(bounds(&p), vec![(0, 1000 + 65536 + 10)]);
    // Gap-merging stops at the 5 MB merged span.
    let a = ch(0, 0, 4_990_000, 0);
    let b = ch(5_000_000, 0, 5_000_001, 0);
    assert_eq!(plan_chunks(&[a, b], &[], 1 << 30, &o).spans.len(), 2);
    let b = ch(4_999_000, 0, 5_000_000, 0);
    assert_eq!(plan_chunks(&[a, b], &[], 1 << 30, &o).spans.len(), 1);
}

#[test]
fn touching_chunks_merge_beyond_five_mb_but_not_past_the_cap() {
    let o = Options::default();
    let starts = [0, 6_000_000, 8_000_000, 9_000_000];
    let a = ch(0, 0, 6_000_000, 10);
    let b = ch(6_000_000, 20, 8_000_000, 0);
    let p = plan_chunks(&[a, b], &starts, 1 << 30, &o);
    assert_eq!(bounds(&p), vec![(0, 8_000_000)]);
    // A third pushes past 8 MiB: it starts a new span at its own block.
    let c = ch(8_000_000, 5, 9_000_000, 0);
    let p = plan_chunks(&[a, b, c], &starts, 1 << 30, &o);
    assert_eq!(bounds(&p), vec![(0, 8_000_000), (8_000_000, 9_000_000)]);
    assert_eq!(p.regions[0].limits, vec![8_000_000, 8_000_000, 9_000_000]);
}

#[test]
fn a_huge_chunk_is_split_at_block_starts_and_read_to_the_last_piece() {
    let o = Options {
        max_span: 1000,
        ..Options::default()
    };
    let starts = [0, 400, 900, 1300, 2100, 2500];
    let p = plan_chunks(&[ch(0, 5, 2500, 0)], &starts, 3000, &o);
    assert_eq!(
        bounds(&p),
        vec![(0, 900), (900, 1300), (1300, 2100), (2100, 2500)]
    );
    assert_eq!(p.bytes(), 2500);
    // Read with one limit: the end of the pieces that continue it without a gap.
    assert_eq!(p.regions[0].limits, vec![2500]);
    // No block start to cut at: one long span.
    let p = plan_chunks(&[ch(0, 5, 2500, 0)], &[], 3000, &o);
    assert_eq!(bounds(&p), vec![(0, 2500)]);
}

#[test]
fn empty_and_degenerate_chunks() {
    let o = Options::default();
    assert!(plan_chunks(&[], &[], 100, &o).spans.is_empty());
    assert!(plan_chunks(&[ch(5, 0, 5, 0)], &[], 100, &o)
        .spans
        .is_empty());
    // A chunk past the end of the file fetches nothing; its limit is the end of the file.
    let p = plan_chunks(&[ch(200, 0, 300, 4)], &[], 100, &o);
    assert!(p.spans.is_empty());
    assert_eq!(p.regions[0].limits, vec![100]);
}

#[test]
fn each_byte_end_is_the_plans_and_limits_are_read_from_the_spans() {
    // Every limit is a span's end or the chunk's own block end, and every span's end is some
    // chunk's block end (or a tight end's, or a cut at a known block start): nothing past the
    // bytes the chunks need is ever asked for.
    let starts = [0, 500, 1000, 1500, 5000, 70_000, 80_000, 200_000, 7_000_000];
    let chunks = [
        ch(0, 3, 500, 7),
        ch(1000, 0, 1500, 0),
        ch(5000, 1, 5000, 90),
        ch(70_000, 0, 80_000, 2),
        ch(7_000_000, 4, 7_000_000, 9),
    ];
    let size = 7_100_000;
    let p = plan_chunks(&chunks, &starts, size, &Options::default());
    let ends: Vec<u64> = chunks
        .iter()
        .map(|c| bytes_of(c, &starts, size).end)
        .collect();
    assert_eq!(ends, vec![1000, 1500, 70_000, 145_536, 7_065_536]);
    for s in &p.spans {
        assert!(ends.contains(&s.end), "{s:?} ends where no chunk does");
    }
    for (c, limit) in chunks.iter().zip(&p.regions[0].limits) {
        let own = bytes_of(c, &starts, size);
        assert!(*limit >= own.end, "{c:?} limited before its bytes end");
        assert!(p.spans.iter().any(|s| s.end == *limit), "{c:?}: {limit}");
    }
    assert_eq!(bounds(&p), vec![(0, 145_536), (7_000_000, 7_065_536)]);
    assert_eq!(
        p.regions[0].limits,
        vec![145_536, 145_536, 145_536, 145_536, 7_065_536]
    );
}
