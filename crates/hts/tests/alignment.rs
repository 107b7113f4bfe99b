//! `hts::alignment::Reader` answers what `samtools view FILE REGION...` prints, for BAM and
//! CRAM, local and over HTTP: the goldens of `fixtures/conformance` (samtools 1.16.1) and of
//! `fixtures/cram`.

mod common;

use std::path::Path;

use common::{cases, fixtures, golden, regions, view};
use hts::alignment::Reader;
use hts::Options;
use testkit::Server;

/// The conformance cases that are a BAM and regions alone (no option), exiting 0: file,
/// regions, golden.
fn bam_cases() -> Vec<(String, Vec<String>, String)> {
    cases(&fixtures("conformance").join("cases.tsv"))
        .into_iter()
        .filter(|c| c.len() >= 4 && c[3] == "0")
        .filter_map(|c| {
            let words: Vec<String> = c[1].split(' ').map(str::to_string).collect();
            if words.iter().any(|w| w.starts_with('-')) || !words[0].ends_with(".bam") {
                return None;
            }
            Some((words[0].clone(), words[1..].to_vec(), c[2].clone()))
        })
        .collect()
}

/// Every golden of `cases` read through `open` (given the file's path under the folder).
fn check_bam(cases: &[(String, Vec<String>, String)], open: impl Fn(&str) -> Reader) {
    let dir = fixtures("conformance");
    for (file, given, expected) in cases {
        let mut reader = open(file);
        assert!(!reader.is_cram(), "{file}");
        let given: Vec<&str> = given.iter().map(String::as_str).collect();
        let regions = regions(reader.header(), &given);
        let asked = (!given.is_empty()).then_some(regions.as_slice());
        let got = view(&mut reader, asked);
        assert_eq!(got, golden(&dir.join(expected)), "{file} {given:?}");
    }
}

#[test]
fn local_bam_queries_match_samtools() {
    let cases = bam_cases();
    assert!(cases.len() > 30, "{} cases", cases.len());
    let dir = fixtures("conformance");
    check_bam(&cases, |file| {
        let path = dir.join(file);
        Reader::open(path.to_str().unwrap(), &Options::new()).unwrap()
    });
}

#[test]
fn remote_bam_queries_match_samtools() {
    let server = Server::start(&fixtures("conformance")).unwrap();
    // Every reference of the region cases on one file each, over HTTP.
    let cases: Vec<_> = bam_cases()
        .into_iter()
        .filter(|(_, given, _)| !given.is_empty())
        .collect();
    let options = Options::new().no_cache(true);
    check_bam(&cases, |file| {
        Reader::open(&server.url(file), &options).unwrap()
    });
}

/// The CRAM cases that are `[-@ N] [-T REF] FILE REGION...`: threads, reference, file,
/// regions, golden.
struct CramCase {
    threads: usize,
    /// The reference's name in the folder.
    reference: Option<String>,
    file: String,
    regions: Vec<String>,
    golden: String,
}

fn cram_cases() -> Vec<CramCase> {
    let mut out = Vec::new();
    'case: for c in cases(&fixtures("cram").join("cases.tsv")) {
        let mut words = c[2].split(' ').peekable();
        let (mut threads, mut reference) = (0, None);
        while let Some(w) = words.next_if(|w| w.starts_with('-')) {
            match w {
                "-@" => threads = words.next().unwrap().parse().unwrap(),
                "-T" | "--reference" => {
                    let name = words.next().unwrap();
                    reference = Some(if name == "REF" { "ref.fa" } else { name }.to_string());
                }
                _ => continue 'case,
            }
        }
        let Some(file) = words.next() else { continue };
        let regions: Vec<String> = words.map(str::to_string).collect();
        // The rand goldens hold the first reads only; regions need a `.crai`.
        if c[0].starts_with("rand") || regions.is_empty() {
            continue;
        }
        out.push(CramCase {
            threads,
            reference,
            file: file.to_string(),
            regions,
            golden: format!("expected/{}.out.gz", c[1]),
        });
    }
    out
}

