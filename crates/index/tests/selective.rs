//! Selective and prefix loads against the whole-file parse, on every index of the conformance
//! corpus (BAI, CSI with min_shift 14 and 12, BGZF-compressed CSI): the references kept give
//! the same chunks, the others are refused, and the bytes consumed end exactly where an
//! independent walk of the format says the last wanted reference ends.

mod common;
mod layout;

use std::collections::BTreeSet;

use common::{fixture, HTS_POS_MAX};
use index::{Error, Index, Loaded, Loader, Outcome, Part, Wanted};
use layout::{layout, rebgzf, Layout};

/// Every index file of the corpus.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = fixture("data");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".bai") || name.ends_with(".csi") {
            out.push((name, std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    assert!(out.len() >= 40, "corpus has {} indexes", out.len());
    out
}

/// A corpus index: its stored bytes, the whole parse, and its (decompressed) stream.
fn corpus_index(name: &str) -> (Vec<u8>, Index, Vec<u8>) {
    let stored = std::fs::read(fixture(&format!("data/{name}"))).unwrap();
    let full = Index::from_bytes(name, &stored).unwrap();
    let data = layout(&stored).data;
    (stored, full, data)
}

/// Regions spread over a reference at several scales, including the whole of it.
fn regions() -> Vec<(u64, u64)> {
    let mut r = vec![(0, HTS_POS_MAX), (99, 300), (9999, 10500)];
    for k in [14u32, 20, 26, 31] {
        let p = 1u64 << k;
        r.extend([(p - 1, p + 1), (p, 3 * p)]);
    }
    r
}

/// The references to compare: all of a small index; else the wanted ones, their neighbours,
/// both ends and a few beyond the index.
fn tids_to_check(n: usize, wanted: &Wanted) -> BTreeSet<usize> {
    if n <= 8 {
        return (0..n + 2).collect();
    }
    let mut t: BTreeSet<usize> = [0, 1, n / 2, n - 1, n, n + 1].into();
    for &w in wanted.tids().unwrap_or(&[]).iter().take(20) {
        t.extend([w.saturating_sub(1), w, w + 1]);
    }
    t
}

/// Subsets of references to load: all of them for up to 6 references, else a spread.
fn subsets(n: usize) -> Vec<Wanted> {
    let mut out = vec![Wanted::none(), Wanted::all()];
    if n <= 6 {
        for mask in 0u32..(1 << n) {
            out.push(Wanted::refs((0..n).filter(|&t| mask & (1 << t) != 0)));
        }
    } else {
        out.extend([
            Wanted::refs([0]),
            Wanted::refs([1]),
            Wanted::refs([n - 1]),
            Wanted::refs([0, n - 1]),
            Wanted::refs([n / 2, n / 3]),
            Wanted::refs(0..n),
        ]);
        // A few pseudo-random sets (fixed seed).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..8 {
            let mut set = BTreeSet::new();
            for _ in 0..5 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                set.insert((x % n as u64) as usize);
            }
            out.push(Wanted::refs(set));
        }
    }
    // Ids beyond the index never make a load read further.
    out.push(Wanted::refs([n, n + 7]));
    out
}

/// Asserts that `part` answers like `full` on the references it loaded and refuses the others.
fn same_on_loaded(name: &str, full: &Index, part: &Index, wanted: &Wanted) {
    assert_eq!(part.n_refs(), full.n_refs(), "{name}");
    assert_eq!(
        (part.kind(), part.min_shift(), part.depth()),
        (full.kind(), full.min_shift(), full.depth())
    );
    assert_eq!(part.aux(), full.aux(), "{name}");
    for tid in tids_to_check(full.n_refs(), wanted) {
        if wanted.contains(tid) || tid >= full.n_refs() {
            assert!(part.is_loaded(tid), "{name} {tid}");
            for &(b, e) in &regions() {
                assert_eq!(
                    part.query_loaded(tid, b, e).unwrap(),
                    full.query_checked(tid, b, e),
                    "{name}: tid {tid} [{b},{e}) with {wanted:?}"
                );
            }
            assert_eq!(part.mapped_unmapped(tid), full.mapped_unmapped(tid));
            assert_eq!(part.reference_span(tid), full.reference_span(tid));
        } else {
            assert!(!part.is_loaded(tid), "{name} {tid}");
            let e = part.query_loaded(tid, 0, HTS_POS_MAX).unwrap_err();
            assert!(
                matches!(e, Error::NotLoaded { tid: Some(t), .. } if t == tid),
                "{e:?}"
            );
            assert!(e.to_string().contains(name), "{e}");
            // The old entry point gives htslib's "no iterator", never an empty chunk list.
            assert_eq!(part.query_checked(tid, 0, HTS_POS_MAX), None);
        }
    }
    if wanted.is_all() {
        assert!(part.is_complete());
        assert_eq!(part.n_no_coor(), full.n_no_coor());
        assert_eq!(part.unplaced_start(), full.unplaced_start());
        assert_eq!(part.block_starts(), full.block_starts());
        part.require(&Wanted::all()).unwrap();
    } else {
        assert!(!part.is_complete());
        assert_eq!(part.n_no_coor(), None);
        assert!(matches!(
            part.require(&Wanted::all()),
            Err(Error::NotLoaded { tid: None, .. })
        ));
        // Block starts of a partial index are those of its references: a subset of the whole.
        let all: BTreeSet<u64> = full.block_starts().into_iter().collect();
        assert!(
            part.block_starts().iter().all(|s| all.contains(s)),
            "{name}"
        );
    }
    part.require(wanted).unwrap();
}

