//! `hts::variant::Reader` prints what tabix 1.16 prints for a region (the goldens of
//! `fixtures/tabix`), local and over HTTP, for VCF, BED, GFF and SAM presets alike.

mod common;

use common::{cases, fixtures, golden};
use hts::variant::Reader;
use hts::Options;
use region::{Position, Region};
use testkit::Server;

/// The cases that are `FILE REGION...` and exit 0: file, regions, golden name.
fn plain_cases() -> Vec<(String, Vec<String>, String)> {
    let dir = fixtures("tabix");
    cases(&dir.join("cases.tsv"))
        .into_iter()
        .filter(|c| c.len() == 3 && !c[2].split(' ').any(|w| w.starts_with('-')))
        .filter(|c| golden(&dir.join(format!("golden/{}.rc", c[0]))).trim() == "0")
        .map(|c| {
            let regions = c[2].split(' ').map(str::to_string).collect();
            (c[1].clone(), regions, c[0].clone())
        })
        .collect()
}

fn lines(reader: &mut Reader, regions: &[String]) -> String {
    let mut out = Vec::new();
    for region in regions {
        // A region tabix refuses prints nothing (its complaint goes to stderr).
        let Ok(mut query) = reader.query_str(region) else {
            continue;
        };
        while let Some(line) = query.next_line().unwrap() {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    String::from_utf8(out).unwrap()
}

fn check(location: impl Fn(&str) -> String) {
    let dir = fixtures("tabix");
    let cases = plain_cases();
    assert!(cases.len() > 40, "{} cases", cases.len());
    for (file, regions, name) in &cases {
        let mut reader = Reader::open(&location(file), &Options::new()).unwrap();
        let want = golden(&dir.join(format!("golden/{name}.out")));
        assert_eq!(lines(&mut reader, regions), want, "{name}");
    }
}

#[test]
fn local_tabix_queries_match_tabix() {
    let dir = fixtures("tabix");
    check(|f| dir.join(f).to_str().unwrap().to_string());
}

#[test]
fn remote_tabix_queries_match_tabix() {
    let server = Server::start(&fixtures("tabix")).unwrap();
    check(|f| server.url(f));
}

/// A region of the `region` crate's types finds what the same region as a string finds.
#[test]
fn region_types_and_strings_agree() {
    let path = fixtures("tabix").join("small.vcf.gz");
    let mut reader = Reader::open(path.to_str().unwrap(), &Options::new()).unwrap();
    let tid = reader.tid("chr1").unwrap();
    let region = Region::Ref {
        tid,
        beg: Position::new(99),
        end: Position::new(250),
    };
    let mut by_type = Vec::new();
    let mut query = reader.query(&region);
    while let Some(line) = query.next_line().unwrap() {
        by_type.push(String::from_utf8_lossy(line).into_owned());
    }
    let by_string = lines(&mut reader, &["chr1:100-250".to_string()]);
    assert!(!by_type.is_empty());
    assert_eq!(by_type.join("\n") + "\n", by_string);
    assert_eq!(reader.tid("chrX"), None);
}
