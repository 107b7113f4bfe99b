//! quickcheck and idxstats on remote files, over a real HTTP server on 127.0.0.1: what they
//! fetch. quickcheck reads the header and the EOF marker (two small bounded requests);
//! idxstats reads the header and the index, never a record.

use bam::{OpenOptions, Reader};
use samtools::idxstats::IdxStats;
use samtools::quickcheck;
use testkit::Server;

fn server() -> Server {
    Server::start(&testkit::corpus_dir()).expect("test server")
}

/// Options for opening a served file: no persistent cache, because servers on reused ports of
/// other test processes would meet this one's entries (and tests never fill the user's cache).
fn remote_options() -> OpenOptions {
    OpenOptions {
        no_cache: true,
        ..OpenOptions::default()
    }
}

#[test]
fn quickcheck_fetches_header_and_eof_marker_only() {
    let s = server();
    let url = s.url("data/rand.bam");
    let size = std::fs::metadata(testkit::corpus_dir().join("data/rand.bam"))
        .unwrap()
        .len();
    let report = quickcheck::check(&url, &Default::default(), false);
    assert_eq!(report.state, 0, "{:?}", report.problems);
    let gets: Vec<_> = s.log().into_iter().filter(|e| e.method == "GET").collect();
    assert_eq!(gets.len(), 2, "{gets:?}");
    let header = gets
        .iter()
        .find_map(|e| e.bounded_range().filter(|r| r.0 == 0));
    let header = header.expect("a bounded request for the header");
    assert!(header.1 < 64 * 1024, "header request {header:?}");
    let tail = format!("bytes={}-{}", size - 28, size - 1);
    assert!(
        gets.iter()
            .any(|e| matches!(e.range.as_deref(), Some("bytes=-28"))
                || e.range.as_deref() == Some(tail.as_str())),
        "a 28-byte request for the EOF marker: {gets:?}"
    );
    assert!(s.log().iter().all(|e| e.method == "GET"), "no HEAD");
}

#[test]
fn quickcheck_reports_remote_problems() {
    let s = server();
    let missing = quickcheck::check(&s.url("data/nope.bam"), &Default::default(), false);
    assert_eq!(missing.state, quickcheck::FAIL_OPEN);
    let no_eof = quickcheck::check(&s.url("malformed/no_eof.bam"), &Default::default(), false);
    assert_eq!(no_eof.state, quickcheck::NO_EOF_BLOCK);
}

#[test]
fn idxstats_reads_no_record() {
    let s = server();
    let url = s.url("data/rand.bam");
    let options = OpenOptions {
        index: bam::IndexHint::Auto,
        ..remote_options()
    };
    let mut reader = Reader::open(&url, &options).unwrap();
    reader.load_index(None).unwrap();
    let remote = IdxStats::from_index(&reader.confirm().unwrap()).unwrap();
    let local_path = testkit::corpus_dir().join("data/rand.bam");
    let mut local = Reader::open(local_path.to_str().unwrap(), &OpenOptions::default()).unwrap();
    assert_eq!(remote, IdxStats::by_reading(&mut local).unwrap());
    // The header, and the EOF marker htslib checks when it reads a header; no record.
    let bam_gets: Vec<_> = s
        .log()
        .into_iter()
        .filter(|e| e.method == "GET" && e.path.ends_with("rand.bam"))
        .collect();
    assert!(bam_gets.len() <= 2, "{bam_gets:?}");
    for e in &bam_gets {
        assert!(e.is_header_or_eof(), "{e:?}");
    }
}

#[test]
fn multi_region_bed_is_one_plan_over_http() {
    use bam::Regions;
    use region::RegionSet;
    use samtools::filter::bed::Targets;

    let bed = testkit::workspace_root().join("fixtures/conformance-extra/lists/many.bed");
    let targets = Targets::read(bed.to_str().unwrap()).unwrap();
    let records = |location: &str| {
        let mut reader = Reader::open(location, &remote_options()).unwrap();
        reader.load_index(None).unwrap();
        let mut unified = targets.clone();
        unified.unify();
        let set = RegionSet::resolve(&unified.region_list(false), reader.header(), |_| {});
        let header = reader.header().clone();
        let mut q = reader.query(Regions::Overlapping(set)).unwrap();
        let mut out = Vec::new();
        while let Some(r) = q.next_record().unwrap() {
            bam::write_sam(&r, &header, &mut out).unwrap();
        }
        out
    };
    let local = records(
        testkit::corpus_dir()
            .join("data/rand.bam")
            .to_str()
            .unwrap(),
    );
    let s = server();
    let remote = records(&s.url("data/rand.bam"));
    assert!(!local.is_empty());
    assert!(remote == local, "remote -M output differs from local");
    let bam_gets = s
        .log()
        .into_iter()
        .filter(|e| e.method == "GET" && e.path.ends_with("rand.bam"))
        .count();
    // 300 BED lines: a handful of planned spans (plus the header), not a query per line.
    assert!(bam_gets <= 12, "{bam_gets} requests for 300 regions");
}
