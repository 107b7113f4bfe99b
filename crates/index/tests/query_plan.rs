//! Query plans on the corpus: without tight ends the spans hold every byte htslib's iterator
//! reads (computed independently, by walking the BAM's records); with tight ends the spans are
//! a subset of those; spans are sorted and disjoint; every chunk's limit lies at or after its
//! start. Many region sets, generated from a fixed seed.

mod common;

use common::{load_bam, load_index, Bam, HTS_POS_MAX};
use index::plan::{plan, Options, Plan, Region};
use index::Index;

fn check(bam: &Bam, idx: &Index, regions: &[Region], label: &str) -> (Plan, Plan) {
    let starts = idx.block_starts();
    let loose = Options {
        tight_ends: false,
        ..Options::default()
    };
    let full = plan(idx, regions, &starts, bam.size, &loose);
    let tight = plan(idx, regions, &starts, bam.size, &Options::default());
    for p in [&full, &tight] {
        for w in p.spans.windows(2) {
            assert!(
                w[0].end <= w[1].start,
                "{label}: spans overlap {:?}",
                p.spans
            );
        }
        assert!(p.spans.iter().all(|s| !s.is_empty()));
        for rp in &p.regions {
            for (c, l) in rp.chunks.iter().zip(&rp.limits) {
                assert!(
                    *l >= c.start.coffset().min(bam.size),
                    "{label}: limit before chunk"
                );
            }
        }
    }
    // Every byte the iterator reads is in a span of the loose plan.
    for (i, r) in regions.iter().enumerate() {
        let rp = &full.regions[i];
        if !rp.valid || rp.chunks.is_empty() {
            continue;
        }
        for rec in bam.visited(&rp.chunks, r.tid as i32, r.beg as i64, r.end as i64) {
            let (a, b) = bam.record_bytes(rec);
            // The record is needed only as far as the chunk it was read from reaches.
            let inside = full
                .spans
                .iter()
                .any(|s| s.start <= a && a < s.end.max(a + 1));
            assert!(
                inside,
                "{label}: record {rec} at {a}-{b} not in {:?}",
                full.spans
            );
        }
    }
    // Tight spans lie inside loose ones.
    for t in &tight.spans {
        assert!(
            full.spans
                .iter()
                .any(|f| f.start <= t.start && t.end <= f.end),
            "{label}: tight span {t:?} outside {:?}",
            full.spans
        );
    }
    assert!(tight.bytes() <= full.bytes());
    (full, tight)
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn plans_hold_what_the_iterator_reads() {
    let cases = [
        ("data/rand.bam", "data/rand.bam.bai", 300_000u64),
        ("data/rand.bam", "data/rand.bam.csi", 300_000),
        ("data/rand.bam", "data/rand.m12.csi", 300_000),
        ("data/ce1000.bam", "data/ce1000.bam.bai", 10_000),
        ("data/bins.bam", "data/bins.idx.csi", 1 << 29),
        ("data/edge.bam", "data/edge.bam.bai", 20_000),
    ];
    let mut rng = Rng(0x5eed);
    let (mut full_bytes, mut tight_bytes, mut sets) = (0u64, 0u64, 0);
    for (bam_path, idx_path, span) in cases {
        let bam = load_bam(bam_path);
        let idx = load_index(idx_path);
        let n_ref = idx.n_refs().max(1) as u64;
        for set in 0..60 {
            let n = 1 + (rng.next() % 12) as usize;
            let regions: Vec<Region> = (0..n)
                .map(|_| {
                    let tid = (rng.next() % n_ref) as usize;
                    let beg = rng.next() % span;
                    let len = match rng.next() % 4 {
                        0 => 100,
                        1 => 5_000,
                        2 => 50_000,
                        _ => HTS_POS_MAX - beg,
                    };
                    Region {
                        tid,
                        beg,
                        end: beg + len,
                    }
                })
                .collect();
            let (full, tight) = check(&bam, &idx, &regions, &format!("{idx_path} set {set}"));
            full_bytes += full.bytes();
            tight_bytes += tight.bytes();
            sets += 1;
        }
    }
    println!("{sets} region sets: {full_bytes} bytes planned loose, {tight_bytes} tight");
    assert!(tight_bytes < full_bytes, "tight ends saved nothing");
}
