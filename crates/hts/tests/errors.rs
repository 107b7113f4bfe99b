//! Errors name the file they are about (and the byte, where the format tells it); none panics.

use hts::{alignment, variant, Options};
use region::{Position, RefId, Region};

fn fixture(path: &str) -> String {
    let p = testkit::workspace_root().join("fixtures").join(path);
    p.to_str().unwrap().to_string()
}

fn err<T>(r: hts::Result<T>) -> hts::Error {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

#[test]
fn a_missing_file_is_named() {
    let e = err(alignment::Reader::open(
        "/nonexistent/x.bam",
        &Options::new(),
    ));
    assert!(e.to_string().contains("/nonexistent/x.bam"), "{e}");
    let e = err(variant::Reader::open(
        "/nonexistent/x.vcf.gz",
        &Options::new(),
    ));
    assert!(e.to_string().contains("/nonexistent/x.vcf.gz"), "{e}");
}

#[test]
fn a_cram_query_without_an_index_names_the_file_and_the_index_looked_for() {
    // No `.crai` beside this one.
    let file = fixture("cram/aligned-3.0-noref.cram");
    let mut reader = alignment::Reader::open(&file, &Options::new()).unwrap();
    let region = Region::Ref {
        tid: RefId::new(0),
        beg: Position::new(0),
        end: Position::new(100),
    };
    let e = err(reader.query(&[region]));
    let shown = e.to_string();
    assert!(shown.contains(&file), "{shown}");
    assert!(shown.contains("no index found"), "{shown}");
    assert_eq!(e.file(), Some(file.as_str()));
}

#[test]
fn a_damaged_cram_names_the_file() {
    let tmp = std::env::temp_dir().join(format!("hts-damaged-{}.cram", std::process::id()));
    let mut bytes = std::fs::read(fixture("cram/aligned-3.0-embed.cram")).unwrap();
    // The file definition kept, the header container cut short.
    bytes.truncate(40);
    std::fs::write(&tmp, &bytes).unwrap();
    let name = tmp.to_str().unwrap();
    let e = err(alignment::Reader::open(name, &Options::new()));
    assert!(e.to_string().contains(name), "{e}");
    let _ = std::fs::remove_file(&tmp);
}

#[test]
fn a_file_that_is_neither_bam_nor_cram_is_refused_by_name() {
    let file = fixture("tabix/small.vcf.gz");
    let e = err(alignment::Reader::open(&file, &Options::new()));
    assert!(e.to_string().contains(&file), "{e}");
}
