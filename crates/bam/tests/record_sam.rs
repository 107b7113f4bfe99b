//! Decodes whole BAM files of the conformance corpus with `Header::read`, `Record::decode` and
//! `write_sam`, and compares with the goldens samtools 1.16.1 produced.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use bam::{write_sam, Error, Header, HeaderError, Record, RecordError};
use flate2::read::MultiGzDecoder;

/// The project's copy of the samtools-made corpus.
fn corpus() -> PathBuf {
    testkit::corpus_dir()
}

fn open(path: &Path) -> impl Read {
    MultiGzDecoder::new(BufReader::new(File::open(path).unwrap()))
}

#[derive(Default)]
struct Output {
    header: Vec<u8>,
    records: Vec<u8>,
    count: usize,
    error: Option<RecordError>,
}

/// Reads `block_size`; `Ok(None)` at a clean end of stream.
fn read_block(r: &mut impl Read) -> Result<Option<Vec<u8>>, String> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        let n = r.read(&mut len[got..]).map_err(|e| e.to_string())?;
        if n == 0 {
            return if got == 0 {
                Ok(None)
            } else {
                Err("truncated block_size".into())
            };
        }
        got += n;
    }
    let block_size = u32::from_le_bytes(len);
    if block_size < 32 {
        return Err(format!("block_size {block_size}"));
    }
    let mut data = Vec::new();
    r.take(u64::from(block_size))
        .read_to_end(&mut data)
        .map_err(|e| e.to_string())?;
    if data.len() != block_size as usize {
        return Err("record past EOF".into());
    }
    Ok(Some(data))
}

/// Roughly `samtools view [-f req] [-F excl]` on the whole file.
fn view(path: &Path, filter: impl Fn(&Record) -> bool) -> Result<Output, String> {
    let name = path.display().to_string();
    let mut r = open(path);
    let header = Header::read(&mut r, &name).map_err(|e| e.to_string())?;
    let mut out = Output {
        header: header.text_for_output(),
        ..Output::default()
    };
    while let Some(data) = read_block(&mut r)? {
        let rec = match Record::decode(data, header.refs().len()) {
            Ok(rec) => rec,
            Err(e) => {
                out.error = Some(e);
                break;
            }
        };
        if !filter(&rec) {
            continue;
        }
        out.count += 1;
        if let Err(e) = write_sam(&rec, &header, &mut out.records) {
            out.error = Some(e);
            break;
        }
    }
    Ok(out)
}

fn golden(dir: &Path, case: &str) -> Vec<u8> {
    std::fs::read(dir.join("expected").join(format!("{case}.out"))).unwrap()
}

fn assert_same(case: &str, got: &[u8], want: &[u8]) {
    if got != want {
        let g = String::from_utf8_lossy(got);
        let w = String::from_utf8_lossy(want);
        for (i, (a, b)) in g.lines().zip(w.lines()).enumerate() {
            assert_eq!(a, b, "{case}: first difference at line {}", i + 1);
        }
        panic!(
            "{case}: outputs differ in length ({} vs {} bytes)",
            got.len(),
            want.len()
        );
    }
}

#[test]
fn whole_file_cases() {
    let dir = corpus();
    let cases: &[(&str, &str)] = &[
        ("ce1000_all", "data/ce1000.bam"),
        ("unmap2_all", "data/unmap2.bam"),
        ("auxf_all", "data/auxf.bam"),
        ("noseq_all", "data/noseq.bam"),
        ("unsorted_all", "data/unsorted.bam"),
        ("edge_all", "data/edge.bam"),
        ("aux_all", "data/aux.bam"),
        ("rawaux_all", "data/rawaux.bam"),
        ("longref_all", "data/longref.bam"),
        ("gzip_not_bgzf", "data/gz_plain.bam"),
        ("bgzf_extra_subfield_after_bc", "data/bgzf_extra_after.bam"),
    ];
    for (case, file) in cases {
        let out = view(&dir.join(file), |_| true).unwrap();
        assert!(out.error.is_none(), "{case}: {:?}", out.error);
        assert_same(case, &out.records, &golden(&dir, case));
    }
}