fn load(loader: &Loader, bytes: &[u8]) -> Loaded {
    loader.read(bytes).unwrap_or_else(|e| panic!("{e}"))
}

fn check_consumed(name: &str, lay: &Layout, wanted: &Wanted, loaded: &Loaded) {
    let end = lay.end_for(wanted);
    assert_eq!(loaded.consumed, end, "{name} {wanted:?}");
    assert_eq!(
        loaded.consumed_input,
        Some(lay.input_for(end)),
        "{name} {wanted:?}"
    );
}

#[test]
fn every_subset_gives_the_full_answer_on_its_references() {
    let mut n_loads = 0;
    let mut geometries = BTreeSet::new();
    for (name, bytes) in corpus() {
        let lay = layout(&bytes);
        let full = Index::from_bytes(&name, &bytes).unwrap();
        assert_eq!(full.n_refs(), lay.n_ref(), "{name}");
        geometries.insert((
            full.kind() == index::Kind::Csi,
            full.min_shift(),
            lay.blocks.is_some(),
        ));
        let mut union_of_singles = BTreeSet::new();
        for wanted in subsets(lay.n_ref()) {
            let loader = Loader::new(name.as_str())
                .wanted(wanted.clone())
                .file_len(bytes.len() as u64);
            let loaded = load(&loader, &bytes);
            check_consumed(&name, &lay, &wanted, &loaded);
            same_on_loaded(&name, &full, &loaded.index, &wanted);
            if wanted.tids().is_some_and(|t| t.len() == 1) {
                union_of_singles.extend(loaded.index.block_starts());
            }
            // The prefix the load reports holds everything it needed.
            let needed = loaded.consumed_input.unwrap() as usize;
            match loader.read_prefix(&bytes[..needed]).unwrap() {
                Outcome::Loaded(again) => {
                    assert_eq!(again.consumed, loaded.consumed);
                    same_on_loaded(&name, &full, &again.index, &wanted);
                }
                Outcome::NeedMore(m) => panic!("{name} {wanted:?}: {m:?}"),
            }
            n_loads += 1;
        }
        if lay.n_ref() <= 6 {
            let singles: Vec<u64> = union_of_singles.into_iter().collect();
            assert_eq!(singles, full.block_starts(), "{name}");
        }
    }
    // BAI, CSI at min_shift 14 and 12, all CSI here BGZF-compressed.
    assert!(geometries.contains(&(false, 14, false)));
    assert!(geometries.contains(&(true, 14, true)));
    assert!(geometries.contains(&(true, 12, true)));
    assert!(n_loads > 500, "{n_loads}");
}

#[test]
fn small_bgzf_blocks_consume_whole_blocks_only() {
    for name in [
        "rand.m12.csi",
        "rand.bam.csi",
        "manyrefs.idx.csi",
        "rand.bam.bai",
    ] {
        let (_, full, data) = corpus_index(name);
        let sizes: &[usize] = if data.len() > 4000 {
            &[1000]
        } else {
            &[29, 1000]
        };
        for &block in sizes {
            let bytes = rebgzf(&data, block);
            let lay = layout(&bytes);
            assert!(lay.blocks.as_ref().unwrap().len() > data.len() / block);
            for wanted in subsets(lay.n_ref()) {
                let loader = Loader::new(name).wanted(wanted.clone());
                let loaded = load(&loader, &bytes);
                check_consumed(name, &lay, &wanted, &loaded);
                same_on_loaded(name, &full, &loaded.index, &wanted);
            }
        }
    }
}

