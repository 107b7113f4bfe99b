//! Records read in place (`Reader::read_record_ref`) and SAM written through `SamWriter`, with
//! and without threads, give exactly what the owned, one-record-at-a-time path gives: for every
//! BAM of the corpus, for records cut across blocks at every offset, and when a record fails in
//! the middle of a threaded run.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bam::{write_sam, Header, OpenOptions, Reader, Record, RecordError, SamWriteError, SamWriter};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance/data")
}

fn open(path: &Path, threads: usize) -> Reader {
    let options = OpenOptions {
        threads,
        ..OpenOptions::default()
    };
    Reader::open(&path.display().to_string(), &options).unwrap()
}

/// The reference: owned records, one `write_sam` each; the first error ends it.
fn owned_sam(path: &Path) -> (Vec<u8>, Vec<Vec<u8>>, Option<String>) {
    let mut r = open(path, 0);
    let header = r.header().clone();
    let (mut text, mut datas) = (Vec::new(), Vec::new());
    let mut r = r.records().unwrap();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => {
                datas.push(rec.data().to_vec());
                if let Err(e) = write_sam(&rec, &header, &mut text) {
                    return (text, datas, Some(e.to_string()));
                }
            }
            Ok(None) => return (text, datas, None),
            Err(e) => return (text, datas, Some(e.to_string())),
        }
    }
}

