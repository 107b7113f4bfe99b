//! The library against the samtools-made goldens of `fixtures/conformance-extra`, without the
//! CLI: every `view [-c] -e EXPR FILE` case through [`samtools::filter::Selection`], every
//! `view [-c] -M FILE REGION...` case through [`bam::Regions::Multi`], every `-P` case through
//! [`samtools::pairs`].

use std::path::{Path, PathBuf};

use bam::Regions;
use bam::{OpenOptions, Reader};
use region::RegionSet;
use samtools::filter::bed::Targets;
use samtools::filter::expr::Expression;
use samtools::filter::Selection;
use samtools::pairs::{first_pass, second_pass};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance-extra")
}

struct Case {
    id: String,
    args: Vec<String>,
    expected: PathBuf,
    ok: bool,
}

fn cases() -> Vec<Case> {
    let dir = corpus();
    let text = std::fs::read_to_string(dir.join("cases.tsv")).expect("cases.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            Case {
                id: c[0].to_string(),
                args: c[1].split(' ').map(str::to_string).collect(),
                expected: dir.join(c[2]),
                ok: c[3] == "0",
            }
        })
        .collect()
}

/// Runs records through `select` and prints them (or their count) as `samtools view` does.
fn output(
    reader: &mut Reader,
    count: bool,
    mut keep: impl FnMut(&mut bam::Record, &bam::Header) -> bool,
) -> Vec<u8> {
    let header = reader.header().clone();
    let mut out = Vec::new();
    let mut n = 0u64;
    let mut records = reader.records().unwrap();
    while let Some(mut r) = records.next_record().unwrap() {
        if keep(&mut r, &header) {
            n += 1;
            if !count {
                bam::write_sam(&r, &header, &mut out).expect("valid record");
            }
        }
    }
    if count {
        out.extend_from_slice(format!("{n}\n").as_bytes());
    }
    out
}

/// `-c` right after `view`, and the arguments after it.
fn count_and_rest(a: &[String]) -> (bool, &[String]) {
    match a.get(1).map(String::as_str) {
        Some("-c") => (true, &a[2..]),
        _ => (false, &a[1..]),
    }
}

#[test]
fn expression_cases_match_samtools() {
    let mut checked = 0;
    for case in cases() {
        let a = &case.args;
        let (count, rest) = count_and_rest(a);
        if a[0] != "view" || rest.len() != 3 || rest[0] != "-e" {
            continue;
        }
        let file = corpus().join(&rest[2]);
        let expected = std::fs::read(&case.expected).expect("golden");
        let expr = match Expression::parse(&rest[1]) {
            Ok(e) => e,
            Err(e) => {
                assert!(!case.ok, "{}: {e}", case.id);
                assert!(expected.is_empty() || expected == b"0\n", "{}", case.id);
                checked += 1;
                continue;
            }
        };
        assert!(
            case.ok,
            "{}: parsed, but the case expects a failure",
            case.id
        );
        let mut sel = Selection {
            expression: Some(expr),
            ..Selection::default()
        };
        let mut reader = Reader::open(file.to_str().unwrap(), &OpenOptions::default()).unwrap();
        let got = output(&mut reader, count, |r, h| sel.select(r, h));
        assert!(got == expected, "{}: output differs from samtools", case.id);
        checked += 1;
    }
    assert!(checked >= 80, "only {checked} expression cases found");
}

/// Opens a corpus file with its index, and the region hash and region set of `regions` as
/// samtools builds them for `-M`.
fn indexed_with_regions(file: &str, regions: &[String]) -> (Reader, Targets, RegionSet) {
    let path = corpus().join(file);
    let mut reader = Reader::open(path.to_str().unwrap(), &OpenOptions::default()).unwrap();
    reader.select_index(None).unwrap();
    let merged = Targets::merge_regions(None, regions);
    let (targets, filtered) = (merged.targets, merged.filtered);
    let set = RegionSet::resolve(&targets.region_list(filtered), reader.header(), |_| {});
    (reader, targets, set)
}

#[test]
fn multi_region_cases_match_samtools() {
    let mut checked = 0;
    for case in cases() {
        let a = &case.args;
        let (count, rest) = count_and_rest(a);
        let plain = rest.len() >= 3
            && matches!(rest[0].as_str(), "-M" | "--use-index")
            && rest[1].ends_with(".bam");
        if a[0] != "view" || !case.ok || !plain {
            continue;
        }
        let expected = std::fs::read(&case.expected).expect("golden");
        let (mut reader, _, set) = indexed_with_regions(&rest[1], &rest[2..]);
        let header = reader.header().clone();
        let mut q = reader.query(Regions::Multi(set)).unwrap();
        let mut out = Vec::new();
        let mut n = 0;
        while let Some(r) = q.next_record().unwrap() {
            n += 1;
            if !count {
                bam::write_sam(&r, &header, &mut out).unwrap();
            }
        }
        if count {
            out = format!("{n}\n").into_bytes();
        }
        if out != expected {
            let _ = std::fs::write(std::env::temp_dir().join(format!("{}.got", case.id)), &out);
        }
        assert!(out == expected, "{}: output differs from samtools", case.id);
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} -M cases found");
}

#[test]
fn fetch_pairs_cases_match_samtools() {
    let mut checked = 0;
    for case in cases() {
        let a = &case.args;
        if a[0] != "view"
            || !matches!(a[1].as_str(), "-P" | "--fetch-pairs")
            || !a[2].ends_with(".bam")
            || a.len() < 4
        {
            continue;
        }
        let expected = std::fs::read(&case.expected).expect("golden");
        let (reader, targets, set) = indexed_with_regions(&a[2], &a[3..]);
        let header = reader.header().clone();
        drop(reader);
        // Through the facade, as `samtools view -P` reads BAM and CRAM alike.
        let path = corpus().join(&a[2]);
        let mut reader =
            hts::alignment::Reader::open(path.to_str().unwrap(), &hts::Options::new()).unwrap();
        let mut selection = Selection::default();
        let second = first_pass(&mut reader, &header, &targets, set, &mut selection).unwrap();
        let mut q = second_pass(&mut reader, second).unwrap();
        let mut out = Vec::new();
        while let Some(mut r) = q.next_record().unwrap() {
            if selection.select(&mut r, &header) {
                bam::write_sam(&r, &header, &mut out).unwrap();
            }
        }
        assert!(out == expected, "{}: output differs from samtools", case.id);
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} -P cases found");
}
