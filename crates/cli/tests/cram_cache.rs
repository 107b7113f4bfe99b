//! A remote CRAM's opening and `.crai` in the persistent cache, end to end: a second region
//! query reads both from disk and asks only for its containers and a byte of each object; a
//! changed CRAM or index is never read with the old copy; whole files and `--no-cache` keep
//! nothing.

mod cram_shared;
mod site;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use site::{requests_for, scratch, span_ends, view};
use testkit::{LogEntry, Server};

/// Regions of the multi-slice CRAM, as corpus case `aligned-3.0-slices-regions` asks.
const REGIONS: [&str; 3] = ["ref2:1000-1200", "ref1:300-400", "ref3"];

/// A served folder with `x.cram` (and its `.crai`) copied from fixture `name`.
struct CramSite {
    dir: PathBuf,
    server: Server,
}

impl CramSite {
    fn new(name: &str) -> CramSite {
        let dir = scratch("cram-site");
        let site = CramSite {
            server: Server::start(&dir).unwrap(),
            dir,
        };
        site.put(name);
        site
    }

    /// Serves fixture `name` (and its index) as `x.cram`.
    fn put(&self, name: &str) {
        let from = cram_shared::dir();
        fs::copy(from.join(name), self.dir.join("x.cram")).unwrap();
        let crai = format!("{name}.crai");
        fs::copy(from.join(crai), self.dir.join("x.cram.crai")).unwrap();
    }

    fn url(&self) -> String {
        self.server.url("x.cram")
    }
}

fn reference() -> String {
    cram_shared::dir().join("ref.fa").display().to_string()
}

/// `hts view -T ref.fa URL REGIONS` with its cache in `cache`.
fn query(url: &str, cache: &Path, more: &[&str]) -> (Vec<u8>, String) {
    let reference = reference();
    let mut args = vec!["-T", reference.as_str()];
    args.extend_from_slice(more);
    args.push(url);
    args.extend(REGIONS);
    view(&args, cache, &[])
}

/// The requests for the CRAM itself (not its index).
fn cram_requests(log: &[LogEntry]) -> Vec<&LogEntry> {
    requests_for(log, "/x.cram")
}

/// Whether the CRAM's opening (a request from byte 0) was asked for.
fn fetched_opening(log: &[LogEntry]) -> bool {
    cram_requests(log)
        .iter()
        .any(|e| e.bounded_range().is_some_and(|r| r.0 == 0))
}

/// A request that only shows what an object is now: a one-byte GET from its end (HTTP), or a
/// HEAD (S3).
fn is_probe(e: &LogEntry) -> bool {
    e.method == "HEAD" || e.range.as_deref() == Some("bytes=-1")
}

fn entries(cache: &Path) -> usize {
    fs::read_dir(cache.join("hts")).map_or(0, |d| {
        d.filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "entry"))
        })
        .count()
    })
}

#[test]
fn a_second_region_query_takes_the_opening_and_the_crai_from_the_cache() {
    let site = CramSite::new("aligned-3.0-slices.cram");
    let cache = scratch("cram-cache");
    let expected = cram_shared::golden("aligned-r1");

    let (cold, err) = query(&site.url(), &cache, &[]);
    assert!(cold == expected, "cold output differs: {err}");
    let log = site.server.log();
    assert!(fetched_opening(&log), "{log:#?}");
    assert!(
        requests_for(&log, "/x.cram.crai")
            .iter()
            .all(|e| !is_probe(e)),
        "a cold run reads the index, no probe: {log:#?}"
    );
    let cold_containers = span_ends(&log, "x.cram");
    assert!(!cold_containers.is_empty());
    assert_eq!(entries(&cache), 2, "the opening and the index kept");
    site.server.reset();

    // With threads too: the same cached parts, the same requests.
    for more in [&[][..], &["-@", "2"][..]] {
        let (warm, err) = query(&site.url(), &cache, more);
        assert!(warm == expected, "warm output differs ({more:?}): {err}");
        let log = site.server.log();
        assert!(
            !fetched_opening(&log),
            "the opening came from the cache: {log:#?}"
        );
        // Each object shown current by one byte; the CRAM otherwise asked only for the
        // containers the cold run read.
        let index = requests_for(&log, "/x.cram.crai");
        assert_eq!(index.len(), 1, "{index:#?}");
        assert!(is_probe(index[0]), "{index:#?}");
        let probes = cram_requests(&log).iter().filter(|e| is_probe(e)).count();
        assert_eq!(probes, 1, "{log:#?}");
        assert_eq!(span_ends(&log, "x.cram"), cold_containers);
        assert!(log.iter().all(|e| e.range.is_some()), "{log:#?}");
        site.server.reset();
    }
}

