//! `Query::count_records` (which skips records a quick check accepts) gives what counting
//! `next_record_ref`'s records gives: the same count, or the same error, for every BAM of the
//! corpus and for every single-byte mutation of the records of a small BAM, with records whole
//! in their blocks and cut across blocks; the whole file, and each kind of region query.

use std::path::{Path, PathBuf};

use bam::{Reader, Regions};
use region::{Interval, Position, RefId, Region, RegionSet};
use testkit::builders::{bgzf, bgzf_block, bgzf_split, BamBuilder, Rec};

/// Counting the records read in full; the first error ends it.
fn full(mut reader: Reader) -> Result<u64, String> {
    let mut q = reader.records().map_err(|e| e.to_string())?;
    let mut n = 0;
    loop {
        match q.next_record_ref() {
            Ok(Some(_)) => n += 1,
            Ok(None) => return Ok(n),
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn counted(mut reader: Reader) -> Result<u64, String> {
    let mut q = reader.records().map_err(|e| e.to_string())?;
    q.count_records().map_err(|e| e.to_string())
}

fn both(name: &str, bytes: &[u8]) -> Option<(Result<u64, String>, Result<u64, String>)> {
    let a = Reader::from_bytes(name, bytes.to_vec()).ok()?;
    let b = Reader::from_bytes(name, bytes.to_vec()).ok()?;
    Some((full(a), counted(b)))
}

#[test]
fn the_corpus_counts_alike() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance/data");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path: PathBuf = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "bam") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        if let Some((a, b)) = both(&path.display().to_string(), &bytes) {
            assert_eq!(a, b, "{}", path.display());
            seen += 1;
        }
    }
    assert!(seen > 10, "only {seen} BAMs read");
}

/// Records of every kind the quick check treats apart: mapped with a CIGAR, unmapped with
/// one, no CIGAR, no sequence, no reference, and a long CIGAR kept in a `CG` tag.
fn sample() -> BamBuilder {
    let mut cg = b"CGBI".to_vec();
    cg.extend_from_slice(&2u32.to_le_bytes());
    cg.extend_from_slice(&(2u32 << 4).to_le_bytes()); // 2M
    cg.extend_from_slice(&((2u32 << 4) | 1).to_le_bytes()); // 2I
    BamBuilder::new(b"@HD\tVN:1.6\n", &[("chr1", 1000), ("chr2", 500)])
        .record(&Rec {
            cigar: "2S3M1I",
            seq: "ACGTAC",
            ..Rec::default()
        })
        .record(&Rec {
            name: "unm",
            flag: 4,
            cigar: "3M",
            seq: "ACGTA",
            ..Rec::default()
        })
        .record(&Rec {
            name: "nocig",
            ref_id: 1,
            pos: 7,
            seq: "AC",
            next_ref_id: 0,
            ..Rec::default()
        })
        .record(&Rec {
            name: "noseq",
            cigar: "4M2D",
            ..Rec::default()
        })
        .record(&Rec {
            name: "long",
            pos: 10,
            cigar: "4S1N",
            seq: "ACGT",
            aux: cg,
            ..Rec::default()
        })
        .record(&Rec {
            name: "unplaced",
            ref_id: -1,
            pos: -1,
            flag: 4,
            seq: "ACG",
            ..Rec::default()
        })
}

#[test]
fn every_mutated_record_byte_counts_alike() {
    let builder = sample();
    let clean = builder.bytes();
    let first = builder.header_bytes().len();
    // A count with nothing wrong, first, so that the mutations are not all that is tested.
    let (a, b) = both("clean.bam", &bgzf(&clean, 1 << 16)).unwrap();
    assert_eq!(a, Ok(6));
    assert_eq!(b, Ok(6));
    let (mut failed, mut compared) = (0, 0);
    for at in first..clean.len() {
        for value in [0x00, 0xff, 0x80, clean[at] ^ 1, clean[at].wrapping_add(4)] {
            if value == clean[at] {
                continue;
            }
            let mut bytes = clean.clone();
            bytes[at] = value;
            // Whole in one block, and cut across blocks every 37 bytes.
            for step in [1 << 16, 37] {
                let file = bgzf(&bytes, step);
                let Some((a, b)) = both("mutated.bam", &file) else {
                    continue;
                };
                assert_eq!(a, b, "byte {at} set to {value:#x}, blocks of {step}");
                failed += usize::from(a.is_err());
                compared += 1;
            }
        }
    }
    // Both outcomes were met many times.
    assert!(failed > 100, "{failed} of {compared} failed");
    assert!(compared - failed > 100, "{failed} of {compared} failed");
}

