//! Remote queries end to end, against the test server's own view of what was asked:
//! every Range inside the bytes the query needs, output identical to the local query whatever
//! the order and pace of the server's answers, and records handed on while the rest of a span
//! is still on the wire.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use testkit::{hts, Fault, Link, Rule, Server};

const FIVE: [&str; 5] = [
    "chr1:10000-10500",
    "chr1:150000-150600",
    "chr2:5000-5400",
    "chr3:20000-20100",
    "chrM:100-300",
];

/// The bytes of `rand.bam` the five regions need, by a walk of its records independent of the
/// planner (`crates/index/tests/common`, `Bam::visited` and `record_bytes`): from each region's
/// first chunk to the block holding the record that ends it.
const NEEDED: [(u64, u64); 5] = [
    (233, 25_466),
    (101_138, 151_351),
    (227_071, 252_360),
    (302_666, 327_949),
    (352_826, 378_548),
];
const SIZE: u64 = 389_340;

fn view(args: &[String]) -> (Vec<u8>, String) {
    let out = testkit::command(hts())
        .arg("view")
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "hts view {args:?} failed: {err}");
    (out.stdout, err)
}

fn five(bam: &str, index: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    args.extend(["-X".to_string(), bam.to_string(), index.to_string()]);
    args.extend(FIVE.iter().map(|s| s.to_string()));
    args
}

fn local_five() -> Vec<u8> {
    let data = testkit::corpus_dir().join("data");
    let bam = data.join("rand.bam").display().to_string();
    let bai = data.join("rand.bam.bai").display().to_string();
    view(&five(&bam, &bai, &["--no-cache"])).0
}

