//! Reference bases read ahead of their slices (`Reader::read_references_ahead`): the bases
//! read ahead are the ones a slice uses (the FASTA is not read again for them), a wrong
//! reference read ahead is refused as one read in turn is, and a line naming another span
//! than its slice's header is not used; at every thread count.

use std::ops::Range as Bytes;
use std::path::{Path, PathBuf};

use cram::crai::CraiEntry;
use cram::reader::Range;
use cram::{Alignment, Fasta, Reader};

const NAME: &str = "aligned-3.0-slices.cram";
const MISMATCH: &str = "MD5 checksum reference mismatch";

fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/cram"))
}

/// A copy of `ref.fa` and its `.fai` in a folder of the test's own, to be overwritten.
fn reference_copy(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hts-cram-ahead-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    for f in ["ref.fa", "ref.fa.fai"] {
        std::fs::copy(dir().join(f), d.join(f)).unwrap();
    }
    d.join("ref.fa")
}

fn open(reference: &Path, threads: usize) -> Reader {
    let bytes = std::fs::read(dir().join(NAME)).unwrap();
    let fasta = Fasta::open(reference).unwrap();
    let mut r = Reader::open(std::io::Cursor::new(bytes), NAME, Some(fasta)).unwrap();
    r.set_threads(threads);
    r
}

/// The second reference's lines, its containers' bytes, and a range over all of them.
fn second_reference() -> (Vec<CraiEntry>, Vec<Bytes<u64>>, Range) {
    let crai = std::fs::read(dir().join(format!("{NAME}.crai"))).unwrap();
    let all = cram::crai::parse(&crai).unwrap();
    let lines: Vec<CraiEntry> = all.iter().filter(|e| e.ref_id == 1).copied().collect();
    assert!(lines.len() >= 2, "the fixture should have several slices");
    let mut starts: Vec<u64> = all.iter().map(|e| e.container).collect();
    starts.sort_unstable();
    starts.dedup();
    let mut containers: Vec<Bytes<u64>> = Vec::new();
    for e in &lines {
        if containers.last().is_some_and(|c| c.start == e.container) {
            continue;
        }
        let next = starts.iter().find(|&&s| s > e.container).copied().unwrap();
        containers.push(e.container..next);
    }
    let range = Range {
        ref_id: 1,
        start: 1,
        end: i64::MAX,
    };
    (lines, containers, range)
}

/// Every record of the range, or the error that ended the reading.
fn read(r: &mut Reader, containers: &[Bytes<u64>], range: Range) -> Result<Vec<Alignment>, String> {
    r.read_containers(containers.to_vec(), range);
    let mut out = Vec::new();
    while let Some(recs) = r.next_container().map_err(|e| e.to_string())? {
        out.extend(recs);
    }
    Ok(out)
}

/// The reading gave `want`'s records.
fn assert_gives(got: Result<Vec<Alignment>, String>, want: &[Alignment], threads: usize) {
    assert!(
        got.as_ref().is_ok_and(|g| g == want),
        "-@{threads}: {:?}",
        got.err()
    );
}

/// The reading ends in an error saying `says`: wrong bases refused.
fn assert_refused(r: &mut Reader, (containers, range): (&[Bytes<u64>], Range), says: &str) {
    let read = read(r, containers, range).map(|recs| recs.len());
    let err = read.expect_err("the wrong bases are refused");
    assert!(err.contains(says), "{err}");
}

/// `ref.fa` with every base of `ref2` changed (A and C, G and T swapped; the same names,
/// lengths and lines), written over `reference`: a slice of `ref2` rebuilt from these bases
/// differs, and their MD5s do not match the slices'.
fn overwrite_with_wrong(reference: &Path) {
    let text = std::fs::read_to_string(dir().join("ref.fa")).unwrap();
    let mut in_ref2 = false;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.strip_prefix('>') {
            in_ref2 = name.split_whitespace().next() == Some("ref2");
            out.push_str(line);
            continue;
        }
        let swap = |c: char| match (in_ref2, c) {
            (true, 'A') => 'C',
            (true, 'C') => 'A',
            (true, 'G') => 'T',
            (true, 'T') => 'G',
            (_, c) => c,
        };
        out.extend(line.chars().map(swap));
    }
    assert_ne!(out, text);
    std::fs::write(reference, out).unwrap();
}