/// The outcome a prefix of `cut` bytes must have: loaded when it reaches `need` stored bytes,
/// else "need more" in the part holding the cut.
fn check_prefix(
    name: &str,
    bytes: &[u8],
    cuts: &[usize],
    lay: &Layout,
    full: &Index,
    wanted: &Wanted,
    with_len: bool,
) {
    let mut loader = Loader::new(name).wanted(wanted.clone());
    if with_len {
        loader = loader.file_len(bytes.len() as u64);
    }
    let end = lay.end_for(wanted);
    let need = lay.input_for(end);
    for &cut in cuts {
        let prefix = &bytes[..cut];
        let outcome = loader
            .read_prefix(prefix)
            .unwrap_or_else(|e| panic!("{name} {wanted:?} cut {cut}: {e}"));
        match outcome {
            Outcome::Loaded(l) => {
                assert!(cut as u64 >= need, "{name} {wanted:?} cut {cut} < {need}");
                assert_eq!(l.consumed, end);
                if cut as u64 == need || cut == bytes.len() {
                    same_on_loaded(name, full, &l.index, wanted);
                }
            }
            Outcome::NeedMore(m) => {
                assert!(
                    (cut as u64) < need || (wanted.is_all() && !with_len),
                    "{name} {wanted:?} cut {cut}: {m:?}"
                );
                assert_eq!(m.input_read, cut as u64);
                let expected_part = if m.offset < lay.header_end {
                    Part::Header
                } else {
                    match lay.ref_ends.iter().position(|&e| m.offset < e) {
                        Some(k) => Part::Reference(k),
                        None => Part::Tail,
                    }
                };
                assert_eq!(m.part, expected_part, "{name} cut {cut}: {m:?}");
                if lay.blocks.is_none() {
                    // The field cut short starts at or before the cut and ends after it.
                    assert!(
                        m.offset <= cut as u64 && cut as u64 - m.offset < 8,
                        "{cut}: {m:?}"
                    );
                }
            }
        }
        // As a whole file, the same bytes load the same index or fail cleanly.
        // A missing or partial n_no_coor is allowed, as htslib allows it.
        if with_len {
            continue;
        }
        if let Ok(l) = loader.read(prefix) {
            if (cut as u64) < need {
                let refs_end = lay.ref_ends.last().copied().unwrap_or(lay.header_end);
                assert!(
                    wanted.is_all() && cut as u64 >= lay.input_for(refs_end),
                    "{name} {cut}"
                );
                assert_eq!(l.index.n_no_coor(), None);
            } else if cut as u64 == need || cut == bytes.len() {
                same_on_loaded(name, full, &l.index, wanted);
            }
        }
    }
}

#[test]
fn prefixes_cut_at_every_byte() {
    for name in [
        "rand.bam.bai",
        "rand.bam.csi",
        "rand.m12.csi",
        "unmap2.idx.bai",
        "hdronly.idx.csi",
    ] {
        let (stored, full, data) = corpus_index(name);
        // As stored, cut at every byte; re-compressed in 300-byte blocks, at every byte near a
        // block boundary and at a stride in between (inside a block every cut is the same case,
        // and each block costs a 64 KiB buffer fill, slow in a debug build).
        let every: Vec<usize> = (0..=stored.len()).collect();
        let small = rebgzf(&data, 300);
        let ends = layout(&small).blocks.unwrap();
        let mut near: BTreeSet<usize> = (0..=small.len()).step_by(41).collect();
        for &(cend, _) in &ends {
            let c = cend as usize;
            near.extend(c.saturating_sub(1)..=(c + 1).min(small.len()));
        }
        near.extend(0..20);
        let near: Vec<usize> = near.into_iter().collect();
        for (bytes, cuts, lens) in [
            (&stored, &every, &[false, true][..]),
            (&small, &near, &[false][..]),
        ] {
            let lay = layout(bytes);
            let n = lay.n_ref();
            let mut sets = vec![Wanted::all(), Wanted::refs([0])];
            if n > 1 && lens.len() > 1 {
                sets.extend([Wanted::refs([n - 1]), Wanted::refs([1, n - 1])]);
            }
            for wanted in &sets {
                for &with_len in lens {
                    check_prefix(name, bytes, cuts, &lay, &full, wanted, with_len);
                }
            }
        }
    }
}