/// The allowed byte ranges of the BAM: the header's first request, the EOF marker, and the
/// needed ranges by the planner's documented rules: ranges less than 64 KiB apart are joined,
/// and, with `slack`, a last block read whole is taken to end 64 KiB on (a BGZF block is at
/// most 64 KiB): a CSI names few block starts, so the end of the block holding where a region
/// probably stops is not known; a BAI's linear index names one every 16 kbp.
fn allowed(slack: bool) -> Vec<(u64, u64)> {
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for &(a, b) in &NEEDED {
        let b = if slack { (b + 65_536).min(SIZE) } else { b };
        match merged.last_mut() {
            Some(last) if a.saturating_sub(last.1) < 65_536 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged.push((0, 16_384));
    merged.push((SIZE - 28, SIZE));
    merged
}

#[test]
fn every_range_lies_inside_the_bytes_the_query_needs() {
    let expected = local_five();
    let server = Server::start(&testkit::corpus_dir()).unwrap();
    for index in ["rand.bam.bai", "rand.bam.csi"] {
        server.reset();
        let bam = server.url("data/rand.bam");
        let idx = server.url(&format!("data/{index}"));
        let (got, _) = view(&five(&bam, &idx, &["--no-cache"]));
        assert!(got == expected, "{index}: remote output differs from local");
        let log = server.log();
        let allowed = allowed(index.ends_with(".csi"));
        let mut bam_bytes = 0;
        for e in &log {
            assert_eq!(e.method, "GET", "{e:?}");
            assert!(e.is_bounded(), "unbounded request {e:?}");
            if e.path.ends_with(index) {
                continue;
            }
            assert!(e.path.ends_with("rand.bam"), "unexpected request {e:?}");
            let (a, b) = match e.bounded_range() {
                Some(r) => r,
                // The suffix request for the EOF marker.
                None => (SIZE - 28, SIZE - 1),
            };
            assert!(
                allowed.iter().any(|&(s, t)| s <= a && b < t),
                "{index}: Range {:?} is outside the needed bytes {allowed:?}",
                e.range
            );
            bam_bytes += b + 1 - a;
        }
        let needed: u64 = NEEDED.iter().map(|(a, b)| b - a).sum();
        println!(
            "{index}: {} requests, {bam_bytes} BAM bytes for {needed} needed",
            log.len()
        );
    }
}

#[test]
fn out_of_order_and_slow_answers_give_the_same_output() {
    let expected = local_five();
    let server = Server::start(&testkit::corpus_dir()).unwrap();
    // The second span the reader needs answers last; the third after a pause.
    for (start, delay) in [(101_138, 1500), (227_071, 400)] {
        server.add_rule(Rule {
            path: "/data/rand.bam".into(),
            fault: Fault::OnRange {
                start,
                fault: Box::new(Fault::Delay(Duration::from_millis(delay))),
            },
            times: None,
        });
    }
    let bam = server.url("data/rand.bam");
    let bai = server.url("data/rand.bam.bai");
    for extra in [
        &["--no-cache"][..],
        &["--no-cache", "-@", "3"],
        &["--no-cache", "--fetchers", "8"],
    ] {
        server.reset();
        let (got, _) = view(&five(&bam, &bai, extra));
        assert!(got == expected, "{extra:?}: output differs");
        // The answers really came in another order than the reader used them.
        let order: Vec<u64> = server
            .log()
            .iter()
            .filter_map(|e| e.bounded_range().map(|r| r.0))
            .filter(|&a| a >= 233)
            .collect();
        assert_eq!(
            order.last(),
            Some(&101_138),
            "{extra:?}: the delayed span was not answered last: {order:?}"
        );
    }
}

#[test]
fn the_first_record_comes_before_the_span_has_arrived() {
    // 20 KB/s: the region's 25 KB of blocks take over a second; the first record must not
    // wait for them all. A whole-file read streams the same way.
    let link = Link {
        bandwidth: Some(20_000.0),
        ..Link::default()
    };
    let server = Server::start_with(&testkit::corpus_dir(), 0, link).unwrap();
    let url = server.url("data/rand.bam");
    let start = Instant::now();
    let mut child = testkit::command(hts())
        .args(["view", "--no-cache", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    let got = out.read(&mut first).unwrap();
    let elapsed = start.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(got, 1, "no output at all");
    // All of the file would take 19 s at this rate, a 64 KiB window over 3 s; the first
    // record needs the header's block and the first data block (about 25 KB).
    assert!(
        elapsed < Duration::from_millis(2_600),
        "first record after {elapsed:?}"
    );
}

/// The corpus over a server that caps each connection (an object store), with ranges cut into
/// 16 KiB parts fetched at once, on 1, 2 and 8 fetchers and 3 inflating threads: every run
/// identical to the goldens.
#[test]
fn the_corpus_passes_in_parts_over_capped_connections_with_one_two_and_eight_fetchers() {
    let link = Link {
        per_connection: Some(30e6),
        ..Link::default()
    };
    let server = Server::start_with(&testkit::corpus_dir(), 0, link).unwrap();
    for fetchers in ["1", "2", "8"] {
        let extra: Vec<String> = [
            "--fetchers",
            fetchers,
            "-@",
            "3",
            "--part-size",
            "16K",
            "--read-ahead",
            "64K",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        server.reset();
        let report = testkit::corpus::run(&testkit::corpus::Run {
            program: hts(),
            dir: &testkit::corpus_dir(),
            base_url: Some(&server.base()),
            filter: &[],
            timeout: Duration::from_secs(60),
            extra_args: &extra,
            env: &[],
        })
        .unwrap();
        println!("--fetchers {fetchers}: {}", report.summary());
        assert!(
            report.failures.is_empty(),
            "--fetchers {fetchers}: {}\n{}",
            report.summary(),
            report.failures.join("\n")
        );
        // Parts were in play: some data request asked for exactly one 16 KiB part.
        let parts = server
            .log()
            .iter()
            .filter(|e| e.content_length == 16 * 1024)
            .count();
        assert!(parts > 0, "--fetchers {fetchers}: no request was a part");
    }
}

/// A BED of 300 lines on a remote file, with `-L` (samtools reads the whole file; hts asks the
/// index), `-M -L` and `--region-file`: the output of a local run (for `-L`, the whole file
/// read and filtered), and a few bounded requests for the BAM: one plan, not one per line.
#[test]
fn a_bed_of_many_lines_is_one_plan() {
    let bed = testkit::workspace_root()
        .join("fixtures/conformance-extra/lists/many.bed")
        .display()
        .to_string();
    let local = testkit::corpus_dir()
        .join("data/rand.bam")
        .display()
        .to_string();
    let server = Server::start(&testkit::corpus_dir()).unwrap();
    let remote = server.url("data/rand.bam");
    for option in [&["-L"][..], &["-M", "-L"], &["--region-file"]] {
        let args = |file: &str| {
            let mut a = vec!["--no-cache".to_string()];
            a.extend(option.iter().map(|s| s.to_string()));
            a.extend([bed.clone(), file.to_string()]);
            a
        };
        let (expected, _) = view(&args(&local));
        assert!(
            expected.len() > 10_000,
            "{option:?}: the BED selects records"
        );
        server.reset();
        let (got, _) = view(&args(&remote));
        assert!(
            got == expected,
            "{option:?}: remote output differs from local"
        );
        let log = server.log();
        let bam_gets: Vec<_> = log
            .iter()
            .filter(|e| e.method == "GET" && e.path.ends_with("rand.bam"))
            .collect();
        assert!(
            bam_gets.iter().all(|e| e.is_bounded()),
            "{option:?}: {bam_gets:?}"
        );
        assert!(
            bam_gets.len() <= 12,
            "{option:?}: {} requests for 300 BED lines",
            bam_gets.len()
        );
        // Reading the whole file needs no index: asking for one shows the query was planned.
        assert!(
            log.iter()
                .any(|e| e.path.ends_with(".bai") || e.path.ends_with(".csi")),
            "{option:?}: the index was read"
        );
    }
}

/// A coordinate-sorted BAM of `n` random 100 bp reads on one 4 Mb reference, with a BAI,
/// written by hts itself into `dir` as `big.bam`: large enough that regions far apart are
/// planned as separate spans.
fn big_bam(dir: &Path, n: usize) -> PathBuf {
    use testkit::builders::{bgzf, BamBuilder, Rec};
    let mut rng = testkit::Rng::new(7);
    let mut positions: Vec<i32> = (0..n).map(|_| rng.below(3_999_000) as i32).collect();
    positions.sort_unstable();
    let mut b = BamBuilder::new(b"@HD\tVN:1.6\tSO:coordinate\n", &[("c", 4_000_000)]);
    for (i, pos) in positions.into_iter().enumerate() {
        let seq: String = (0..100).map(|_| b"ACGT"[rng.below(4)] as char).collect();
        let qual: Vec<u8> = (0..100).map(|_| rng.below(40) as u8).collect();
        let name = format!("r{i}");
        b = b.record(&Rec {
            name: &name,
            pos,
            cigar: "100M",
            seq: &seq,
            qual: Some(qual),
            ..Rec::default()
        });
    }
    let raw = dir.join("raw.bam");
    std::fs::write(&raw, bgzf(&b.bytes(), 65_280)).unwrap();
    let out = dir.join("big.bam");
    view(&[
        "-b".to_string(),
        "--no-PG".to_string(),
        "--write-index".to_string(),
        "-o".to_string(),
        format!("{}##idx##{}.bai", out.display(), out.display()),
        raw.display().to_string(),
    ]);
    out
}

/// The bytes a multi-region query reads are the ones it planned (and so fetched ahead): the
/// chunks of regions already passed are skipped, as htslib's multi-region iterator skips them,
/// rather than read with a request of their own.
#[test]
fn multi_region_reads_stay_inside_the_plan() {
    use bam::Regions;
    use region::RegionSet;
    use samtools::filter::bed::Targets;

    let dir = std::env::temp_dir().join(format!("hts-remote-multi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let local = big_bam(&dir, 40_000);
    // Eight regions 480 kb apart.
    let bed = dir.join("far.bed");
    let lines: String = (0..8)
        .map(|i| format!("c\t{}\t{}\n", 100_000 + i * 480_000, 101_000 + i * 480_000))
        .collect();
    std::fs::write(&bed, lines).unwrap();
    let targets = Targets::read(&bed.display().to_string()).unwrap();
    let mut reader = bam::Reader::open(&local.display().to_string(), &Default::default()).unwrap();
    reader.select_index(None).unwrap();
    let set = RegionSet::resolve(&targets.region_list(false), reader.header(), |_| {});
    // `--region-file`: htslib's multi-region iterator; `-L` on a remote file: every record
    // overlapping the BED, through the index.
    let mut spans_of = |regions: Regions| -> Vec<(u64, u64)> {
        let query = reader.query(regions).unwrap();
        query
            .plan()
            .spans
            .iter()
            .map(|s| (s.start, s.end))
            .collect()
    };
    let planned = [
        ("--region-file", spans_of(Regions::Multi(set.clone()))),
        ("-L", spans_of(Regions::Overlapping(set.clone()))),
    ];
    let server = Server::start(&dir).unwrap();
    for (option, spans) in planned {
        assert!(spans.len() >= 8, "{option}: {spans:?}");
        let args = |file: String| {
            vec![
                "--no-cache".to_string(),
                option.to_string(),
                bed.display().to_string(),
                file,
            ]
        };
        let (expected, _) = view(&args(local.display().to_string()));
        server.reset();
        let (got, _) = view(&args(server.url("big.bam")));
        assert!(expected.len() > 10_000 && got == expected, "{option}");
        for e in server.log() {
            if e.method != "GET" || !e.path.ends_with("big.bam") {
                continue;
            }
            let Some((a, b)) = e.bounded_range() else {
                assert_eq!(e.range.as_deref(), Some("bytes=-28"), "{e:?}");
                continue;
            };
            let header = a == 0 && b < 64 * 1024;
            let inside = spans.iter().any(|&(s, t)| s <= a && b < t);
            assert!(
                header || inside,
                "{option}: bytes {a}-{b} outside the plan {spans:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `[hts] summary: requests=N retries=N bytes_received=N ...` as (name, value) pairs.
fn summary_of(stderr: &str) -> Vec<(String, f64)> {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("[hts] summary: "))
        .collect();
    assert_eq!(lines.len(), 1, "one summary line in {stderr}");
    lines[0]["[hts] summary: ".len()..]
        .split(' ')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn the_summary_line_counts_what_the_server_saw() {
    let server = Server::start(&testkit::corpus_dir()).unwrap();
    server.add_rule(Rule {
        path: "/data/rand.bam".into(),
        fault: Fault::status(503),
        times: Some(1),
    });
    let bam = server.url("data/rand.bam");
    let bai = server.url("data/rand.bam.bai");
    let (got, err) = view(&five(&bam, &bai, &["--no-cache", "-v", "1"]));
    assert!(got == local_five(), "output differs");
    let log = server.log();
    let summary = summary_of(&err);
    let value = |name: &str| {
        summary
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("no {name} in {summary:?}"))
    };
    assert_eq!(value("requests") as usize, log.len(), "{err}");
    assert_eq!(value("retries"), 1.0, "{err}");
    let served: u64 = log.iter().map(|e| e.content_length).sum();
    assert_eq!(value("bytes_received") as u64, served, "{err}");
    assert_eq!(
        value("new_connections") as u64,
        server.connections(),
        "{err}"
    );
    assert!(value("seconds") > 0.0);
    // Quiet by default.
    let (_, err) = view(&five(&bam, &bai, &["--no-cache"]));
    assert!(!err.contains("[hts] summary"), "{err}");
}

#[test]
fn scattered_transient_faults_are_retried_and_counted() {
    let expected = local_five();
    let server = Server::start(&testkit::corpus_dir()).unwrap();
    let bam = server.url("data/rand.bam");
    let bai = server.url("data/rand.bam.bai");
    let mut faults = 0;
    for seed in 1..=4 {
        server.clear_rules();
        server.reset();
        server.add_chaos(testkit::Chaos::transient("/data/", 3, seed));
        let (got, err) = view(&five(&bam, &bai, &["--no-cache", "-v", "1"]));
        assert!(got == expected, "seed {seed}: output differs\n{err}");
        let served = server.faults_served();
        let retries = summary_of(&err)
            .iter()
            .find(|(k, _)| k == "retries")
            .map_or(0, |(_, v)| *v as usize);
        // Every fault answered a request whose bytes were needed: each costs one retry, except
        // a connection closed before any answer, which libcurl itself may send again on a
        // new connection when it had reused that one.
        let silent = server
            .log()
            .iter()
            .filter(|e| e.fault == Some(Fault::ResetBeforeHeaders))
            .count();
        assert!(
            served - silent <= retries && retries <= served,
            "seed {seed}: {retries} retries for {served} faults ({silent} resets)\n{err}"
        );
        faults += served;
    }
    assert!(faults > 0, "no fault was served");
}

#[test]
fn missing_index_names_cost_no_round_trip_of_their_own() {
    // aux.bam has only a .bai: the .csi names are asked for beside it and refused.
    let data = testkit::corpus_dir().join("data");
    let (expected, _) = view(&[
        "--no-cache".into(),
        data.join("aux.bam").display().to_string(),
        "a1".into(),
    ]);
    let server = Server::start(&testkit::corpus_dir()).unwrap();
    let (got, _) = view(&["--no-cache".into(), server.url("data/aux.bam"), "a1".into()]);
    assert!(got == expected, "remote output differs from local");
    let log = server.log();
    // The refusal of each missing name's first request answers for it: no HEAD (or other
    // second request) asks again, which would add a round trip before the query can start.
    for e in &log {
        assert_eq!(e.method, "GET", "{e:?}\n{log:#?}");
    }
    for missing in ["/data/aux.bam.csi", "/data/aux.csi"] {
        let asked = log.iter().filter(|e| e.path == missing).count();
        assert_eq!(asked, 1, "{missing} asked {asked} times\n{log:#?}");
    }
}

/// The most data requests (all but probes of a few bytes) that arrived within `window` of
/// each other, over every file of the log.
fn most_together(log: &[testkit::LogEntry], window: Duration) -> usize {
    let mut data: Vec<Instant> = log
        .iter()
        .filter(|e| e.method == "GET")
        .filter(|e| !e.range.as_deref().is_some_and(|r| r.starts_with("bytes=-")))
        .filter(|e| e.bounded_range().is_none_or(|(a, b)| b - a + 1 > 4096))
        .map(|e| e.arrived)
        .collect();
    data.sort();
    (0..data.len())
        .map(|i| {
            data[i..]
                .iter()
                .take_while(|&&t| t - data[i] < window)
                .count()
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn data_requests_in_flight_never_exceed_the_fetchers() {
    // Every response waits 400 ms for its first byte, so a request holds its fetcher at least
    // that long: data requests arriving within 300 ms of each other were in flight together.
    let link = Link {
        latency: Duration::from_millis(400),
        ..Link::default()
    };
    let server = Server::start_with(&testkit::corpus_dir(), 0, link).unwrap();
    let regions = [
        "chr1:1000-2000",
        "chr1:120000-121000",
        "chr1:240000-241000",
        "chr2:1000-2000",
        "chr2:90000-91000",
        "chr3:100000-101000",
        "chr3:1100000-1101000",
        "chrM:100-300",
    ];
    let local = testkit::corpus_dir().join("data/rand.bam");
    let mut want_args = vec!["--no-PG".to_string(), local.display().to_string()];
    want_args.extend(regions.iter().map(|r| r.to_string()));
    let (want, _) = view(&want_args);
    let mut most = Vec::new();
    for fetchers in ["2", "8"] {
        server.take_log();
        let mut args: Vec<String> = ["--no-PG", "--no-cache", "--fetchers", fetchers]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(server.url("data/rand.bam"));
        args.extend(regions.iter().map(|r| r.to_string()));
        let (got, _) = view(&args);
        assert!(got == want, "--fetchers {fetchers}: output differs");
        most.push(most_together(&server.log(), Duration::from_millis(300)));
    }
    assert!(
        most[0] <= 2,
        "{} data requests in flight with --fetchers 2",
        most[0]
    );
    // The measure can see more: with 8 fetchers the same query has more at once.
    assert!(most[1] > 2, "with --fetchers 8 at most {} at once", most[1]);
}
