//! `Query::count_records` (which skips records a quick check accepts) gives what counting
//! `next_record_ref`'s records gives: the same count, or the same error, for every BAM of the
//! corpus and for every single-byte mutation of the records of a small BAM, with records whole
//! in their blocks and cut across blocks.

use std::path::{Path, PathBuf};

use bam::Reader;
use testkit::builders::{bgzf, BamBuilder, Rec};

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