#[test]
fn a_growing_prefix_is_extended_until_it_covers_the_query() {
    let name = "manyrefs.bam.bai";
    let bytes = std::fs::read(fixture(&format!("data/{name}"))).unwrap();
    let full = Index::from_bytes(name, &bytes).unwrap();
    let lay = layout(&bytes);
    // First query: reference 10; later: reference 4000 from the same cached prefix, extended.
    let mut have = 64usize;
    let mut fetches = 0;
    for tid in [10usize, 4000] {
        let wanted = Wanted::refs([tid]);
        let loader = Loader::new(name)
            .wanted(wanted.clone())
            .file_len(bytes.len() as u64);
        let loaded = loop {
            match loader.read_prefix(&bytes[..have]).unwrap() {
                Outcome::Loaded(l) => break l,
                Outcome::NeedMore(m) => {
                    assert!(matches!(m.part, Part::Header | Part::Reference(_)));
                    have = (have * 2).min(bytes.len());
                    fetches += 1;
                }
            }
        };
        assert_eq!(loaded.consumed, lay.ref_ends[tid]);
        assert!(have as u64 >= loaded.consumed && (have as u64) < 2 * loaded.consumed + 64);
        same_on_loaded(name, &full, &loaded.index, &wanted);
    }
    assert!(fetches > 5);
}

#[test]
fn skipped_references_are_checked_like_kept_ones() {
    // Two BAI references; the first has bin 4681 twice. Keeping only the second must still
    // refuse the file, at the same offset as the whole parse.
    let mut b = b"BAI\x01".to_vec();
    b.extend(2u32.to_le_bytes());
    b.extend(2u32.to_le_bytes());
    for _ in 0..2 {
        b.extend(4681u32.to_le_bytes());
        b.extend(0u32.to_le_bytes());
    }
    b.extend(0u32.to_le_bytes());
    b.extend([0u8; 8]);
    let whole = Index::from_bytes("dup.bai", &b).unwrap_err().to_string();
    let skipping = Loader::new("dup.bai")
        .wanted(Wanted::refs([1]))
        .read(&b[..])
        .unwrap_err()
        .to_string();
    assert_eq!(whole, skipping);
    assert!(
        whole.contains("bin 4681 appears twice") && whole.contains("at byte 20"),
        "{whole}"
    );
}

#[test]
fn truncation_errors_are_the_same_whether_kept_or_skipped() {
    for name in ["rand.bam.bai", "manyrefs.bam.bai", "rand.bam.csi"] {
        let bytes = std::fs::read(fixture(&format!("data/{name}"))).unwrap();
        let lay = layout(&bytes);
        let last = Wanted::refs([lay.n_ref() - 1]);
        let step = (bytes.len() / 400).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            let keep = Loader::new(name).read(&bytes[..cut]);
            let skip = Loader::new(name).wanted(last.clone()).read(&bytes[..cut]);
            if (cut as u64) < lay.input_for(*lay.ref_ends.last().unwrap()) {
                let (k, s) = (keep.unwrap_err(), skip.unwrap_err());
                assert_eq!(k.to_string(), s.to_string(), "{name} cut {cut}");
            }
        }
    }
}

#[test]
fn each_wanted_reference_is_shown_as_soon_as_it_is_loaded() {
    let (stored, full, _) = corpus_index("rand.bam.bai");
    let wanted = Wanted::refs([0, 2, 4]);
    let mut seen = Vec::new();
    let loaded = Loader::new("rand.bam.bai")
        .wanted(wanted.clone())
        .read_with(&stored[..], &mut |tid, so_far| {
            // The reference just loaded answers as in the whole parse; a later one is not in yet.
            assert_eq!(
                so_far.query(tid, 0, 100_000),
                full.query(tid, 0, 100_000),
                "reference {tid}"
            );
            let later = [0, 2, 4].into_iter().find(|&t| t > tid);
            if let Some(t) = later {
                assert!(
                    so_far.query(t, 0, 100_000).is_empty(),
                    "{t} before its turn"
                );
            }
            assert!(!so_far.block_starts_of(tid).is_empty());
            seen.push(tid);
        })
        .unwrap();
    assert_eq!(seen, [0, 2, 4]);
    for tid in [0, 2, 4] {
        assert_eq!(
            loaded.index.query(tid, 0, 1 << 29),
            full.query(tid, 0, 1 << 29)
        );
    }
}
