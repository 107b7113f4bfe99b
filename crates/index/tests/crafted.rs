//! Hand-made hostile indexes (tests/data/crafted, written by tests/data/make_crafted.py) give
//! exactly htslib 1.16's answers (tests/data/crafted.tsv), or are refused where htslib refuses
//! them: bins numbered >= 2^31 reached by the max_off search, duplicate bins, negative and
//! huge counts, missing pseudo-bins and n_no_coor, linear-index gaps, a 32-bit-truncated
//! unmapped count, overlapping chunks across levels, uncompressed CSI and gzip-compressed BAI.

use std::path::PathBuf;

use index::{Error, Kind};

fn crafted(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

#[test]
fn crafted_equal_htslib() {
    let text = include_str!("data/crafted.tsv");
    let mut n = 0;
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let loaded = index::read(crafted(f[0]));
        let tid: i64 = f[1].parse().unwrap();
        let beg: u64 = f[2].parse().unwrap();
        let end: u64 = f[3].parse().unwrap();
        let got = match &loaded {
            Err(_) => "loadfail".to_string(),
            Ok(idx) if tid == -2 => idx
                .unplaced_start()
                .map_or("null".to_string(), |v| v.raw().to_string()),
            Ok(idx) => match idx.query_checked(tid as usize, beg, end) {
                None => "null".to_string(),
                Some(chunks) => chunks
                    .iter()
                    .map(|c| format!("{}:{}", c.start.raw(), c.end.raw()))
                    .collect::<Vec<_>>()
                    .join(","),
            },
        };
        assert_eq!(got, f[4], "{line}");
        n += 1;
    }
    assert!(n > 500);
}

#[test]
fn refused_where_htslib_misbehaves() {
    let e = index::read(crafted("crafted/dup_bin.bai")).unwrap_err();
    assert!(e.to_string().contains("bin 4681 appears twice"), "{e}");
    let e = index::read(crafted("crafted/bad_geometry.csi")).unwrap_err();
    assert!(matches!(e, Error::Invalid { offset: 4, .. }), "{e:?}");
}

#[test]
fn hostile_counts_fail_before_allocating() {
    for (name, what) in [
        ("crafted/nref_huge.bai", "n_ref"),
        ("crafted/nref_over.bai", "n_ref"),
        ("crafted/nintv_huge.bai", "n_intv"),
        ("crafted/nchunk_huge.bai", "n_chunk"),
        ("crafted/neg_nbin.bai", "n_bin"),
        ("crafted/neg_nchunk.bai", "n_chunk"),
    ] {
        let e = index::read(crafted(name)).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Invalid { .. }), "{name}: {e:?}");
        assert!(
            msg.contains(what) && msg.contains(name.rsplit('/').next().unwrap()),
            "{msg}"
        );
    }
}

#[test]
fn accessors_on_crafted() {
    let idx = index::read(crafted("crafted/plain.csi")).unwrap();
    assert_eq!(idx.kind(), Kind::Csi);
    assert_eq!((idx.min_shift(), idx.depth()), (10, 2));
    assert_eq!(idx.aux(), b"hello");
    assert_eq!(idx.n_no_coor(), Some(3));
    assert_eq!(
        idx.mapped_unmapped(0),
        Some(index::ReadCounts {
            mapped: 6,
            unmapped: 0
        })
    );
    // The bin numbered 0xFFFFFFF8 is out of range: its offsets are not block starts.
    assert_eq!(idx.block_starts(), vec![0, 2, 3, 4, 5, 6, 7]);

    let idx = index::read(crafted("crafted/partial_tail.bai")).unwrap();
    assert_eq!(idx.n_no_coor(), None);
    let idx = index::read(crafted("crafted/gz.bai")).unwrap();
    assert_eq!(idx.kind(), Kind::Bai);
    assert_eq!(idx.n_no_coor(), Some(0));
    assert_eq!(
        idx.mapped_unmapped(0),
        Some(index::ReadCounts {
            mapped: 11,
            unmapped: 3
        })
    );
    assert_eq!(idx.block_starts(), vec![1, 2, 3, 4]);
    assert_eq!(idx.first_record_start().map(|v| v.raw()), Some(1 << 16));
    assert_eq!(idx.max_position(), 1 << 29);

    let idx = index::read(crafted("crafted/no_pseudo_nocoor.bai")).unwrap();
    assert_eq!(idx.mapped_unmapped(0), None);
    assert_eq!(idx.unplaced_start().map(|v| v.raw()), Some(0));
    let idx = index::read(crafted("crafted/no_pseudo_no_tail.bai")).unwrap();
    assert_eq!(idx.unplaced_start(), None);
}
