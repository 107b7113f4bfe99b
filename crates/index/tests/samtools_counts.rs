//! Chunks from every index of the corpus, read the way htslib's iterator reads them, give
//! exactly the record counts `samtools view -c -X BAM INDEX REGION` printed (tests/data/counts.tsv,
//! made by tests/data/make_counts.py with samtools 1.16.1).

mod common;

use std::collections::HashMap;

use common::{load_bam, load_index, Bam, HTS_POS_MAX};
use index::Index;

struct Row {
    bam: String,
    index: String,
    region: String,
    tid: i64,
    beg: u64,
    end: u64,
    count: Option<usize>,
}

fn rows() -> Vec<Row> {
    let text = include_str!("data/counts.tsv");
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 7, "{l}");
            Row {
                bam: f[0].to_string(),
                index: f[1].to_string(),
                region: f[2].to_string(),
                tid: f[3].parse().unwrap(),
                beg: f[4].parse().unwrap(),
                end: if f[5] == "max" {
                    HTS_POS_MAX
                } else {
                    f[5].parse().unwrap()
                },
                count: if f[6] == "invalid" {
                    None
                } else {
                    Some(f[6].parse().unwrap())
                },
            }
        })
        .collect()
}

#[test]
fn counts_match_samtools() {
    let mut bams: HashMap<String, Bam> = HashMap::new();
    let mut indexes: HashMap<String, Index> = HashMap::new();
    let mut checked = 0;
    let mut nonzero = 0;
    for row in rows() {
        let bam = bams
            .entry(row.bam.clone())
            .or_insert_with(|| load_bam(&row.bam));
        let idx = indexes
            .entry(row.index.clone())
            .or_insert_with(|| load_index(&row.index));
        let got = if row.tid < 0 {
            idx.unplaced_start()
                .map(|start| bam.iterate_rest(start.raw()).len())
        } else {
            idx.query_checked(row.tid as usize, row.beg, row.end)
                .map(|chunks| {
                    bam.iterate(&chunks, row.tid as i32, row.beg as i64, row.end as i64)
                        .len()
                })
        };
        // samtools prints 0 and warns when there is no iterator.
        let want = row.count;
        match (want, got) {
            (None, None) => {}
            (Some(w), Some(g)) => {
                assert_eq!(w, g, "{} {} {}", row.bam, row.index, row.region);
                if w > 0 {
                    nonzero += 1;
                }
            }
            _ => panic!(
                "{} {} {}: samtools {:?}, ours {:?}",
                row.bam, row.index, row.region, want, got
            ),
        }
        checked += 1;
    }
    assert!(checked > 2000);
    assert!(nonzero > 500, "too few non-empty regions: {nonzero}");
}

/// The BAI and the min_shift-14 CSI of the same BAM select the same records for every region,
/// and every chunk of either starts at a record (or at the end of the data).
#[test]
fn bai_and_csi_agree() {
    for (bam_name, bai, csi) in [
        ("data/rand.bam", "data/rand.bam.bai", "data/rand.bam.csi"),
        ("data/bins.bam", "data/bins.bam.bai", "data/bins.idx.csi"),
        (
            "data/ce1000.bam",
            "data/ce1000.bam.bai",
            "data/ce1000.idx.csi",
        ),
    ] {
        let bam = load_bam(bam_name);
        let bai = load_index(bai);
        let csi = load_index(csi);
        assert_eq!(bai.n_refs(), csi.n_refs());
        for tid in 0..bai.n_refs() {
            assert_eq!(bai.mapped_unmapped(tid), csi.mapped_unmapped(tid));
            let mut b = 0u64;
            while b < 600_000_000 {
                let e = b + 7919 * 13;
                let x = bam.iterate(&bai.query(tid, b, e), tid as i32, b as i64, e as i64);
                let y = bam.iterate(&csi.query(tid, b, e), tid as i32, b as i64, e as i64);
                assert_eq!(x, y, "{bam_name} tid {tid} [{b},{e})");
                b = if b < 2_000_000 { b + 7919 } else { b * 2 };
            }
        }
    }
}