/// A BAI for a file whose records start at virtual offset `start` and end at `end`: every
/// reference's records are looked for from `start` (one chunk in bin 0), so the index stays
/// true of a file whose records' bytes are mutated in place.
fn bai(n_ref: usize, start: u64, end: u64) -> Vec<u8> {
    let mut out = b"BAI\x01".to_vec();
    out.extend_from_slice(&(n_ref as i32).to_le_bytes());
    for _ in 0..n_ref {
        out.extend_from_slice(&1i32.to_le_bytes()); // one bin
        out.extend_from_slice(&0u32.to_le_bytes()); // bin 0: the whole reference
        out.extend_from_slice(&1i32.to_le_bytes()); // one chunk
        out.extend_from_slice(&start.to_le_bytes());
        out.extend_from_slice(&end.to_le_bytes());
        out.extend_from_slice(&1i32.to_le_bytes()); // one linear-index entry
        out.extend_from_slice(&start.to_le_bytes());
    }
    out
}

/// The region queries compared: targets (one, then one and `.`), the multi-region iterator
/// and every record overlapping a set.
fn region_queries() -> Vec<Regions> {
    let at = |beg: u64, end: u64| Interval {
        beg: Position::new(beg),
        end: Position::new(end),
    };
    let target = |tid: usize, beg: u64, end: u64| Region::Ref {
        tid: RefId::from(tid),
        beg: Position::new(beg),
        end: Position::new(end),
    };
    let mut multi = RegionSet::default();
    multi.add(RefId::from(0), at(0, 1000));
    let mut overlapping = RegionSet::default();
    overlapping.add(RefId::from(0), at(3, 20));
    overlapping.add(RefId::from(1), at(0, 500));
    vec![
        Regions::from(target(0, 0, 1000)),
        Regions::Targets(vec![target(0, 5, 12), Region::All]),
        Regions::Multi(multi),
        Regions::Overlapping(overlapping),
    ]
}

/// The query's records counted both ways (read in full; `count_records`), from `path` with
/// its index.
fn both_regions(
    path: &Path,
    regions: &Regions,
) -> Option<(Result<u64, String>, Result<u64, String>)> {
    let open = || -> Option<Reader> {
        let mut r = Reader::open(&path.display().to_string(), &Default::default()).ok()?;
        r.load_index(None).ok()?;
        Some(r)
    };
    let (mut a, mut b) = (open()?, open()?);
    let full = (|| {
        let mut q = a.query(regions.clone()).map_err(|e| e.to_string())?;
        let mut n = 0;
        while q.next_record_ref().map_err(|e| e.to_string())?.is_some() {
            n += 1;
        }
        Ok(n)
    })();
    let counted = b
        .query(regions.clone())
        .and_then(|mut q| q.count_records())
        .map_err(|e| e.to_string());
    Some((full, counted))
}

#[test]
fn every_mutated_record_byte_counts_alike_in_regions() {
    let builder = sample();
    let clean = builder.bytes();
    let first = builder.header_bytes().len();
    let dir = std::env::temp_dir().join(format!("hts-count-regions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.bam");
    // The header in a block of its own, so that the records start at the same offset however
    // their bytes change.
    let start = (bgzf_block(&clean[..first]).len() as u64) << 16;
    let write = |bytes: &[u8], step: usize| {
        let ends: Vec<usize> = (first..bytes.len()).step_by(step).collect();
        let file = bgzf_split(bytes, &ends);
        let end = ((file.len() - 28) as u64) << 16;
        std::fs::write(&path, &file).unwrap();
        std::fs::write(dir.join("m.bam.bai"), bai(2, start, end)).unwrap();
    };
    write(&clean, 1 << 16);
    // samtools 1.16.1 on this file and index: `view -c F chr1:1-1000` 2 (reading stops at the
    // chr2 record, as the file is not sorted), `-M chr1:1-1000` 4, `-M chr1:4-20 chr2:1-500`
    // 3; `chr1:6-12` then `.` (the whole file, which samtools' view does not take): 0 + 6.
    let expected: Vec<(Result<u64, String>, Result<u64, String>)> =
        [2, 6, 4, 3].iter().map(|&n| (Ok(n), Ok(n))).collect();
    let got: Vec<_> = region_queries()
        .iter()
        .map(|regions| both_regions(&path, regions).unwrap())
        .collect();
    assert_eq!(got, expected);
    let (mut failed, mut compared) = (0, 0);
    for at in first..clean.len() {
        for value in [0x00, 0xff, 0x80, clean[at] ^ 1] {
            if value == clean[at] {
                continue;
            }
            let mut bytes = clean.clone();
            bytes[at] = value;
            for step in [1 << 16, 37] {
                write(&bytes, step);
                for regions in &region_queries() {
                    let Some((a, b)) = both_regions(&path, regions) else {
                        continue;
                    };
                    assert_eq!(
                        a, b,
                        "byte {at} set to {value:#x}, blocks of {step}, {regions:?}"
                    );
                    failed += usize::from(a.is_err());
                    compared += 1;
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failed > 100, "{failed} of {compared} failed");
    assert!(compared - failed > 100, "{failed} of {compared} failed");
}
