//! Decoding threads (`Reader::set_threads`) give the records of the reader alone, in the same
//! order, for every fixture (references from a FASTA, embedded, absent; multi-reference slices,
//! which the reader decodes in turn), for a range read through the `.crai`, and after a rewind;
//! and a damaged container's error comes after the records before it, as without threads.
//! Records laid out where they are made whole (`Reader::set_layout`, on the workers with
//! threads) are the records `next_container` gives, laid out the same way, at every thread
//! count, and a layout's own error comes after the records laid out before it.

use std::path::PathBuf;
use std::sync::Arc;

use cram::reader::{Layout, Range};
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

/// A reader of spaced-3.0.cram's `0:90000-200000`, its containers planned through the `.crai`.
fn ranged(threads: usize) -> Reader {
    let name = "spaced-3.0.cram";
    let crai = std::fs::read(dir().join(format!("{name}.crai"))).unwrap();
    let entries = cram::crai::parse(&crai).unwrap();
    let range = Range {
        ref_id: 0,
        start: 90_000,
        end: 200_000,
    };
    let mut r = open(name, threads);
    let planned = cram::crai::containers_for(&entries, &range, r.data_end()).unwrap();
    assert!(planned.len() > 1, "the range should span containers");
    r.read_containers(planned, range);
    r
}

/// spaced-3.0.cram with a byte in the middle damaged: some container's block CRC no longer
/// matches.
fn damaged() -> Vec<u8> {
    let mut bytes = std::fs::read(dir().join("spaced-3.0.cram")).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    bytes
}