/// Text written to a `Vec` the test keeps, so it can be seen after an error.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// In place, through a `SamWriter` with `threads` formatting threads (and as many inflating).
fn in_place_sam(path: &Path, threads: usize) -> (Vec<u8>, Vec<Vec<u8>>, Option<String>) {
    let mut r = open(path, threads);
    let header = r.header().clone();
    let out = Shared::default();
    let mut w = SamWriter::new(out.clone(), &header, threads);
    let mut datas = Vec::new();
    let mut error = None;
    let mut r = r.records().unwrap();
    loop {
        match r.next_record_ref() {
            Ok(Some(rec)) => {
                datas.push(rec.data().to_vec());
                if let Err(e) = w.write_record(&rec) {
                    error = Some(e.to_string());
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    // A formatting error found by a worker comes out of finish, after the text before it; it
    // is then the first error in file order.
    if let Err(e) = w.finish() {
        error = Some(e.to_string());
    }
    let text = out.0.lock().unwrap().clone();
    (text, datas, error)
}

#[test]
fn corpus_in_place_matches_owned() {
    let mut seen = 0;
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("bam") {
            continue;
        }
        // Files whose header cannot be read have nothing to compare.
        if Reader::open(&path.display().to_string(), &OpenOptions::default()).is_err() {
            continue;
        }
        let (want_text, want_datas, want_error) = owned_sam(&path);
        for threads in [0, 1, 3] {
            let (text, datas, error) = in_place_sam(&path, threads);
            let name = format!("{} ({threads} threads)", path.display());
            assert!(datas == want_datas, "{name}: record bytes differ");
            assert!(text == want_text, "{name}: SAM differs");
            assert_eq!(error, want_error, "{name}");
        }
        seen += 1;
    }
    assert!(seen >= 10, "only {seen} corpus BAMs were read");
}

/// A record of `l_seq` bases all matching (`{l_seq}M`), with `aux` bytes, `block_size` first.
fn record(name: &str, pos: i32, l_seq: usize, aux: &[u8]) -> Vec<u8> {
    let seq: String = (0..l_seq).map(|i| char::from(b"ACGTN"[i % 5])).collect();
    testkit::builders::record_bytes(&testkit::builders::Rec {
        name,
        pos,
        cigar: &format!("{l_seq}M"),
        seq: &seq,
        qual: Some((0..l_seq).map(|i| (i % 40) as u8).collect()),
        aux: aux.to_vec(),
        ..Default::default()
    })
}

/// A BAM of `records`, with a block boundary wherever `cut` says (a byte count since the last
/// boundary).
fn bam_file(records: &[Vec<u8>], cut: impl Fn(usize) -> bool) -> Vec<u8> {
    let text = b"@SQ\tSN:c\tLN:100000\n";
    let mut w = bgzf::Writer::new(Vec::new());
    w.write_all(b"BAM\x01").unwrap();
    w.write_all(&(text.len() as u32).to_le_bytes()).unwrap();
    w.write_all(text).unwrap();
    w.write_all(&1u32.to_le_bytes()).unwrap();
    w.write_all(&2u32.to_le_bytes()).unwrap();
    w.write_all(b"c\0").unwrap();
    w.write_all(&100_000u32.to_le_bytes()).unwrap();
    w.flush_block().unwrap();
    let mut since = 0;
    for r in records {
        for &b in r {
            w.write_all(&[b]).unwrap();
            since += 1;
            if cut(since) {
                w.flush_block().unwrap();
                since = 0;
            }
        }
    }
    w.finish().unwrap()
}

fn temp_bam(tag: &str, bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("hts-in-place-{tag}-{}.bam", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn records_cut_at_every_offset() {
    let records: Vec<Vec<u8>> = (0..40)
        .map(|i| {
            record(
                &format!("r{i}"),
                i * 10,
                5 + i as usize % 7,
                b"NMC\x01XAZab\0",
            )
        })
        .collect();
    let len = records[0].len();
    // Block boundaries every `step` bytes put one inside every field of some record, the
    // 4-byte block_size included.
    for step in [1, 2, 3, 5, len - 1, len, len + 1, 2 * len + 3] {
        let path = temp_bam(&format!("cut{step}"), &bam_file(&records, |n| n == step));
        let (want_text, want_datas, want_error) = owned_sam(&path);
        assert_eq!(want_error, None);
        assert_eq!(want_datas.len(), records.len());
        for (d, r) in want_datas.iter().zip(&records) {
            assert_eq!(d[..], r[4..], "step {step}");
        }
        for threads in [0, 2] {
            let (text, datas, error) = in_place_sam(&path, threads);
            assert_eq!(error, None, "step {step}");
            assert!(
                datas == want_datas && text == want_text,
                "step {step}, {threads} threads"
            );
        }
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn a_bad_record_mid_run_stops_the_output_exactly_before_it() {
    let mut records: Vec<Vec<u8>> = (0..6000)
        .map(|i| record(&format!("read{i}"), i, 100, b"NMC\x01"))
        .collect();
    // Corrupt aux data (an unknown type) in record 4321: counted, but not printable.
    records[4321] = record("bad", 4321, 100, b"XQQ1234");
    let path = temp_bam("bad", &bam_file(&records, |n| n == 60_000));
    let header = open(&path, 0).header().clone();
    let mut expect = Vec::new();
    for r in &records[..4321] {
        let rec = Record::decode(r[4..].to_vec(), 1).unwrap();
        write_sam(&rec, &header, &mut expect).unwrap();
    }
    for threads in [0, 1, 2, 4] {
        let (text, datas, error) = in_place_sam(&path, threads);
        let error = error.expect("the bad record is reported");
        assert!(error.contains("for read bad "), "{error}");
        assert!(
            text == expect,
            "{threads} threads: {} vs {} bytes",
            text.len(),
            expect.len()
        );
        assert!(datas.len() > 4321);
    }
    std::fs::remove_file(&path).unwrap();
}

/// A header with one reference, `c`, and a valid record on it.
fn one_reference_and_a_good_record() -> (Header, Record) {
    let reference = bam::Reference {
        name: b"c".to_vec(),
        len: 100_000,
    };
    let header = Header::from_parts(Vec::new(), vec![reference]).unwrap();
    let good = Record::decode(record("good", 5, 150, b"NMC\x01")[4..].to_vec(), 1).unwrap();
    (header, good)
}

#[test]
fn threaded_error_output_is_the_text_before_the_bad_record() {
    let (header, good) = one_reference_and_a_good_record();
    let bad = Record::decode(record("bad", 6, 150, b"XQQ1234")[4..].to_vec(), 1).unwrap();
    let mut one = Vec::new();
    write_sam(&good, &header, &mut one).unwrap();
    for threads in [0, 1, 3] {
        let out = Shared::default();
        let mut w = SamWriter::new(out.clone(), &header, threads);
        let mut result = Ok(());
        for i in 0..20_000 {
            let r = if i == 12_345 { &bad } else { &good };
            result = w.write_record(r);
            if result.is_err() {
                break;
            }
        }
        let finished = w.finish().map(|_| ());
        let error = result.err().or(finished.err());
        match error {
            Some(SamWriteError::Record(RecordError::CorruptAux { read_name, .. })) => {
                assert_eq!(read_name, "bad")
            }
            other => panic!("{threads} threads: {other:?}"),
        }
        let text = out.0.lock().unwrap().clone();
        assert!(
            text == one.repeat(12_345),
            "{threads} threads: {} bytes",
            text.len()
        );
    }
}

/// Fails every write after `left` bytes.
struct Full {
    left: usize,
}

impl Write for Full {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() > self.left {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
        }
        self.left -= buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn output_errors_stop_the_writer() {
    let (header, good) = one_reference_and_a_good_record();
    for threads in [0, 2] {
        let mut w = SamWriter::new(Full { left: 3 << 20 }, &header, threads);
        let mut failed = None;
        for _ in 0..100_000 {
            if let Err(e) = w.write_record(&good) {
                failed = Some(e);
                break;
            }
        }
        let error = failed.or(w.finish().err());
        assert!(
            matches!(&error, Some(SamWriteError::Io(e)) if e.kind() == io::ErrorKind::StorageFull),
            "{threads} threads: {error:?}"
        );
    }
}

/// Every record of `regions`, owned and in place, as (record bytes, SAM line).
fn query_both(path: &Path, regions: &[&str]) -> [Vec<(Vec<u8>, Vec<u8>)>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for (i, in_place) in [false, true].into_iter().enumerate() {
        let mut r = open(path, 0);
        r.load_index(None).unwrap();
        let header = r.header().clone();
        let targets: Vec<region::Region> = regions
            .iter()
            .map(|s| region::parse_region(s, &header).unwrap())
            .collect();
        let mut q = r.query(targets).unwrap();
        loop {
            let mut line = Vec::new();
            let data = if in_place {
                let Some(rec) = q.next_record_ref().unwrap() else {
                    break;
                };
                write_sam(&rec, &header, &mut line).unwrap();
                rec.data().to_vec()
            } else {
                let Some(rec) = q.next_record().unwrap() else {
                    break;
                };
                write_sam(&rec, &header, &mut line).unwrap();
                rec.data().to_vec()
            };
            out[i].push((data, line));
        }
    }
    out
}

#[test]
fn queries_in_place_match_owned() {
    let ce = fixtures().join("ce1000.bam");
    let regions = [
        "CHROMOSOME_I:1-1000",
        "CHROMOSOME_I:5000-90000",
        "CHROMOSOME_I",
        "CHROMOSOME_II",
        "*",
        "CHROMOSOME_I:100-200",
    ];
    let [owned, in_place] = query_both(&ce, &regions);
    assert!(owned.len() > 1000, "{} records", owned.len());
    assert!(owned == in_place);

    // Records much larger than a block, and long CIGARs kept in CG tags.
    let long = fixtures().join("long.bam");
    let [owned, in_place] = query_both(&long, &["L:1-2000000", "L:190000-210000", "L", "*"]);
    assert!(owned.len() >= 10, "{} records", owned.len());
    assert!(owned == in_place);
    let cg = owned
        .iter()
        .find(|(_, line)| line.starts_with(b"cg_70000_ops\t"))
        .expect("the long-CIGAR record is in the region");
    assert!(cg.1.windows(8).any(|w| w == b"\t1M1D1M1"), "CIGAR restored");
}

#[test]
fn flush_hands_on_every_record_so_far() {
    let (header, good) = one_reference_and_a_good_record();
    let mut one = Vec::new();
    write_sam(&good, &header, &mut one).unwrap();
    for threads in [0, 2] {
        let out = Shared::default();
        let mut w = SamWriter::new(out.clone(), &header, threads);
        for _ in 0..128 {
            w.write_record(&good).unwrap();
        }
        w.flush().unwrap();
        let seen = out.0.lock().unwrap().clone();
        assert!(
            seen == one.repeat(128),
            "{threads} threads: {} bytes",
            seen.len()
        );
        w.finish().unwrap();
    }
    // Without it, text waits for a full chunk.
    let out = Shared::default();
    let mut w = SamWriter::new(out.clone(), &header, 0);
    for _ in 0..128 {
        w.write_record(&good).unwrap();
    }
    assert!(out.0.lock().unwrap().is_empty());
    w.finish().unwrap();
    assert_eq!(out.0.lock().unwrap().len(), 128 * one.len());
}
