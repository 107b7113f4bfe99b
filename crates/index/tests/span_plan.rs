//! Spans planned from real queries cover every byte that htslib's iterator would read, using
//! only the block starts the index knows; and those are real BGZF block starts.

mod common;

use common::{load_bam, load_index, HTS_POS_MAX};
use index::plan::{plan_chunks, Options};
use index::Chunk;

#[test]
fn index_block_starts_are_real_blocks() {
    for (bam, idx) in [
        ("data/rand.bam", "data/rand.bam.bai"),
        ("data/rand.bam", "data/rand.m12.csi"),
        ("data/bins.bam", "data/bins.idx.csi"),
        ("data/longref.bam", "data/longref.bam.csi"),
        ("data/ce1000.bam", "data/ce1000.bam.bai"),
    ] {
        let b = load_bam(bam);
        let starts = load_index(idx).block_starts();
        assert!(!starts.is_empty(), "{idx}");
        for s in starts {
            assert!(
                b.blocks.binary_search(&s).is_ok(),
                "{idx}: {s} is not a block start"
            );
        }
    }
}

/// (tid, beg, end) of one region.
type Region = (usize, u64, u64);

#[test]
fn spans_cover_every_record_read() {
    let cases: &[(&str, &str, &[Region])] = &[
        (
            "data/rand.bam",
            "data/rand.bam.bai",
            &[
                (0, 9999, 10500),
                (0, 0, HTS_POS_MAX),
                (1, 4999, 5400),
                (0, 6999, 7300),
                (0, 19999, 20400),
                (0, 20299, 20600),
                (4, 0, HTS_POS_MAX),
                (2, 99, 300),
            ],
        ),
        (
            "data/ce1000.bam",
            "data/ce1000.m12.csi",
            &[(0, 0, HTS_POS_MAX), (0, 1000, 2000)],
        ),
        (
            "data/longref.bam",
            "data/longref.bam.csi",
            &[
                (0, 536_870_899, 536_870_920),
                (0, 0, HTS_POS_MAX),
                (1, 0, 1000),
            ],
        ),
    ];
    for (bam_name, idx_name, regions) in cases {
        let bam = load_bam(bam_name);
        let idx = load_index(idx_name);
        let starts = idx.block_starts();
        // Small limits so that merging, the 5 MB rule and splitting all happen on small files.
        for options in [
            Options::default(),
            Options {
                max_gap: 0,
                max_merged_span: 1,
                max_span: 20_000,
                tight_ends: false,
            },
            Options {
                max_gap: 1 << 20,
                max_merged_span: 30_000,
                max_span: 40_000,
                tight_ends: false,
            },
        ] {
            let mut all: Vec<Chunk> = Vec::new();
            let mut wanted = Vec::new();
            for &(tid, b, e) in regions.iter() {
                let chunks = idx.query(tid, b, e);
                wanted.extend(bam.iterate(&chunks, tid as i32, b as i64, e as i64));
                all.extend(chunks);
            }
            assert!(!wanted.is_empty());
            let spans = plan_chunks(&all, &starts, bam.size, &options).spans;
            for w in spans.windows(2) {
                assert!(w[0].start <= w[1].start, "spans out of order");
            }
            for s in &spans {
                if s.len() > options.max_span {
                    // Only a span with no known block start to cut at within the cap.
                    let cut = starts
                        .iter()
                        .any(|&b| b > s.start && b <= s.start + options.max_span);
                    assert!(!cut, "{idx_name}: {s:?} could have been cut");
                }
            }
            for &r in &wanted {
                let rec = bam.recs[r];
                let end = bam.recs.get(r + 1).map_or(bam.eof, |n| n.vo);
                let from = rec.vo >> 16;
                // The real end: the block holding the record's last byte.
                let to = if end & 0xffff == 0 {
                    end >> 16
                } else {
                    let i = bam.blocks.partition_point(|&b| b <= end >> 16);
                    bam.blocks.get(i).copied().unwrap_or(bam.size)
                };
                let mut at = from;
                while at < to {
                    let s = spans
                        .iter()
                        .find(|s| s.start <= at && at < s.end)
                        .unwrap_or_else(|| {
                            panic!("{idx_name}: byte {at} of record at {from} not fetched")
                        });
                    at = s.end;
                }
            }
        }
    }
}
