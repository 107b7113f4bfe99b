//! Regions read as one plan (`Reader::read_ranges`) give what each region read as a pass of its
//! own gives, in turn, at every thread count: also when a region holds no container, and when
//! a container queued ahead past a region's end cannot be read (a pass of its own would not
//! have read it).

use std::ops::Range as Bytes;
use std::path::PathBuf;

use cram::crai::CraiEntry;
use cram::reader::Range;
use cram::{Alignment, Fasta, Reader};

const NAME: &str = "spaced-3.0.cram";

fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/cram"))
}

fn open(bytes: &[u8], threads: usize) -> Reader {
    let fasta = Fasta::open(&dir().join("ref.fa")).unwrap();
    let mut r = Reader::open(std::io::Cursor::new(bytes.to_vec()), NAME, Some(fasta)).unwrap();
    r.set_threads(threads);
    r
}

fn entries() -> Vec<CraiEntry> {
    let crai = std::fs::read(dir().join(format!("{NAME}.crai"))).unwrap();
    cram::crai::parse(&crai).unwrap()
}

/// Every record the reader gives, and the error that ended the reading.
fn read_all(r: &mut Reader) -> (Vec<Alignment>, Option<String>) {
    let mut out = Vec::new();
    loop {
        match r.next_container() {
            Ok(Some(recs)) => out.extend(recs),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

/// The ranges read as one plan, and each read as a pass of its own, in turn.
fn both(bytes: &[u8], ranges: &[(Vec<Bytes<u64>>, Range)], threads: usize) -> [Vec<Alignment>; 2] {
    let mut joined = open(bytes, threads);
    joined.read_ranges(ranges.to_vec());
    let (one_plan, err) = read_all(&mut joined);
    assert!(err.is_none(), "-@{threads}: {err:?}");
    let mut passes = Vec::new();
    for (containers, range) in ranges {
        let mut r = open(bytes, threads);
        r.read_containers(containers.clone(), *range);
        let (recs, err) = read_all(&mut r);
        assert!(err.is_none(), "-@{threads}: {err:?}");
        passes.extend(recs);
    }
    [one_plan, passes]
}

/// The range of one crai entry's first bases, and its container's bytes.
fn first_bases(e: &CraiEntry, next: u64) -> (Vec<Bytes<u64>>, Range) {
    let range = Range {
        ref_id: e.ref_id,
        start: e.start,
        end: e.start + 10,
    };
    let mut containers = Vec::with_capacity(2);
    containers.push(e.container..next);
    (containers, range)
}

#[test]
fn a_region_with_no_container_does_not_end_the_plan() {
    let bytes = std::fs::read(dir().join(NAME)).unwrap();
    let e = entries();
    assert!(e.len() >= 3, "the fixture should have several containers");
    let a = first_bases(&e[0], e[1].container);
    let gap = (Vec::new(), a.1);
    let b = first_bases(&e[2], e.get(3).map_or(bytes.len() as u64, |n| n.container));
    for threads in [0, 2] {
        let [one_plan, passes] = both(&bytes, &[a.clone(), gap.clone(), b.clone()], threads);
        assert!(
            passes.iter().any(|r| r.pos >= e[2].start),
            "the last region's records"
        );
        assert_eq!(one_plan, passes, "-@{threads}");
    }
}

#[test]
fn an_unreadable_container_past_a_regions_end_does_not_end_the_plan() {
    let mut bytes = std::fs::read(dir().join(NAME)).unwrap();
    let e = entries();
    assert!(e.len() >= 3, "the fixture should have several containers");
    // The first region ends in the first container; the second container, planned for it too,
    // has its header damaged (its CRC no longer matches).
    let (mut containers, range) = first_bases(&e[0], e[1].container);
    containers.push(e[1].container..e[2].container);
    bytes[e[1].container as usize + 1] ^= 0x55;
    let b = first_bases(&e[2], e.get(3).map_or(bytes.len() as u64, |n| n.container));
    for threads in [0, 2] {
        let [one_plan, passes] = both(&bytes, &[(containers.clone(), range), b.clone()], threads);
        assert!(
            passes.iter().any(|r| r.pos >= e[2].start),
            "the last region's records"
        );
        assert_eq!(one_plan, passes, "-@{threads}");
    }
}
