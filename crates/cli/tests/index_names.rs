//! Which index a remote BAM is read with, when several names exist or the one cached has gone:
//! the names samtools tries, asked for at once; those after the one that answers abandoned;
//! a cached index that moved, changed or vanished never used, the run starting again without
//! the cache (for `view` and `idxstats`).

mod site;

use std::fs;
use std::time::Duration;

use site::*;

#[test]
fn a_cached_index_under_a_later_name_lets_the_spans_go_out_at_once() {
    let (site, cache, expected) = bai_site();
    let url = site.url("x.bam");
    let args = query_args(&url);
    view(&args, &cache, &[]);

    // The names samtools tries before x.bam.bai answer late: the spans, planned from the
    // cached index, must not wait for those answers (the log records a request when it is
    // answered).
    site.server.reset();
    for name in ["/x.bam.csi", "/x.csi"] {
        site.server.add_rule(testkit::Rule {
            path: name.into(),
            fault: testkit::Fault::Delay(Duration::from_millis(800)),
            times: None,
        });
    }
    let (warm, err) = view(&args, &cache, &[]);
    assert!(warm == expected, "warm output differs: {err}");
    let log = site.server.log();
    let first_absent = log
        .iter()
        .position(|e| e.path.ends_with(".csi"))
        .expect("the .csi names were asked for");
    let first_span = log
        .iter()
        .position(|e| e.path == "/x.bam" && e.bounded_range().is_some_and(|(a, _)| a > 0))
        .expect("a span was fetched");
    assert!(first_span < first_absent, "{log:#?}");

    // An index appearing under an earlier name is the one samtools would use: the run
    // starts again without the cache and reads it.
    site.server.clear_rules();
    site.server.reset();
    site.replace("rand.bam.csi", "x.bam.csi");
    let (got, err) = view(&args, &cache, &[]);
    assert!(got == expected, "output differs: {err}");
    assert!(err.contains("exists now"), "{err}");
    let csi = requests_for(&site.server.log(), "x.bam.csi")
        .iter()
        .filter(|e| e.status == 206)
        .count();
    assert!(
        csi > 0,
        "the new index was not read: {:#?}",
        site.server.log()
    );
}

/// A `.bai` beside the `.csi` samtools prefers: both are asked for at once (most folders hold
/// one, and asking in turn would cost a round trip), but the `.bai`'s request is abandoned as
/// soon as the `.csi`'s answer shows it exists, not once the `.csi` has arrived: on a shared
/// link the two would otherwise split it for as long as the `.csi` takes.
#[test]
fn a_bai_beside_a_csi_is_abandoned_once_the_csi_answers() {
    let site = Site::new(&[("manyrefs.bam", "m.bam"), ("manyrefs.idx.csi", "m.bam.csi")]);
    let url = site.url("m.bam");
    let expected = local(&["ctg4999"], &site.dir.join("m.bam"));
    assert!(!expected.is_empty());
    // The CSI (5 KB) takes 2 s to arrive, its first KiB 0.4 s (the test server's trickle sends
    // the headers with it); the BAI (67 KB) would take 1.7 s.
    let trickle = |path: &str, bytes_per_sec: u64| testkit::Rule {
        path: path.into(),
        fault: testkit::Fault::Trickle { bytes_per_sec },
        times: None,
    };
    site.server.add_rule(trickle("/m.bam.csi", 2560));
    let run = || {
        let before = site.server.bytes_written();
        let args = ["--no-cache", url.as_str(), "ctg4999"];
        let (got, err) = view(&args, &scratch("c"), &[]);
        assert!(got == expected, "output differs: {err}");
        site.server.bytes_written() - before
    };
    let csi_alone = run();
    site.replace("manyrefs.bam.bai", "m.bam.bai");
    site.server.add_rule(trickle("/m.bam.bai", 40 * 1024));
    let both = run();
    let bai = site
        .server
        .log()
        .into_iter()
        .filter(|e| e.path == "/m.bam.bai" && e.status == 206)
        .count();
    assert_eq!(
        bai,
        1,
        "the BAI was asked for once: {:#?}",
        site.server.log()
    );
    // Abandoned at the CSI's first KiB: about 16 KB of the BAI; once the CSI had arrived: all
    // (a first request of 240 KiB, with less than 256 KiB left, was let to finish to keep its
    // connection).
    let more = both.saturating_sub(csi_alone);
    println!("{more} more bytes written with the BAI beside the CSI");
    assert!(
        more < 40 * 1024,
        "{more} more bytes written with the BAI beside the CSI"
    );
}