#[test]
fn flag_filtered_cases() {
    let dir = corpus();
    let out = view(&dir.join("data/supp.bam"), |r| {
        !r.flags().is_supplementary()
    })
    .unwrap();
    assert_same("supp_F2048", &out.records, &golden(&dir, "supp_F2048"));
    let out = view(&dir.join("data/rand.bam"), |r| r.flags().is_supplementary()).unwrap();
    assert_same(
        "rand_f2048_all",
        &out.records,
        &golden(&dir, "rand_f2048_all"),
    );
    let out = view(&dir.join("data/rand.bam"), |_| true).unwrap();
    assert_eq!(
        format!("{}\n", out.count).as_bytes(),
        golden(&dir, "rand_count")
    );
    let out = view(&dir.join("data/long.bam"), |_| true).unwrap();
    assert_eq!(
        format!("{}\n", out.count).as_bytes(),
        golden(&dir, "long_count")
    );
}

#[test]
fn unplaced_reads_of_long_records() {
    let dir = corpus();
    let out = view(&dir.join("data/long.bam"), |r| r.ref_id().is_none()).unwrap();
    assert_same(
        "long_unplaced",
        &out.records,
        &golden(&dir, "long_unplaced"),
    );
}

#[test]
fn header_cases() {
    let dir = corpus();
    let cases: &[(&str, &str, bool)] = &[
        ("rand_header_only", "data/rand.bam", false),
        ("manyrefs_header_only", "data/manyrefs.bam", false),
        ("hdr_no_trailing_newline", "data/hdr_nonl.bam", false),
        ("hdronly_header", "data/hdronly.bam", true),
        ("hdr_nosq_synthesised", "data/hdr_nosq.bam", true),
        ("no_hdr_sq_with_header", "data/no_hdr_sq_1.bam", true),
    ];
    for (case, file, with_records) in cases {
        let out = view(&dir.join(file), |_| true).unwrap();
        assert!(out.error.is_none(), "{case}: {:?}", out.error);
        let mut got = out.header;
        if *with_records {
            got.extend_from_slice(&out.records);
        }
        assert_same(case, &got, &golden(&dir, case));
    }
    let name = "data/hdr_nonl.bam";
    let h = Header::read(&mut open(&dir.join(name)), name).unwrap();
    assert_eq!(
        h.warnings(),
        ["[W::sam_hdr_sanitise] Missing trailing newline on SAM header. Possibly truncated"]
    );
}

/// Every record line of every status-0 golden that prints records must be a line of the
/// whole-file output of its BAM: this checks formatting of the records reached by regions.
#[test]
fn regional_golden_lines_exist_in_whole_file() {
    let dir = corpus();
    let tsv = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
    let mut checked = 0;
    for line in tsv.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 4 || cols[3] != "0" {
            continue;
        }
        let args: Vec<&str> = cols[1].split(' ').collect();
        if args.iter().any(|a| *a == "-c" || *a == "-H") {
            continue;
        }
        let Some(file) = args.iter().find(|a| a.ends_with(".bam")) else {
            continue;
        };
        if file.contains("raw_uncompressed") {
            continue;
        }
        // Files corrupt somewhere outside the region's reach cannot be read whole.
        let Ok(out) = view(&dir.join(file), |_| true) else {
            continue;
        };
        assert!(out.error.is_none(), "{}: {:?}", cols[0], out.error);
        let have: HashSet<&[u8]> = out.records.split(|&b| b == b'\n').collect();
        let want = golden(&dir, cols[0]);
        if args.contains(&"-h") {
            assert!(want.starts_with(&out.header), "{}: header differs", cols[0]);
        }
        for l in want.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            if l.first() == Some(&b'@') {
                continue;
            }
            assert!(
                have.contains(l),
                "{}: line not produced: {}",
                cols[0],
                String::from_utf8_lossy(&l[..l.len().min(200)])
            );
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} lines checked");
}