/// Every CRAM region case, each file and reference at `location(name)`.
fn check_cram(location: impl Fn(&str) -> String) {
    let dir = fixtures("cram");
    let cases = cram_cases();
    assert!(cases.len() >= 8, "{} cases", cases.len());
    for case in &cases {
        let mut options = Options::new().threads(case.threads).no_cache(true);
        if let Some(name) = &case.reference {
            options = options.reference(location(name));
        }
        let mut reader = Reader::open(&location(&case.file), &options).unwrap();
        assert!(reader.is_cram(), "{}", case.file);
        let given: Vec<&str> = case.regions.iter().map(String::as_str).collect();
        let regions = regions(reader.header(), &given);
        let got = view(&mut reader, Some(&regions));
        let want = golden(&dir.join(&case.golden));
        assert_eq!(got, want, "{} {:?}", case.file, case.regions);
    }
}

#[test]
fn local_cram_queries_match_samtools() {
    let dir = fixtures("cram");
    check_cram(|f| dir.join(f).to_str().unwrap().to_string());
}

#[test]
fn remote_cram_queries_with_a_remote_reference_match_samtools() {
    let server = Server::start(&fixtures("cram")).unwrap();
    check_cram(|f| server.url(f));
}

#[test]
fn a_whole_cram_reads_as_samtools_prints_it() {
    let dir = fixtures("cram");
    let path = dir.join("aligned-3.0.cram");
    let options = Options::new().reference(dir.join("ref.fa").to_str().unwrap());
    let mut reader = Reader::open(path.to_str().unwrap(), &options).unwrap();
    let got = view(&mut reader, None);
    assert_eq!(got, golden(&dir.join("expected/aligned.out.gz")));
}

