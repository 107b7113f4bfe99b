//! `Reader::query_set` is htslib's multi-region iterator (`samtools view -M`) for BAM and CRAM
//! alike: the goldens of `fixtures/conformance-extra` (BAM) and `fixtures/cram` (CRAM), local
//! and over HTTP.

mod common;

use common::{cases, fixtures, golden, region_set, view_set};
use hts::alignment::Reader;
use hts::Options;
use testkit::Server;

/// `view -M FILE REGION...` cases of the extra corpus: file (under `fixtures/`), regions, golden.
fn bam_cases() -> Vec<(String, Vec<String>, String)> {
    cases(&fixtures("conformance-extra").join("cases.tsv"))
        .into_iter()
        .filter(|c| c[3] == "0")
        .filter_map(|c| {
            let rest = c[1].strip_prefix("view -M ")?;
            let mut words = rest.split(' ');
            let file = words.next()?.strip_prefix("../")?.to_string();
            let regions: Vec<String> = words.map(str::to_string).collect();
            if file.starts_with('-') || regions.iter().any(|r| r.starts_with('-')) {
                return None;
            }
            Some((file, regions, c[2].clone()))
        })
        .collect()
}

#[test]
fn bam_multi_region_queries_match_samtools() {
    let cases = bam_cases();
    assert!(cases.len() >= 4, "{cases:?}");
    let server = Server::start(&fixtures("")).unwrap();
    for (file, regions, expected) in &cases {
        let want = golden(&fixtures("conformance-extra").join(expected));
        let local = fixtures("").join(file);
        for location in [local.to_str().unwrap().to_string(), server.url(file)] {
            let mut reader = Reader::open(&location, &Options::new().no_cache(true)).unwrap();
            let given: Vec<&str> = regions.iter().map(String::as_str).collect();
            let set = region_set(reader.header(), &given);
            assert_eq!(view_set(&mut reader, &set), want, "{location} {regions:?}");
        }
    }
}

#[test]
fn cram_multi_region_queries_match_samtools() {
    let dir = fixtures("cram");
    let server = Server::start(&dir).unwrap();
    let mut n = 0;
    for c in cases(&dir.join("cases.tsv")) {
        let words: Vec<&str> = c[2].split(' ').collect();
        let Some(at) = words.iter().position(|w| w.ends_with(".cram")) else {
            continue;
        };
        let options = &words[..at];
        let multi = options.contains(&"-M") || options.contains(&"--use-index");
        let known = options
            .iter()
            .all(|o| ["-M", "--use-index", "-T", "REF"].contains(o));
        if !multi || !known {
            continue;
        }
        let reference = options.contains(&"-T").then(|| dir.join("ref.fa"));
        let want = golden(&dir.join(format!("expected/{}.out.gz", c[1])));
        let file = words[at];
        let local = dir.join(file);
        for location in [local.to_str().unwrap().to_string(), server.url(file)] {
            let mut opts = Options::new().no_cache(true);
            if let Some(r) = &reference {
                opts = opts.reference(r.to_str().unwrap());
            }
            let mut reader = Reader::open(&location, &opts).unwrap();
            let set = region_set(reader.header(), &words[at + 1..]);
            assert_eq!(view_set(&mut reader, &set), want, "{location} {:?}", c[2]);
        }
        n += 1;
    }
    assert!(n >= 5, "{n} cases");
}
