//! The persistent cache of remote headers and index prefixes, end to end: a second run reads
//! them from disk and shows them current with requests it makes anyway; a changed object is
//! never read with its old index; concurrent runs, damaged entries; and partial index reads
//! that fetch only what a query needs, with the output of a whole read.

mod site;

use std::fs;
use std::time::{Duration, SystemTime};

use site::*;
use testkit::LogEntry;

#[test]
fn a_second_run_takes_header_and_index_from_the_cache() {
    let (site, cache, expected) = bai_site();
    let url = site.url("x.bam");
    let args = query_args(&url);

    let (cold, _) = view(&args, &cache, &[]);
    assert!(cold == expected, "cold output differs");
    let log = site.server.log();
    assert!(fetched_header(&log));
    let cold_spans = span_ends(&log, "x.bam");
    site.server.reset();

    let (warm, err) = view(&args, &cache, &[]);
    assert!(warm == expected, "warm output differs: {err}");
    let log = site.server.log();
    assert!(
        !fetched_header(&log),
        "the header came from the cache: {log:#?}"
    );
    // The index: one byte, to show it current; the BAM: its EOF marker (the same proof) and
    // the spans.
    // (Other names the index may have are asked for too, and are absent.)
    let index: Vec<_> = requests_for(&log, "x.bam.bai");
    assert!(!index.is_empty());
    assert!(
        index.iter().all(|e| e.range.as_deref() == Some("bytes=-1")),
        "{index:#?}"
    );
    assert!(requests_for(&log, ".bam")
        .iter()
        .any(|e| e.range.as_deref() == Some("bytes=-28")));
    // The same plan: a cached index gives the same span ends (a cold span may start later,
    // where the header's request left off).
    assert_eq!(span_ends(&log, "x.bam"), cold_spans);
}

/// Runs the query cold to fill `cache`, lets `change` alter the served files, runs it again,
/// and checks the second run read the file anew (no stale header or index) with the right
/// output.
fn changed_object_is_read_anew(change: impl Fn(&Site)) {
    let (site, cache, _) = bai_site();
    let url = site.url("x.bam");
    let args = query_args(&url);
    view(&args, &cache, &[]);
    change(&site);
    site.server.reset();
    let (got, err) = view(&args, &cache, &[]);
    assert!(err.contains("cached copy dropped"), "{err}");
    assert!(err.contains("without the cache"), "{err}");
    assert!(
        got == local(&REGIONS, &site.dir.join("x.bam")),
        "output is not the changed file's"
    );
    assert!(
        fetched_header(&site.server.log()),
        "the header was read anew"
    );
}

#[test]
fn a_new_size_drops_the_entry() {
    changed_object_is_read_anew(|site| {
        site.replace("rand_small.bam", "x.bam");
        site.replace("rand_small.bam.bai", "x.bam.bai");
    });
}

#[test]
fn a_new_etag_with_the_same_size_and_last_modified_drops_the_entry() {
    changed_object_is_read_anew(|site| {
        // The same second (Last-Modified unchanged), another nanosecond (a new ETag).
        let at = fs::metadata(site.dir.join("x.bam"))
            .unwrap()
            .modified()
            .unwrap();
        let secs = at.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
        let same_second = SystemTime::UNIX_EPOCH + Duration::new(secs, 123_456_789);
        let nanos = at
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let other = if nanos == 123_456_789 {
            same_second + Duration::from_nanos(1)
        } else {
            same_second
        };
        site.touch("x.bam", other);
    });
}

#[test]
fn a_new_last_modified_with_the_same_size_drops_the_entry() {
    changed_object_is_read_anew(|site| {
        site.touch("x.bam", SystemTime::now() + Duration::from_secs(3600));
    });
}