/// A CRAM named `.bam` is read as CRAM, and a BAM named `.cram` as BAM: the first bytes
/// decide, as htslib's `hts_detect_format`.
#[test]
fn the_format_is_read_from_the_content() {
    let tmp = std::env::temp_dir().join(format!("hts-sniff-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let cram = fixtures("cram").join("aligned-3.0-embed.cram");
    let bam = fixtures("conformance").join("data/ce1000.bam");
    let (as_bam, as_cram) = (tmp.join("x.bam"), tmp.join("y.cram"));
    std::fs::copy(&cram, &as_bam).unwrap();
    std::fs::copy(&bam, &as_cram).unwrap();
    let open = |p: &Path| Reader::open(p.to_str().unwrap(), &Options::new()).unwrap();
    assert!(open(&as_bam).is_cram());
    assert!(!open(&as_cram).is_cram());
    // Over HTTP as well: the suffix says nothing.
    let server = Server::start(&tmp).unwrap();
    let remote = Reader::open(&server.url("x.bam"), &Options::new()).unwrap();
    assert!(remote.is_cram());
    let mut remote = Reader::open(&server.url("y.cram"), &Options::new()).unwrap();
    assert!(!remote.is_cram());
    let all = view(&mut remote, None);
    let want = golden(&fixtures("conformance").join("expected/ce1000_all.out"));
    assert_eq!(all, want);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// No URL costs a request for its magic: one not named `.cram` is opened as BAM straight away
/// (the BAM reader's first read tells CRAM from BAM), one named `.cram` as CRAM (the CRAM
/// reader's first read tells BAM from CRAM).
#[test]
fn a_remote_bam_is_opened_without_a_request_for_its_magic() {
    let server = Server::start(&fixtures("")).unwrap();
    let magic = |log: &[testkit::LogEntry]| {
        log.iter()
            .filter(|e| e.range.as_deref() == Some("bytes=0-3"))
            .count()
    };
    let options = Options::new().no_cache(true);
    let bam = Reader::open(&server.url("conformance/data/ce1000.bam"), &options).unwrap();
    assert!(!bam.is_cram());
    assert_eq!(magic(&server.take_log()), 0);
    let cram = Reader::open(&server.url("cram/aligned-3.0-embed.cram"), &options).unwrap();
    assert!(cram.is_cram());
    assert_eq!(magic(&server.take_log()), 0);
}

/// One reader answers one query after another (its index read once), with threads too.
#[test]
fn a_reader_answers_several_queries() {
    let dir = fixtures("cram");
    for threads in [0, 2] {
        let options = Options::new()
            .threads(threads)
            .reference(dir.join("ref.fa").to_str().unwrap());
        let path = dir.join("aligned-3.0-slices.cram");
        let mut reader = Reader::open(path.to_str().unwrap(), &options).unwrap();
        let given = ["ref2:1000-1200", "ref1:300-400", "ref3"];
        let regions = regions(reader.header(), &given);
        let want = golden(&dir.join("expected/aligned-r1.out.gz"));
        assert_eq!(view(&mut reader, Some(&regions)), want);
        assert_eq!(view(&mut reader, Some(&regions)), want);
        let whole = golden(&dir.join("expected/aligned.out.gz"));
        assert_eq!(view(&mut reader, None), whole);
        let set = common::region_set(
            reader.header(),
            &[
                "ref1:100-200",
                "ref1:150-300",
                "ref2:5-10",
                "ref3:700-800",
                "*",
            ],
        );
        let multi = golden(&dir.join("expected/aligned-M.out.gz"));
        assert_eq!(common::view_set(&mut reader, &set), multi);
        assert_eq!(view(&mut reader, Some(&regions)), want);
    }
}

/// `-X`'s index (`Options::index`) and `FILE##idx##INDEX`, for BAM (the conformance cases with
/// `-X`) and CRAM (a `.crai` under a name nothing would derive).
#[test]
fn an_index_given_or_named_with_idx_is_used() {
    let dir = fixtures("conformance");
    let server = Server::start(&dir).unwrap();
    let mut n = 0;
    for c in cases(&dir.join("cases.tsv")) {
        let words: Vec<&str> = c[1].split(' ').collect();
        if words.first() != Some(&"-X") || c[3] != "0" || words.len() < 4 {
            continue;
        }
        let (file, index, given) = (words[1], words[2], &words[3..]);
        let want = golden(&dir.join(&c[2]));
        let local = |p: &str| dir.join(p).to_str().unwrap().to_string();
        let options = Options::new().index(local(index));
        let mut reader = Reader::open(&local(file), &options).unwrap();
        let regions = regions(reader.header(), given);
        assert_eq!(view(&mut reader, Some(&regions)), want, "{}", c[0]);
        let named = format!("{}##idx##{}", server.url(file), server.url(index));
        let mut reader = Reader::open(&named, &Options::new().no_cache(true)).unwrap();
        assert_eq!(view(&mut reader, Some(&regions)), want, "{named}");
        n += 1;
    }
    assert!(n >= 4, "{n} cases");

    let tmp = std::env::temp_dir().join(format!("hts-idx-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let cram = fixtures("cram");
    std::fs::copy(cram.join("aligned-3.0-slices.cram"), tmp.join("x.cram")).unwrap();
    std::fs::copy(
        cram.join("aligned-3.0-slices.cram.crai"),
        tmp.join("elsewhere.crai"),
    )
    .unwrap();
    let want = golden(&cram.join("expected/aligned-r1.out.gz"));
    let given = ["ref2:1000-1200", "ref1:300-400", "ref3"];
    let reference = cram.join("ref.fa");
    let options = Options::new().reference(reference.to_str().unwrap());
    let x = tmp.join("x.cram");
    let index = tmp.join("elsewhere.crai");
    let named = format!("{}##idx##{}", x.display(), index.display());
    let by_option = options.clone().index(index.to_str().unwrap());
    for (location, options) in [(named, &options), (x.display().to_string(), &by_option)] {
        let mut reader = Reader::open(&location, options).unwrap();
        assert!(reader.is_cram());
        let regions = regions(reader.header(), &given);
        assert_eq!(view(&mut reader, Some(&regions)), want, "{location}");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A BAM reader too: a whole file after a region is the whole file, from its first record.
#[test]
fn a_bam_reader_answers_several_queries() {
    let dir = fixtures("conformance");
    let server = Server::start(&dir).unwrap();
    let local = dir.join("data/ce1000.bam");
    let whole = golden(&dir.join("expected/ce1000_all.out"));
    let region = golden(&dir.join("expected/ce1000_region_start.out"));
    for location in [
        local.to_str().unwrap().to_string(),
        server.url("data/ce1000.bam"),
    ] {
        let mut reader = Reader::open(&location, &Options::new().no_cache(true)).unwrap();
        let regions = regions(reader.header(), &["CHROMOSOME_I:1-3"]);
        assert_eq!(view(&mut reader, Some(&regions)), region, "{location}");
        assert_eq!(view(&mut reader, None), whole, "{location}");
        assert_eq!(view(&mut reader, Some(&regions)), region, "{location}");
        assert_eq!(view(&mut reader, None), whole, "{location}");
    }
}
