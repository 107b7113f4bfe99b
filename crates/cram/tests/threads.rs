//! Decoding threads (`Reader::set_threads`) give the records of the reader alone, in the same
//! order, for every fixture (references from a FASTA, embedded, absent; multi-reference slices,
//! which the reader decodes in turn), for a range read through the `.crai`, and after a rewind;
//! and a damaged container's error comes after the records before it, as without threads.

use std::path::PathBuf;

use cram::reader::Range;
use cram::{Alignment, Fasta, Reader};

fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/cram"))
}

fn open_bytes(name: &str, bytes: Vec<u8>, threads: usize) -> Reader {
    // blockreads-3.0.cram is made against the bgzipped block.fa.gz, every other one ref.fa.
    let reference = if name.starts_with("blockreads") {
        "block.fa.gz"
    } else {
        "ref.fa"
    };
    let fasta = Fasta::open(&dir().join(reference)).unwrap();
    let mut r = Reader::open(std::io::Cursor::new(bytes), name, Some(fasta)).unwrap();
    r.set_threads(threads);
    r
}

fn open(name: &str, threads: usize) -> Reader {
    open_bytes(name, std::fs::read(dir().join(name)).unwrap(), threads)
}

/// Every container's records (as a list per container) and the error that ended the reading.
fn containers(r: &mut Reader) -> (Vec<Vec<Alignment>>, Option<cram::Error>) {
    let mut out = Vec::new();
    loop {
        match r.next_container() {
            Ok(Some(recs)) => out.push(recs),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".cram"))
        .collect();
    names.sort();
    names
}

#[test]
fn threads_give_the_same_records_in_the_same_order() {
    let names = fixtures();
    assert!(names.len() >= 20, "fixtures missing: {names:?}");
    for name in &names {
        let (alone, err) = containers(&mut open(name, 0));
        assert!(err.is_none(), "{name}: {err:?}");
        assert!(!alone.is_empty(), "{name}: no records");
        for threads in [1, 3] {
            let mut r = open(name, threads);
            let (with, err) = containers(&mut r);
            assert!(err.is_none(), "{name} -@{threads}: {err:?}");
            assert_eq!(with, alone, "{name} with {threads} thread(s)");
            // Read again from the first container: nothing queued before is left over.
            r.rewind();
            let (again, _) = containers(&mut r);
            assert_eq!(again, alone, "{name} with {threads} thread(s), rewound");
        }
    }
}

#[test]
fn a_range_through_the_index_is_the_same_with_threads() {
    let name = "spaced-3.0.cram";
    let crai = std::fs::read(dir().join(format!("{name}.crai"))).unwrap();
    let entries = cram::crai::parse(&crai).unwrap();
    let range = Range {
        ref_id: 0,
        start: 90_000,
        end: 200_000,
    };
    let read = |threads| {
        let mut r = open(name, threads);
        let planned = cram::crai::containers_for(&entries, &range, r.data_end()).unwrap();
        assert!(planned.len() > 1, "the range should span containers");
        r.read_containers(planned, range);
        let (recs, err) = containers(&mut r);
        assert!(err.is_none(), "{err:?}");
        recs.concat()
    };
    let alone = read(0);
    assert!(!alone.is_empty());
    assert!(alone.iter().all(|a| a.ref_id == 0 && a.pos <= 200_000));
    assert_eq!(read(2), alone);
}

#[test]
fn an_error_comes_after_the_records_before_it() {
    let name = "spaced-3.0.cram";
    let mut bytes = std::fs::read(dir().join(name)).unwrap();
    // Damage a byte in the middle of the file: some container's block CRC no longer matches.
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    let (alone, err_alone) = containers(&mut open_bytes(name, bytes.clone(), 0));
    let err_alone = err_alone.expect("the damage is found");
    let (with, err_with) = containers(&mut open_bytes(name, bytes, 2));
    assert_eq!(with, alone);
    assert_eq!(err_with, Some(err_alone));
}

/// A slice's reference bases are read by the reader's thread while a worker decodes the
/// container's blocks: a wrong reference's MD5 error comes in its turn, the same as without
/// threads, and so does a reference missing from the FASTA.
#[test]
fn a_reference_error_is_the_same_with_threads() {
    for reference in ["wrong.fa", "block.fa.gz"] {
        let read = |threads| {
            let bytes = std::fs::read(dir().join("aligned-3.0.cram")).unwrap();
            let fasta = Fasta::open(&dir().join(reference)).unwrap();
            let mut r = Reader::open(std::io::Cursor::new(bytes), "x", Some(fasta)).unwrap();
            r.set_threads(threads);
            containers(&mut r)
        };
        let (alone, err_alone) = read(0);
        let err_alone = err_alone.expect("the reference is wrong");
        for threads in [1, 2] {
            let (with, err_with) = read(threads);
            assert_eq!(with, alone, "{reference} -@{threads}");
            assert_eq!(
                err_with.as_ref(),
                Some(&err_alone),
                "{reference} -@{threads}"
            );
        }
    }
}