/// Fills `cache` with a query of the slices CRAM, lets `change` alter the served files, and
/// checks that the next query reads them anew, with the output of the files as they are now.
fn changed_files_are_read_anew(change: impl Fn(&CramSite), now: &str) {
    let site = CramSite::new("aligned-3.0-slices.cram");
    let cache = scratch("cram-cache");
    query(&site.url(), &cache, &[]);
    change(&site);
    site.server.reset();
    let (got, err) = query(&site.url(), &cache, &[]);
    assert!(err.contains("without the cache"), "{err}");
    let local = site.dir.join(now);
    let (expected, _) = query(&local.display().to_string(), &scratch("none"), &[]);
    assert!(got == expected, "output is not the changed file's: {err}");
    assert!(
        fetched_opening(&site.server.log()),
        "the opening was read anew"
    );
    // Every stale entry went: the next run reads the index again (and keeps it as it is
    // now), the one after it is warm.
    for warm in [false, true] {
        site.server.reset();
        let (again, err) = query(&site.url(), &cache, &[]);
        assert!(again == expected, "{err}");
        assert!(!err.contains("without the cache"), "{err}");
        let log = site.server.log();
        let index = requests_for(&log, "/x.cram.crai");
        assert_eq!(index.iter().all(|e| is_probe(e)), warm, "{index:#?}");
    }
}

#[test]
fn another_cram_under_the_same_name_is_read_anew() {
    changed_files_are_read_anew(|site| site.put("aligned-3.0-multi.cram"), "x.cram");
}

#[test]
fn an_index_made_again_is_read_anew() {
    changed_files_are_read_anew(
        |site| {
            let crai = site.dir.join("x.cram.crai");
            let f = fs::File::options().write(true).open(crai).unwrap();
            f.set_modified(SystemTime::now() + Duration::from_secs(3600))
                .unwrap();
        },
        "x.cram",
    );
}

#[test]
fn a_cram_gone_since_it_was_cached_is_an_error_not_old_output() {
    let site = CramSite::new("aligned-3.0-slices.cram");
    let cache = scratch("cram-cache");
    query(&site.url(), &cache, &[]);
    fs::remove_file(site.dir.join("x.cram")).unwrap();
    let reference = reference();
    let out = testkit::command(testkit::hts())
        .env("XDG_CACHE_HOME", &cache)
        .args(["view", "-h", "-T", &reference, &site.url()])
        .args(REGIONS)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        out.stdout.is_empty(),
        "nothing from the stale copy, not even its header"
    );
    assert!(err.contains("x.cram"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn whole_files_and_no_cache_keep_nothing() {
    let site = CramSite::new("aligned-3.0-slices.cram");
    let cache = scratch("cram-cache");
    query(&site.url(), &cache, &["--no-cache"]);
    assert_eq!(entries(&cache), 0);
    let reference = reference();
    let (whole, err) = view(&["-T", &reference, &site.url()], &cache, &[]);
    assert!(whole == cram_shared::golden("aligned"), "{err}");
    assert_eq!(entries(&cache), 0);
    assert!(
        site.server.log().iter().all(|e| !is_probe(e)),
        "no probe without a cached part"
    );
}

/// `hts view -T ref.fa ARGS REGIONS` with `env` and its cache in `cache`: (stdout, stderr).
fn query_with(
    args: &[&str],
    cache: &Path,
    env: &[testkit::corpus::EnvChange],
) -> (Vec<u8>, String) {
    let reference = reference();
    let mut command = testkit::command(testkit::hts());
    testkit::corpus::apply_env(&mut command, env);
    let out = command
        .env("XDG_CACHE_HOME", cache)
        .args(["view", "-T", &reference])
        .args(args)
        .args(REGIONS)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {err}");
    (out.stdout, err)
}

/// Over a real S3 (s3s-fs checks every signature): `s3://` signed by hts, then pre-signed URLs
/// by boto3, each signed anew for the warm run (one entry serves every signature of an object).
#[test]
fn warm_queries_over_s3_and_presigned_urls() {
    use testkit::s3::{self, S3Stack};
    let objects = s3::folder_objects(&cram_shared::dir()).expect("fixtures/cram");
    let stack = S3Stack::start(&[("cram", objects)], testkit::Link::default())
        .unwrap_or_else(|e| panic!("the S3 test bed: {e}"));
    let env = stack.env(s3::SECRET_KEY);
    let expected = cram_shared::golden("aligned-r1");
    let python = s3::boto3_python().unwrap_or_else(|e| panic!("boto3: {e}"));
    let keys = ["aligned-3.0-slices.cram", "aligned-3.0-slices.cram.crai"];
    let presigned = || s3::presign(&python, &stack.endpoint(), "cram", &keys, 3600).unwrap();
    // Each run's arguments, made anew (a pre-signed pair is signed again for each run).
    let args_for = |label: &str| -> Vec<String> {
        if label == "s3" {
            return vec!["s3://cram/aligned-3.0-slices.cram".to_string()];
        }
        let urls = presigned();
        vec!["-X".into(), urls[0].clone(), urls[1].clone()]
    };
    for label in ["s3", "presigned"] {
        let cache = scratch("cram-s3-cache");
        for warm in [false, true] {
            stack.proxy.reset();
            let args = args_for(label);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (out, err) = query_with(&args, &cache, &env);
            assert!(out == expected, "{label}, warm {warm}: {err}");
            let log = stack.proxy.log();
            let index = requests_for(&log, ".cram.crai");
            assert!(!index.is_empty(), "{label}: {log:#?}");
            let probed = index.iter().all(|e| is_probe(e));
            assert_eq!(probed, warm, "{label}: {index:#?}");
            let opening = requests_for(&log, ".cram")
                .iter()
                .any(|e| e.bounded_range().is_some_and(|r| r.0 == 0));
            assert_eq!(opening, !warm, "{label}: {log:#?}");
            assert!(log.iter().all(|e| e.status < 400), "{label}: {log:#?}");
        }
    }
}