#[test]
fn two_processes_filling_the_cache_at_once_leave_valid_entries() {
    let site = Site::new(&[("rand.bam", "x.bam"), ("rand.bam.bai", "x.bam.bai")]);
    let cache = scratch("cache");
    let url = site.url("x.bam");
    let expected = local(&REGIONS, &site.dir.join("x.bam"));
    let children: Vec<_> = (0..2)
        .map(|_| {
            testkit::command(hts())
                .env("XDG_CACHE_HOME", &cache)
                .arg("view")
                .arg(&url)
                .args(REGIONS)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert!(out.stdout == expected);
    }
    let entries: Vec<_> = fs::read_dir(cache.join("hts"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "entry"))
        .collect();
    assert_eq!(entries.len(), 2, "one entry each for the BAM and its index");
    site.server.reset();
    let mut args = vec![url.as_str()];
    args.extend(REGIONS);
    let (warm, err) = view(&args, &cache, &[]);
    assert!(warm == expected);
    assert!(!err.contains("[W::hts_cache]"), "{err}");
    assert!(!fetched_header(&site.server.log()));
}

#[test]
fn a_damaged_entry_is_dropped_with_a_warning() {
    let site = Site::new(&[("rand.bam", "x.bam"), ("rand.bam.bai", "x.bam.bai")]);
    let cache = scratch("cache");
    let url = site.url("x.bam");
    let mut args = vec![url.as_str()];
    args.extend(REGIONS);
    let (expected, _) = view(&args, &cache, &[]);
    for entry in fs::read_dir(cache.join("hts")).unwrap().flatten() {
        if entry.path().extension().is_some_and(|x| x == "entry") {
            let mut bytes = fs::read(entry.path()).unwrap();
            let mid = bytes.len() / 2;
            bytes[mid] ^= 0x5a;
            fs::write(entry.path(), &bytes).unwrap();
        }
    }
    site.server.reset();
    let (got, err) = view(&args, &cache, &[]);
    assert!(got == expected);
    assert!(err.contains("[W::hts_cache]"), "no warning: {err}");
    assert!(
        fetched_header(&site.server.log()),
        "a damaged entry is not trusted"
    );
}

/// The index bytes the server sent (the body lengths of its answers).
fn index_bytes(log: &[LogEntry]) -> u64 {
    requests_for(log, ".bai")
        .iter()
        .map(|e| e.content_length)
        .sum()
}

#[test]
fn partial_index_reads_fetch_what_the_query_needs() {
    // 5000 references; a first request of 4 KiB makes this 67 KB index behave as a large one.
    let site = Site::new(&[("manyrefs.bam", "m.bam"), ("manyrefs.bam.bai", "m.bam.bai")]);
    let size = fs::metadata(site.dir.join("m.bam.bai")).unwrap().len();
    let url = site.url("m.bam");
    let knob = [("HTS_INDEX_FIRST_PIECE", "4096")];
    let header = view(&["-H", "--no-PG", &url], &scratch("c"), &[]).0;
    let names: Vec<String> = String::from_utf8_lossy(&header)
        .lines()
        .filter_map(|l| l.strip_prefix("@SQ\tSN:"))
        .map(|l| l.split('\t').next().unwrap_or("").to_string())
        .collect();
    assert_eq!(names.len(), 5000);
    let cases: [(&str, Vec<String>); 4] = [
        ("the first reference", vec![names[0].clone()]),
        ("the last reference", vec![names[4999].clone()]),
        ("unplaced reads", vec!["*".to_string()]),
        (
            "a reference with no data",
            vec![format!("{{{}}}:1-10", names[2500])],
        ),
    ];
    for (what, regions) in cases {
        site.server.reset();
        let regions: Vec<&str> = regions.iter().map(String::as_str).collect();
        let mut args = vec!["--no-cache", url.as_str()];
        args.extend(&regions);
        let (got, _) = view(&args, &scratch("c"), &knob);
        assert!(
            got == local(&regions, &site.dir.join("m.bam")),
            "{what}: output differs from the local query"
        );
        let fetched = index_bytes(&site.server.log());
        match what {
            "the first reference" => assert!(fetched < size / 4, "{what}: {fetched} of {size}"),
            "a reference with no data" => {
                assert!(fetched < size, "{what}: {fetched} of {size}")
            }
            _ => assert!(fetched >= size, "{what}: {fetched} of {size}"),
        }
        println!("{what}: {fetched} of {size} index bytes");
    }
}

#[test]
fn the_rest_of_an_index_is_asked_for_before_its_first_piece_has_arrived() {
    let site = Site::new(&[("manyrefs.bam", "m.bam"), ("manyrefs.bam.bai", "m.bam.bai")]);
    let url = site.url("m.bam");
    let knob = [("HTS_INDEX_FIRST_PIECE", "4096")];
    // The first piece's body arrives slowly (0.5 s; its headers, with the size, at once);
    // the rest (the query names the last reference) must be asked for without waiting for it.
    site.server.add_rule(testkit::Rule {
        path: "/m.bam.bai".into(),
        fault: testkit::Fault::OnRange {
            start: 0,
            fault: Box::new(testkit::Fault::Trickle {
                bytes_per_sec: 8 * 1024,
            }),
        },
        times: None,
    });
    let args = ["--no-cache", url.as_str(), "ctg4999"];
    let (got, _) = view(&args, &scratch("c"), &knob);
    assert!(
        got == local(&["ctg4999"], &site.dir.join("m.bam")),
        "output differs"
    );
    assert!(!got.is_empty());
    let log = site.server.log();
    let at = |start: u64| {
        log.iter()
            .find(|e| e.path == "/m.bam.bai" && e.bounded_range().is_some_and(|(a, _)| a == start))
            .map(|e| e.arrived)
            .unwrap_or_else(|| panic!("no index request from {start}: {log:#?}"))
    };
    let waited = at(4096).duration_since(at(0));
    assert!(
        waited < Duration::from_millis(300),
        "the rest waited {waited:?}"
    );
}

#[test]
fn the_first_index_request_grows_with_the_references_a_query_names() {
    let site = Site::new(&[("manyrefs.bam", "m.bam"), ("manyrefs.bam.bai", "m.bam.bai")]);
    let url = site.url("m.bam");
    let knob = [("HTS_INDEX_FIRST_PIECE", "4096")];
    let first_request = |regions: &[&str]| {
        site.server.take_log();
        let mut args = vec!["--no-cache", url.as_str()];
        args.extend_from_slice(regions);
        let (got, _) = view(&args, &scratch("c"), &knob);
        assert!(
            got == local(regions, &site.dir.join("m.bam")),
            "{regions:?}"
        );
        let log = site.server.log();
        let first = log
            .iter()
            .filter(|e| e.path == "/m.bam.bai")
            .filter_map(|e| e.bounded_range())
            .find(|r| r.0 == 0);
        first.unwrap_or_else(|| panic!("no first index request: {log:#?}"))
    };
    assert_eq!(first_request(&["ctg0"]), (0, 4095));
    // Three references named (one twice): three pieces at once.
    let three = first_request(&["ctg0:1-100", "ctg1", "ctg2", "ctg0:200-300"]);
    assert_eq!(three, (0, 3 * 4096 - 1));
}

#[test]
fn spans_on_earlier_references_go_out_while_the_rest_of_the_index_arrives() {
    let site = Site::new(&[("rand.bam", "r.bam"), ("rand.bam.bai", "r.bam.bai")]);
    let url = site.url("r.bam");
    // A BED (whose references are not counted before the header is read): the first request
    // (1 KiB) holds chr1; the rest, which chr3 needs, arrives slowly (about 2 s).
    let knob = [("HTS_INDEX_FIRST_PIECE", "1024")];
    site.server.add_rule(testkit::Rule {
        path: "/r.bam.bai".into(),
        fault: testkit::Fault::OnRange {
            start: 1024,
            fault: Box::new(testkit::Fault::Trickle { bytes_per_sec: 500 }),
        },
        times: None,
    });
    let bed = site.dir.join("t.bed");
    fs::write(&bed, "chr1\t200000\t200100\nchr3\t1000000\t1000100\n").unwrap();
    let bed = bed.display().to_string();
    let args = ["--no-cache", "-L", bed.as_str(), url.as_str()];
    let (got, _) = view(&args, &scratch("c"), &knob);
    let (want, _) = view(
        &[
            "--no-cache",
            "-L",
            bed.as_str(),
            "-M",
            &site.dir.join("r.bam").display().to_string(),
        ],
        &scratch("none"),
        &[],
    );
    assert!(!got.is_empty() && got == want, "output differs");
    let log = site.server.log();
    let rest = log
        .iter()
        .find(|e| e.path == "/r.bam.bai" && e.bounded_range().is_some_and(|r| r.0 == 1024))
        .unwrap_or_else(|| panic!("no request for the rest of the index: {log:#?}"));
    // The BAM's requests past its header's: the spans; chr1's must not wait for the rest.
    let spans: Vec<_> = log
        .iter()
        .filter(|e| e.path == "/r.bam" && e.bounded_range().is_some_and(|r| r.0 >= 16 * 1024))
        .collect();
    let first = spans.first().unwrap_or_else(|| panic!("no span: {log:#?}"));
    let waited = first.arrived.saturating_duration_since(rest.arrived);
    assert!(
        waited < Duration::from_millis(700),
        "the first span waited {waited:?} for the index: {spans:#?}"
    );
    assert!(spans.len() >= 2, "one span for each reference: {spans:#?}");
    // The query's own plan, made from the whole index, found chr1's span on its way.
    let mut starts: Vec<u64> = spans
        .iter()
        .filter_map(|e| e.bounded_range())
        .map(|r| r.0)
        .collect();
    starts.sort_unstable();
    let n = starts.len();
    starts.dedup();
    assert_eq!(starts.len(), n, "a span asked for twice: {spans:#?}");
}

/// Only the header cached (by `view -H`), then the file replaced: `flagstat` and `idxstats`
/// (here without an index, so by reading every record) find the entry stale before they print
/// and read the file again without the cache.
#[test]
fn flagstat_and_idxstats_read_again_when_the_cached_header_is_stale() {
    let site = Site::new(&[("rand.bam", "x.bam")]);
    let url = site.url("x.bam");
    let local = site.dir.join("x.bam").display().to_string();
    for command in ["flagstat", "idxstats"] {
        let cache = scratch("cache");
        site.replace("rand.bam", "x.bam");
        view(&["-H", url.as_str()], &cache, &[]);
        site.replace("ce1000.bam", "x.bam");
        let (want, _) = run(command, &[local.as_str()], &scratch("none"), &[]);
        let (got, err) = run(command, &[url.as_str()], &cache, &[]);
        assert!(got == want, "{command}: output differs: {err}");
        assert!(err.contains("without the cache"), "{command}: {err}");
    }
}