/// A cached index deleted on the server (another name left): the answer for the entry is a
/// 404, which drops it and starts the run again without the cache, with the index that is
/// left, instead of failing on the entry until the cache is cleared.
#[test]
fn a_cached_index_deleted_on_the_server_is_dropped_and_the_run_starts_again() {
    let (site, cache, expected) = bai_site();
    site.replace("rand.bam.csi", "x.bam.csi");
    let url = site.url("x.bam");
    let args = query_args(&url);
    view(&args, &cache, &[]);
    let verbose = [&["--verbosity", "1"][..], &args].concat();
    let (_, err) = view(&verbose, &cache, &[]);
    let cached = |l: &str| l.contains("x.bam.csi:") && l.ends_with("bytes from the cache");
    assert!(
        err.lines().any(cached),
        "the CSI did not come from the cache: {err}"
    );
    fs::remove_file(site.dir.join("x.bam.csi")).unwrap();
    for run in ["first", "next"] {
        let (got, err) = view(&args, &cache, &[]);
        assert!(
            got == expected,
            "{run} run without the .csi: output differs: {err}"
        );
    }
}

/// `hts idxstats URL` with the cache: (stdout, stderr).
fn idxstats(url: &str, cache: &std::path::Path, env: &[(&str, &str)]) -> (Vec<u8>, String) {
    run("idxstats", &[url], cache, env)
}

/// The counts of a file replaced on the server since its index was cached are the new file's:
/// `idxstats` shows the cached parts current before it prints, as `view` does.
#[test]
fn idxstats_never_prints_the_counts_of_a_stale_cached_index() {
    let (site, cache, _) = bai_site();
    let url = site.url("x.bam");
    view(&query_args(&url), &cache, &[]);
    let (before, _) = idxstats(&url, &cache, &[]);
    site.replace("longref_low.bam", "x.bam");
    site.replace("longref_low.bam.bai", "x.bam.bai");
    let (after, err) = idxstats(&url, &cache, &[]);
    let (want, _) = idxstats(&site.dir.join("x.bam").display().to_string(), &cache, &[]);
    assert!(after != before, "the test must change the counts");
    assert!(after == want, "stale counts: {err}");
    assert!(err.contains("without the cache"), "{err}");
}

/// A cached index prefix, then the index deleted on the server with another name left: reading
/// past the prefix fails with a 404, which shows the entry stale; `idxstats` starts again
/// without the cache and reads the index that is left, instead of every record of the file.
#[test]
fn a_cached_prefix_of_a_deleted_index_is_dropped_when_read_past() {
    let site = Site::new(&[
        ("manyrefs.bam", "m.bam"),
        ("manyrefs.bam.bai", "m.bam.bai"),
        ("manyrefs.bam.bai", "m.bai"),
    ]);
    let url = site.url("m.bam");
    let cache = scratch("cache");
    // A first request of 1 KiB caches a prefix that holds the first references only.
    let knob = [("HTS_INDEX_FIRST_PIECE", "1024")];
    view(&[url.as_str(), "ctg0001"], &cache, &knob);
    let (_, err) = view(
        &["--verbosity", "1", url.as_str(), "ctg0001"],
        &cache,
        &knob,
    );
    assert!(err.contains("m.bam.bai: "), "no cached prefix: {err}");
    fs::remove_file(site.dir.join("m.bam.bai")).unwrap();
    let (got, err) = idxstats(&url, &cache, &knob);
    let (want, _) = idxstats(&site.dir.join("m.bam").display().to_string(), &cache, &[]);
    assert!(got == want, "idxstats differs: {err}");
    assert!(!err.contains("slow method"), "{err}");
    assert!(err.contains("without the cache"), "{err}");
}

/// Only the header cached (by `view -H`), then the file replaced by a larger one with the same
/// references and its own index: the new index's chunks lie past the cached size, which is the
/// old file's. That is a stale entry, read again without the cache, not an index that does not
/// fit its file.
#[test]
fn a_cached_size_of_an_older_file_is_not_taken_for_a_bad_index() {
    let (site, cache, _) = bai_site();
    let url = site.url("x.bam");
    view(&["-H", url.as_str()], &cache, &[]);
    let bigger = site.dir.join("big.bam");
    let out = format!("{}##idx##{}.bai", bigger.display(), bigger.display());
    let old = site.dir.join("x.bam").display().to_string();
    view(
        &["-u", "--no-PG", "--write-index", "-o", &out, &old],
        &scratch("none"),
        &[],
    );
    fs::rename(&bigger, site.dir.join("x.bam")).unwrap();
    fs::rename(site.dir.join("big.bam.bai"), site.dir.join("x.bam.bai")).unwrap();
    let region = ["chrM:100-300"];
    let want = local(&region, &site.dir.join("x.bam"));
    let (got, err) = view(&[url.as_str(), region[0]], &cache, &[]);
    assert!(!want.is_empty() && got == want, "output differs: {err}");
}