fn header_error(dir: &Path, file: &str) -> HeaderError {
    match Header::read(&mut open(&dir.join(file)), file) {
        Err(Error::Header { kind, .. }) => kind,
        other => panic!("{file}: expected a header error, got {other:?}"),
    }
}

#[test]
fn malformed_headers_fail() {
    let dir = corpus();
    assert_eq!(
        header_error(&dir, "malformed/bam_magic.bam"),
        HeaderError::BadMagic
    );
    assert_eq!(
        header_error(&dir, "malformed/l_text_negative.bam"),
        HeaderError::NegativeTextLength(-1)
    );
    assert_eq!(
        header_error(&dir, "malformed/l_text_huge.bam"),
        HeaderError::Truncated {
            field: "header text"
        }
    );
    assert_eq!(
        header_error(&dir, "malformed/n_ref_negative.bam"),
        HeaderError::NegativeRefCount(-1)
    );
    assert!(matches!(
        header_error(&dir, "malformed/n_ref_huge.bam"),
        HeaderError::Truncated { .. } | HeaderError::BadNameLength { .. }
    ));
    assert!(matches!(
        header_error(&dir, "malformed/l_name_negative.bam"),
        HeaderError::BadNameLength { l_name: -5, .. }
    ));
    assert!(matches!(
        header_error(&dir, "malformed/empty_file.bam"),
        HeaderError::Truncated { field: "magic" }
    ));
}

#[test]
fn truncated_header_fails() {
    let dir = corpus();
    // The file is cut inside the header: the gzip decoder either reports the cut or the header
    // parser does; both must be errors.
    let path = dir.join("malformed/trunc_in_header.bam");
    let mut r = open(&path);
    assert!(Header::read(&mut r, "trunc_in_header.bam").is_err());
}

#[test]
fn malformed_records_fail_after_the_good_ones() {
    let dir = corpus();
    let cases: &[(&str, &str)] = &[
        ("mf_l_read_name_zero", "malformed/l_read_name_zero.bam"),
        ("mf_l_read_name_big", "malformed/l_read_name_big.bam"),
        ("mf_refid_out_of_range", "malformed/refid_out_of_range.bam"),
        ("mf_aux_bad_type", "malformed/aux_bad_type.bam"),
        ("mf_cigar_seq_mismatch", "malformed/cigar_seq_mismatch.bam"),
    ];
    for (case, file) in cases {
        let out = view(&dir.join(file), |_| true).unwrap();
        assert!(out.error.is_some(), "{case}: no error");
        assert_same(case, &out.records, &golden(&dir, case));
    }
    let out = view(&dir.join("malformed/l_read_name_zero.bam"), |_| true).unwrap();
    assert_eq!(out.error, Some(RecordError::EmptyReadName));
    let out = view(&dir.join("malformed/refid_out_of_range.bam"), |_| true).unwrap();
    assert_eq!(
        out.error,
        Some(RecordError::RefIdOutOfRange {
            ref_id: 99,
            n_ref: 5
        })
    );
    let out = view(&dir.join("malformed/cigar_seq_mismatch.bam"), |_| true).unwrap();
    assert!(matches!(
        out.error,
        Some(RecordError::CigarSeqMismatch { ref read_name, cigar_len: 100, seq_len: 4 })
            if read_name == "III"
    ));
    let out = view(&dir.join("malformed/aux_bad_type.bam"), |_| true).unwrap();
    assert!(matches!(
        out.error,
        Some(RecordError::CorruptAux { ref read_name, .. }) if read_name == "III"
    ));
    // Counting (no formatting) does not look at aux data, as with `samtools view -c`.
    let name = "aux_bad_type.bam";
    let mut r = open(&dir.join("malformed").join(name));
    let h = Header::read(&mut r, name).unwrap();
    let mut n = 0;
    while let Some(data) = read_block(&mut r).unwrap() {
        Record::decode(data, h.refs().len()).unwrap();
        n += 1;
    }
    assert_eq!(n, 6);
}
