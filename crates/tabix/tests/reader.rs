//! The reader from Rust: lines of a region as an iterator, header, names, and bad indexes
//! (`fixtures/tabix`, made by tabix 1.16).

use std::path::PathBuf;

use hfile::OpenOptions;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/tabix")
        .join(name)
        .display()
        .to_string()
}

fn golden(id: &str) -> Vec<u8> {
    std::fs::read(fixture(&format!("golden/{id}.out"))).expect("golden")
}

fn open(name: &str) -> tabix::Reader {
    tabix::Reader::open(&fixture(name), None, &OpenOptions::default()).expect("open")
}

#[test]
fn lines_of_a_region_come_as_an_iterator() {
    let mut r = open("many.vcf.gz");
    let mut text = Vec::new();
    for line in r.query("chr1:10000-10300").expect("query") {
        text.extend(line.expect("line"));
        text.push(b'\n');
    }
    assert_eq!(text, golden("many_small"));
    assert!(!text.is_empty());
    assert_eq!(r.names(), ["chr1", "chr2", "chr10"]);
}

#[test]
fn header_lines_are_the_leading_comment_lines() {
    let mut r = open("small.sam.gz");
    let text: Vec<u8> = r
        .header()
        .expect("header")
        .into_iter()
        .flat_map(|mut l| {
            l.push(b'\n');
            l
        })
        .collect();
    assert_eq!(text, golden("sam_header"));
}

#[test]
fn a_corrupt_index_is_one_error_naming_it() {
    let dir = std::env::temp_dir().join(format!("hts-tabix-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let data = dir.join("x.vcf.gz");
    std::fs::copy(fixture("small.vcf.gz"), &data).expect("copy");
    let tbi = std::fs::read(fixture("small.vcf.gz.tbi")).expect("tbi");
    // Cut inside the BGZF block: the index's compression layer is damaged.
    std::fs::write(dir.join("x.vcf.gz.tbi"), &tbi[..tbi.len() / 2]).expect("write");
    let e = tabix::Reader::open(&data.display().to_string(), None, &OpenOptions::default())
        .map(|_| ())
        .expect_err("a cut index must not load");
    let msg = e.to_string();
    assert!(msg.contains("x.vcf.gz.tbi"), "{msg}");
    // No index under either name tabix tries.
    let missing = tabix::Reader::open(&fixture("nosuch.vcf.gz"), None, &OpenOptions::default());
    assert!(
        matches!(missing, Err(tabix::Error::NoIndex { .. })),
        "{missing:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn lines(q: tabix::Query<'_>) -> Vec<u8> {
    let mut text = Vec::new();
    for line in q {
        text.extend(line.expect("line"));
        text.push(b'\n');
    }
    text
}

#[test]
fn the_whole_file_region_and_region_errors() {
    let mut r = open("small.vcf.gz");
    assert_eq!(lines(r.query(".").expect("query")), golden("whole_file"));
    assert!(lines(r.query("*").expect("query")).is_empty());
    match r.query("chr1:x-9") {
        Err(tabix::Error::Region { why, .. }) => {
            assert_eq!(why, "Unexpected string \"x-9\" after region")
        }
        other => panic!("not a region error: {:?}", other.map(|_| ())),
    }
}

#[test]
fn regions_and_targets_files_filter_as_tabix_does() {
    let opts = OpenOptions::default();
    let regions = tabix::RegionList::read(&fixture("regions/pos.vcf"), &opts).expect("regions");
    let targets = tabix::RegionList::read(&fixture("regions/r.tsv"), &opts).expect("targets");
    let mut r = open("many.vcf.gz");
    let mut text = Vec::new();
    for region in regions.region_strings() {
        let mut q = r.query(&region).expect("query");
        while let Some((line, beg, end)) = q.next_record().expect("line") {
            let name = line.split(|&b| b == b'\t').next().unwrap_or_default();
            if targets.overlaps(name, beg, end - 1) {
                text.extend_from_slice(line);
                text.push(b'\n');
            }
        }
    }
    assert!(!text.is_empty());
    assert_eq!(text, golden("targets_and_regions"));
    let gz = tabix::RegionList::read(&fixture("regions/gzipped.txt.gz"), &opts).expect("gz");
    assert_eq!(gz.region_strings(), ["chr1:100-200"]);
}

fn region_text(r: &mut tabix::Reader, region: &str) -> Vec<u8> {
    let mut text = Vec::new();
    for line in r.query(region).expect("query") {
        text.extend(line.expect("line"));
        text.push(b'\n');
    }
    text
}

fn open_keep(name: &str, regions: &[&str]) -> tabix::Reader {
    let keep = tabix::Keep::Regions(regions.iter().map(|s| s.to_string()).collect());
    tabix::Reader::open_keep(&fixture(name), None, &OpenOptions::default(), keep).expect("open")
}

#[test]
fn a_reader_for_regions_keeps_only_the_sequences_they_name() {
    let whole = region_text(&mut open("many.vcf.gz"), "chr2");
    assert!(!whole.is_empty());
    let mut kept = open_keep("many.vcf.gz", &["chr2", "nonsense:1-"]);
    assert_eq!(region_text(&mut kept, "chr2"), whole);
    assert_eq!(
        kept.names(),
        ["chr1", "chr2", "chr10"],
        "the names come whole"
    );
    // chr1 was not kept: the reader for chr2 gives no lines for it.
    assert!(region_text(&mut kept, "chr1:10000-10300").is_empty());
    // `.` reads every sequence, so it keeps the whole index.
    let mut all = open_keep("many.vcf.gz", &["chr2", "."]);
    assert_eq!(
        region_text(&mut all, "chr1:10000-10300"),
        golden("many_small")
    );
}