#[test]
fn bases_read_ahead_are_the_ones_used() {
    let (lines, containers, range) = second_reference();
    for threads in [0, 1, 2] {
        let reference = reference_copy(&format!("used-{threads}"));
        let want = read(&mut open(&reference, threads), &containers, range).unwrap();
        assert!(!want.is_empty());
        let mut r = open(&reference, threads);
        r.read_references_ahead(&lines);
        // Read again, these bases would not match the slices' MD5s.
        overwrite_with_wrong(&reference);
        let got = read(&mut r, &containers, range);
        assert_gives(got, &want, threads);
        // A reader that read nothing ahead finds the wrong bases.
        let mut fresh = open(&reference, threads);
        assert_refused(&mut fresh, (&containers, range), MISMATCH);
        let _ = std::fs::remove_dir_all(reference.parent().unwrap());
    }
}

#[test]
fn a_wrong_reference_read_ahead_is_refused() {
    let (lines, containers, range) = second_reference();
    for threads in [0, 1, 2] {
        // The wrong bases read ahead, the right ones on disk by the time the slices come:
        // the slices use what was read ahead, and refuse it by its MD5.
        let reference = reference_copy(&format!("wrong-{threads}"));
        overwrite_with_wrong(&reference);
        let mut r = open(&reference, threads);
        r.read_references_ahead(&lines);
        std::fs::copy(dir().join("ref.fa"), &reference).unwrap();
        assert_refused(
            &mut r,
            (&containers, range),
            &format!("{MISMATCH} at ref2:"),
        );
        let _ = std::fs::remove_dir_all(reference.parent().unwrap());
    }
}

#[test]
fn a_line_naming_another_span_is_not_used() {
    let (mut lines, containers, range) = second_reference();
    for e in &mut lines {
        e.span += 1;
    }
    for threads in [0, 2] {
        // Bases of another span, were they used, would not match the slices' MD5s.
        let reference = dir().join("ref.fa");
        let want = read(&mut open(&reference, threads), &containers, range).unwrap();
        let mut r = open(&reference, threads);
        r.read_references_ahead(&lines);
        let got = read(&mut r, &containers, range);
        assert_gives(got, &want, threads);
        // And the slices read their own spans: wrong ones on disk now are refused.
        let reference = reference_copy(&format!("other-{threads}"));
        let mut r = open(&reference, threads);
        r.read_references_ahead(&lines);
        overwrite_with_wrong(&reference);
        assert_refused(&mut r, (&containers, range), MISMATCH);
        let _ = std::fs::remove_dir_all(reference.parent().unwrap());
    }
}

#[test]
fn hostile_lines_are_passed_over() {
    let (lines, containers, range) = second_reference();
    let want = read(&mut open(&dir().join("ref.fa"), 0), &containers, range).unwrap();
    let e = lines[0];
    let hostile = [
        CraiEntry {
            start: i64::MAX,
            ..e
        },
        CraiEntry {
            span: i64::MAX,
            ..e
        },
        CraiEntry {
            span: i64::MIN,
            ..e
        },
        CraiEntry { start: -5, ..e },
        // Within a slice header's numbers, but past what is read ahead (16 MiB).
        CraiEntry {
            span: i64::from(i32::MAX),
            ..e
        },
        CraiEntry { ref_id: 99, ..e },
    ];
    for threads in [0, 2] {
        let mut r = open(&dir().join("ref.fa"), threads);
        r.read_references_ahead(&hostile);
        let got = read(&mut r, &containers, range);
        assert_gives(got, &want, threads);
    }
}