#[test]
fn a_range_through_the_index_is_the_same_with_threads() {
    let read = |threads| {
        let (recs, err) = containers(&mut ranged(threads));
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
    let (name, bytes) = ("spaced-3.0.cram", damaged());
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

/// A layout that keeps every field: the record's debug text.
fn text(a: &Alignment, out: &mut Vec<u8>) -> Result<(), String> {
    out.extend_from_slice(format!("{a:?}").as_bytes());
    Ok(())
}

/// Every record `next_container` gives, laid out by [`text`], and the error that ended it.
fn by_records(r: &mut Reader) -> (Vec<Vec<u8>>, Option<String>) {
    let mut out = Vec::new();
    loop {
        match r.next_container() {
            Ok(Some(recs)) => out.extend(recs.iter().map(|a| {
                let mut v = Vec::new();
                text(a, &mut v).unwrap();
                v
            })),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

/// Every record laid out by `layout` through `next_laid_out`, and the error that ended it
/// (the reader's or the layout's).
fn by_layout(r: &mut Reader, layout: Layout) -> (Vec<Vec<u8>>, Option<String>) {
    r.set_layout(layout);
    let mut out = Vec::new();
    loop {
        match r.next_laid_out() {
            Ok(Some(laid)) => {
                out.extend(laid.records().map(<[u8]>::to_vec));
                if let Some(e) = laid.error() {
                    return (out, Some(e.to_string()));
                }
                r.recycle_laid(laid);
            }
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

#[test]
fn laid_out_records_are_the_records_at_every_thread_count() {
    let names = fixtures();
    assert!(names.len() >= 20, "fixtures missing: {names:?}");
    for name in &names {
        let (want, err) = by_records(&mut open(name, 0));
        assert!(err.is_none(), "{name}: {err:?}");
        assert!(!want.is_empty(), "{name}: no records");
        for threads in [0, 1, 3] {
            let got = by_layout(&mut open(name, threads), Arc::new(text));
            assert_eq!(got, (want.clone(), None), "{name} -@{threads}");
        }
    }
}

#[test]
fn a_range_laid_out_is_the_range_read_at_every_thread_count() {
    let (want, err) = by_records(&mut ranged(0));
    assert!(err.is_none(), "{err:?}");
    assert!(!want.is_empty());
    for threads in [0, 2] {
        let got = by_layout(&mut ranged(threads), Arc::new(text));
        assert_eq!(got, (want.clone(), None), "-@{threads}");
    }
}

#[test]
fn a_damaged_container_fails_after_the_records_before_it() {
    let (name, bytes) = ("spaced-3.0.cram", damaged());
    let (want, err) = by_records(&mut open_bytes(name, bytes.clone(), 0));
    assert!(err.is_some(), "the damage is found");
    assert!(!want.is_empty());
    for threads in [0, 2] {
        let got = by_layout(
            &mut open_bytes(name, bytes.clone(), threads),
            Arc::new(text),
        );
        assert_eq!(got, (want.clone(), err.clone()), "-@{threads}");
    }
}

#[test]
fn a_layout_error_comes_after_the_records_laid_out_before_it() {
    let name = "spaced-3.0.cram";
    let (all, _) = by_records(&mut open(name, 0));
    let bad = all.len() / 2;
    let seen = String::from_utf8_lossy(&all[bad]).into_owned();
    for threads in [0, 2] {
        let seen = seen.clone();
        let layout: Layout = Arc::new(move |a: &Alignment, out: &mut Vec<u8>| {
            let before = out.len();
            text(a, out)?;
            if out[before..] == *seen.as_bytes() {
                return Err("refused".to_string());
            }
            Ok(())
        });
        let got = by_layout(&mut open(name, threads), layout);
        assert_eq!(got.0, all[..bad], "-@{threads}");
        // The error names the slice the record came from.
        let e = got.1.unwrap_or_default();
        assert!(
            e.starts_with("a record of the slice at byte "),
            "-@{threads}: {e}"
        );
        assert!(e.ends_with(": refused"), "-@{threads}: {e}");
    }
}

/// A byte source that notes the furthest byte read.
struct Watched {
    bytes: std::io::Cursor<Vec<u8>>,
    furthest: Arc<std::sync::atomic::AtomicU64>,
}

impl std::io::Read for Watched {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.bytes.read(buf)?;
        let end = self.bytes.position();
        self.furthest
            .fetch_max(end, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

impl std::io::Seek for Watched {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.bytes.seek(pos)
    }
}

/// The first records of a range come as soon as its first container is decoded: the
/// containers whose bytes follow it (over a remote file's request they come after them) are
/// read only then. Containers elsewhere in the file, another region's, are read ahead at once
/// (a remote file fetches them beside the first).
#[test]
fn the_first_container_is_not_held_back_by_those_after_it() {
    let name = "spaced-3.0.cram";
    let crai = std::fs::read(dir().join(format!("{name}.crai"))).unwrap();
    let lines = cram::crai::parse(&crai).unwrap();
    let starts: Vec<u64> = lines.iter().map(|e| e.container).collect();
    let (a, b, c, d, e) = (starts[0], starts[1], starts[2], starts[3], starts[4]);
    assert!(
        lines[2].ref_id == 0 && lines[3].ref_id == 1,
        "the fixture's layout"
    );
    let whole = |ref_id| Range {
        ref_id,
        start: 1,
        end: i64::MAX,
    };
    for threads in [1, 2] {
        let furthest = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let open = || {
            let watched = Watched {
                bytes: std::io::Cursor::new(std::fs::read(dir().join(name)).unwrap()),
                furthest: Arc::clone(&furthest),
            };
            let fasta = Fasta::open(&dir().join("ref.fa")).unwrap();
            let mut r = Reader::open(watched, name, Some(fasta)).unwrap();
            r.set_threads(threads);
            r
        };
        // One region, three containers one after another.
        let mut r = open();
        r.read_containers(vec![a..b, b..c, c..d], whole(0));
        let first = r.next_container().unwrap().unwrap();
        assert!(!first.is_empty());
        let read = furthest.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            read <= b,
            "-@{threads}: read to {read} before the first records"
        );
        // Then it reads ahead again: the rest of the range is queued at once.
        assert!(r.next_container().unwrap().is_some());
        let read = furthest.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            read >= d,
            "-@{threads}: read to {read} only, once records were out"
        );
        let (rest, err) = containers(&mut r);
        assert!(err.is_none() && rest.len() == 1, "-@{threads}");
        // Two regions: the second one's container is read ahead with the first.
        furthest.store(0, std::sync::atomic::Ordering::Relaxed);
        let mut r = open();
        let (first, second) = (
            std::iter::once(a..b).collect(),
            std::iter::once(d..e).collect(),
        );
        r.read_ranges(vec![(first, whole(0)), (second, whole(1))]);
        assert!(!r.next_container().unwrap().unwrap().is_empty());
        let read = furthest.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            read >= e,
            "-@{threads}: the second region's container was not read ahead"
        );
    }
}
