//! The damaged indexes of the conformance corpus (fixtures/conformance/malformed).

mod common;

use common::{fixture, load_index, HTS_POS_MAX};
use index::{Error, Kind};

fn load_err(rel: &str) -> Error {
    match index::read(fixture(rel)) {
        Ok(_) => panic!("{rel} loaded but must fail"),
        Err(e) => e,
    }
}

#[test]
fn truncated_bai_names_file_and_offset() {
    let e = load_err("malformed/rand.trunc.bai");
    let full = std::fs::read(fixture("data/rand.bam.bai")).unwrap().len() as u64;
    match &e {
        Error::Truncated {
            offset, compressed, ..
        } => {
            assert!(!compressed);
            assert!(*offset <= full / 2, "offset {offset}");
            assert!(*offset > 8);
        }
        other => panic!("unexpected {other:?}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("rand.trunc.bai"), "{msg}");
    assert!(msg.contains("at byte"), "{msg}");
}

#[test]
fn bad_magic() {
    let e = load_err("malformed/rand.magic.bai");
    assert!(matches!(&e, Error::BadMagic { found, .. } if found == b"BAJ\x01"));
    assert!(e.to_string().contains("rand.magic.bai"));
}

#[test]
fn truncated_csi_is_a_decompression_error() {
    let e = load_err("malformed/rand.trunc.csi");
    assert!(matches!(e, Error::Decompress { .. }), "{e:?}");
    assert!(e.to_string().contains("rand.trunc.csi"));
}

#[test]
fn garbage_bai_files() {
    for rel in [
        "malformed/both_bad_bai.bam.bai",
        "malformed/bad_bai_only.bam.bai",
    ] {
        let e = load_err(rel);
        assert!(
            e.to_string().contains(rel.rsplit('/').next().unwrap()),
            "{e}"
        );
    }
}

#[test]
fn fewer_references_than_the_header() {
    let idx = load_index("malformed/rand.nref_less.bai");
    let full = load_index("data/rand.bam.bai");
    assert_eq!(idx.n_refs(), 2);
    assert_eq!(full.n_refs(), 5);
    // The kept references behave as in the full index.
    assert_eq!(idx.query(1, 4999, 5400), full.query(1, 4999, 5400));
    assert!(!idx.query(1, 4999, 5400).is_empty());
    // chrM (tid 2) is beyond the index: no iterator, as htslib (samtools warns).
    assert_eq!(idx.query_checked(2, 99, 300), None);
    assert!(idx.query(2, 99, 300).is_empty());
    assert_eq!(idx.mapped_unmapped(2), None);
}

#[test]
fn extra_out_of_range_bins_are_never_consulted() {
    let idx = load_index("malformed/rand.garbage_bins_extra.csi");
    let good = load_index("data/rand.bam.csi");
    assert_eq!(idx.kind(), Kind::Csi);
    assert_eq!((idx.min_shift(), idx.depth()), (14, 3));
    for tid in 0..5 {
        for (b, e) in [
            (0, HTS_POS_MAX),
            (9999, 10500),
            (99, 300),
            (200_000, 260_000),
        ] {
            assert_eq!(
                idx.query(tid, b, e),
                good.query(tid, b, e),
                "tid {tid} [{b},{e})"
            );
        }
    }
    assert_eq!(idx.unplaced_start(), good.unplaced_start());
    // Their nonsense offsets are not block starts.
    assert_eq!(idx.block_starts(), good.block_starts());
}

#[test]
fn renumbered_bins_give_no_chunks() {
    let idx = load_index("malformed/rand.garbage_bins_renumbered.csi");
    let good = load_index("data/rand.bam.csi");
    for tid in 0..5 {
        assert!(idx.query(tid, 9999, 10500).is_empty());
        assert!(idx.query(tid, 0, HTS_POS_MAX).is_empty());
        assert!(!good.query(tid, 0, HTS_POS_MAX).is_empty() || tid == 3);
    }
    // The pseudo-bin 586 was kept: statistics and '*' still work.
    assert_eq!(idx.mapped_unmapped(0), good.mapped_unmapped(0));
    assert_eq!(idx.unplaced_start(), good.unplaced_start());
}
