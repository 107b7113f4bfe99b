//! `hts view` on the CRAM fixtures (fixtures/cram/cases.tsv) against what samtools 1.16.1's
//! `samtools view` printed for the same arguments (fixtures/cram/expected, made by make.sh):
//! every block codec, CRAM 2.1/3.0/3.1, references from -T, embedded and none, lossy names,
//! multi-reference slices, MD/NM made again or kept. Then a wrong reference and damaged files:
//! one error line naming the file, exit 1, no panic.

mod cram_shared;

use std::path::{Path, PathBuf};
use std::process::Output;

use cram_shared::{dir, golden, one_error_line};
use testkit::corpus::{apply_env, EnvChange};
use testkit::hts;
use testkit::s3::{self, S3Stack};

fn view_in(cwd: &Path, args: &[String]) -> Output {
    testkit::command(hts())
        .current_dir(cwd)
        .arg("view")
        .args(args)
        .output()
        .unwrap()
}

/// [`view_in`] cold: no cached opening or index, whatever this process ran before (for a test
/// of a first query's requests).
fn view_cold_in(cwd: &Path, args: &[String]) -> Output {
    testkit::command(hts())
        .env("HTS_CACHE", "off")
        .current_dir(cwd)
        .arg("view")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_case_prints_what_samtools_printed() {
    run_cases("local", |f| f.to_string(), &[]);
}

/// The same cases decoded on worker threads (`-@ 1`, `-@ 2`): the same output, `-P`'s second
/// pass and the multi-region iterator's included.
#[test]
fn every_case_prints_the_same_on_threads() {
    for threads in ["1", "2"] {
        let label = format!("local, -@ {threads}");
        run_cases_with(&label, |f| f.to_string(), &[], &["-@", threads]);
    }
}

/// The same cases with each CRAM read from the test server (127.0.0.1): every request bounded.
#[test]
fn every_case_over_http() {
    let server = testkit::Server::start(&dir()).unwrap();
    let base = server.base();
    run_cases("HTTP", |f| format!("{base}/{f}"), &[]);
    // On workers, remote: the slices' reference bases read while the containers come.
    run_cases_with("HTTP, -@ 2", |f| format!("{base}/{f}"), &[], &["-@", "2"]);
    assert_eq!(server.summary().unbounded, 0, "every request was bounded");
}

/// The cases over nginx (part of the test bed: missing, this fails rather than skips).
#[test]
fn every_case_over_nginx() {
    let ng = testkit::nginx::Nginx::start_required(&dir());
    let base = ng.base_url();
    run_cases("nginx", |f| format!("{base}/{f}"), &[]);
    ng.check_bounded().unwrap_or_else(|e| panic!("{e}"));
}

/// The cases over s3:// (s3s-fs checking every signature, behind the logging proxy), the
/// fixtures in the bucket `cram`: every request bounded.
#[test]
fn every_case_over_s3() {
    let objects = s3::folder_objects(&dir()).expect("fixtures/cram");
    let stack = S3Stack::start(&[("cram", objects)], testkit::Link::default())
        .unwrap_or_else(|e| panic!("the S3 test bed: {e}"));
    let mut env = stack.env(s3::SECRET_KEY);
    env.push(("HTS_CACHE".into(), Some("off".into())));
    run_cases("s3", |f| format!("s3://cram/{f}"), &env);
    let summary = stack.proxy.settled_summary();
    assert!(summary.gets > 0);
    assert_eq!(summary.unbounded, 0, "every request was bounded");
}

/// Runs cases.tsv with each CRAM named by `location` (a URL for a remote run) and `env` set.
fn run_cases(label: &str, location: impl Fn(&str) -> String, env: &[EnvChange]) {
    run_cases_with(label, location, env, &[]);
}

/// [`run_cases`] with `extra` arguments before each case's own.
fn run_cases_with(
    label: &str,
    location: impl Fn(&str) -> String,
    env: &[EnvChange],
    extra: &[&str],
) {
    let cases = std::fs::read_to_string(dir().join("cases.tsv")).unwrap();
    let mut ran = 0;
    let mut failures = Vec::new();
    for line in cases
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut f = line.split('\t');
        let (name, gold, args) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
        let args: Vec<String> = args
            .split(' ')
            .map(|a| a.replace("REF", "ref.fa"))
            .map(|a| {
                if a.ends_with(".cram") {
                    location(&a)
                } else {
                    a
                }
            })
            .collect();
        let mut cmd = testkit::command(hts());
        cmd.current_dir(dir()).arg("view").args(extra).args(&args);
        apply_env(&mut cmd, env);
        let out = cmd.output().unwrap();
        let want = golden(gold);
        // The rand golden holds the first 691 of the 3091 reads most rand fixtures hold.
        let got = if gold == "rand" && out.stdout.len() > want.len() {
            &out.stdout[..want.len()]
        } else {
            &out.stdout[..]
        };
        ran += 1;
        if !out.status.success() || got != &want[..] {
            let first = got
                .split(|&b| b == b'\n')
                .zip(want.split(|&b| b == b'\n'))
                .position(|(a, b)| a != b);
            failures.push(format!(
                "{name}: status {:?}, {} bytes vs {} wanted, first differing line {first:?}: {}",
                out.status.code(),
                got.len(),
                want.len(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    println!(
        "cram corpus ({label}): {}/{ran} passed",
        ran - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran >= 30, "only {ran} cases");
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hts-cram-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn a_wrong_reference_is_refused_by_its_md5() {
    let out = view_in(
        &dir(),
        &["-T".into(), "wrong.fa".into(), "aligned-3.0.cram".into()],
    );
    one_error_line(&out, &["aligned-3.0.cram", "MD5", "ref2", "at byte"]);
}

/// A remote region query reads its slices' reference bases ahead of their containers
/// (`Reader::read_references_ahead`, at every thread count): the wrong ones are refused all the
/// same, and the right ones give samtools' records.
#[test]
fn a_wrong_reference_read_ahead_is_refused_by_its_md5() {
    let server = testkit::Server::start(&dir()).unwrap();
    let url = server.url("aligned-3.0-slices.cram");
    let local = ["-T", "ref.fa", "aligned-3.0-slices.cram", "ref2"].map(String::from);
    let local = view_in(&dir(), &local);
    assert!(local.status.success() && !local.stdout.is_empty());
    for threads in ["0", "1", "2"] {
        for (fasta, refused) in [("wrong.fa", true), ("ref.fa", false)] {
            let args = ["-@", threads, "-T", fasta, url.as_str(), "ref2"].map(String::from);
            let out = view_in(&dir(), &args);
            if refused {
                one_error_line(&out, &["aligned-3.0-slices.cram", "MD5", "ref2", "at byte"]);
            } else {
                assert!(out.status.success(), "-@{threads}");
                assert!(out.stdout == local.stdout, "-@{threads}: other records");
            }
        }
    }
}

/// Without `-T`, references are found by their `@SQ M5` in `REF_CACHE` (files of bare
/// sequence, as htslib's cache holds them), and the output is what samtools printed with -T.
#[test]
fn references_come_from_ref_cache_by_md5() {
    let cache = scratch("ref-cache");
    let text = std::fs::read_to_string(dir().join("ref.fa")).unwrap();
    for record in text.split('>').skip(1) {
        let seq: String = record
            .lines()
            .skip(1)
            .collect::<String>()
            .to_ascii_uppercase();
        let md5 = cram::md5::hex(&cram::md5::digest(seq.as_bytes()));
        let at = cache.join(&md5[..2]).join(&md5[2..4]);
        std::fs::create_dir_all(&at).unwrap();
        std::fs::write(at.join(&md5[4..]), seq).unwrap();
    }
    for f in ["aligned-3.0.cram", "aligned-3.0-multi.cram"] {
        let out = testkit::command(hts())
            .current_dir(dir())
            .env("REF_PATH", "/nonexistent")
            .env("REF_CACHE", format!("{}/%2s/%2s/%s", cache.display()))
            .args(["view", f])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout == golden("aligned"), "{f}");
    }
}

#[test]
fn damaged_files_end_in_one_error_line() {
    let data = std::fs::read(dir().join("aligned-3.0.cram")).unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for cut in [10, 30, 200, data.len() / 2, data.len() - 40] {
        cases.push((format!("cut-{cut}.cram"), data[..cut].to_vec()));
    }
    // A byte changed in each of several places: CRC32s catch most; whatever passes them must
    // still end in an error or in output, never a panic.
    for at in (40..data.len()).step_by(data.len() / 23) {
        let mut d = data.clone();
        d[at] ^= 0x5a;
        cases.push((format!("flip-{at}.cram"), d));
    }
    for (name, bytes) in cases {
        let path = scratch(&name);
        std::fs::write(&path, &bytes).unwrap();
        let out = view_in(
            &dir(),
            &["-T".into(), "ref.fa".into(), path.display().to_string()],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{name}: {err}");
        if name.starts_with("cut") {
            one_error_line(&out, &[&name, "at byte"]);
        } else if !out.status.success() {
            one_error_line(&out, &[&name]);
        }
    }
}

#[test]
fn flagstat_counts_as_samtools_without_a_reference() {
    for f in [
        "aligned-3.0",
        "aligned-3.0-multi",
        "aligned-3.0-lossy",
        "rand-3.0-gzip",
    ] {
        let out = testkit::command(hts())
            .current_dir(dir())
            .args(["flagstat", &format!("{f}.cram")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{f}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&golden(&format!("flagstat-{f}"))),
            "{f}"
        );
    }
}

#[test]
fn idxstats_counts_as_samtools() {
    for f in ["aligned-3.0-multi", "rand-3.0-gzip"] {
        let out = testkit::command(hts())
            .current_dir(dir())
            .args(["idxstats", &format!("{f}.cram")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{f}");
        assert_eq!(out.stdout, golden(&format!("idxstats-{f}")), "{f}");
    }
}

/// Exit statuses samtools quickcheck 1.16.1 gives the same files: a whole file 0, one cut
/// before its header ends 2 (htslib cannot open it), one without its EOF container 16.
#[test]
fn quickcheck_as_samtools() {
    let data = std::fs::read(dir().join("aligned-3.0.cram")).unwrap();
    let no_eof = scratch("no-eof.cram");
    std::fs::write(&no_eof, &data[..data.len() - 38]).unwrap();
    let cut = scratch("cut-header.cram");
    std::fs::write(&cut, &data[..100]).unwrap();
    for (path, status) in [
        (dir().join("aligned-3.0.cram"), 0),
        (dir().join("aligned-2.1.cram"), 0),
        (no_eof, 16),
        (cut, 2),
    ] {
        let out = testkit::command(hts())
            .args(["quickcheck", "-v"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(status), "{}", path.display());
    }
}

/// Without `-T` or a cache entry, the FASTA the `@SQ UR` tag names is read (the fixtures name
/// /tmp/hts-cram-fixture-ref/ref.fa, which make.sh removes); without that either, one error
/// line asks for `-T`. One test, so that the two never run at once.
#[test]
fn references_come_from_the_ur_path_or_an_error_asks_for_them() {
    let at = std::path::Path::new("/tmp/hts-cram-fixture-ref");
    let run = || {
        testkit::command(hts())
            .current_dir(dir())
            .env("REF_PATH", "/nonexistent")
            .env("REF_CACHE", "/nonexistent/%s")
            .args(["view", "aligned-3.1.cram"])
            .output()
            .unwrap()
    };
    let _ = std::fs::remove_dir_all(at);
    one_error_line(&run(), &["aligned-3.1.cram", "-T", "ref1"]);
    std::fs::create_dir_all(at).unwrap();
    std::fs::copy(dir().join("ref.fa"), at.join("ref.fa")).unwrap();
    let out = run();
    let _ = std::fs::remove_dir_all(at);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == golden("aligned"));
}

/// A `.crai` naming a container past the end of the file: one error line naming both.
#[test]
fn an_index_pointing_past_the_file_is_an_error() {
    let cram = scratch("past.cram");
    std::fs::copy(dir().join("aligned-3.0.cram"), &cram).unwrap();
    let crai = scratch("past.cram.crai");
    std::fs::write(&crai, "0\t1\t6000\t99999999\t100\t1000\n").unwrap();
    let out = view_in(
        &dir(),
        &[
            "-T".into(),
            "ref.fa".into(),
            cram.display().to_string(),
            "ref1:1-100".into(),
        ],
    );
    one_error_line(&out, &["past.cram.crai", "99999999"]);
}

/// A region query on a remote CRAM: the `.crai` and the containers it names, every request
/// bounded (the log is printed with `--nocapture`).
#[test]
fn a_remote_region_query_is_bounded() {
    let server = testkit::Server::start(&dir()).unwrap();
    let url = format!("{}/aligned-3.0-slices.cram", server.base());
    let out = view_in(
        &dir(),
        &[
            "-T".into(),
            "ref.fa".into(),
            url,
            "ref3:700-800".into(),
            "*".into(),
            "ref1:5990".into(),
            "ref9".into(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == golden("aligned-r2"));
    let summary = server.summary();
    println!("remote CRAM region query: {summary}");
    for entry in server.log() {
        println!("  {entry:?}");
    }
    assert_eq!(summary.unbounded, 0);
}

/// The byte ranges of the requests for `path` in the server's log (`None`: unbounded).
fn ranges_of(server: &testkit::Server, path: &str) -> Vec<Option<(u64, u64)>> {
    server
        .log()
        .iter()
        .filter(|e| e.method == "GET" && e.path == path)
        .map(|e| {
            let r = e.range.as_deref()?.strip_prefix("bytes=")?;
            let (a, b) = r.split_once('-')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect()
}

/// A remote multi-region query reads as planned: of spaced-3.0.cram's containers (crai:
/// chr1 at 337, 49277 and 97619, chr2 at 143525 and 191515, chrM at 199779, chr3 at 229282,
/// unmapped at 247629, the EOF container at 249706), `chr3:1000-200000 chr1:1-3000` needs
/// those at 229282 and 337 alone (chr1's second starts at 83253; the unmapped one ends
/// chr3's range): after the header container, bounded ranges holding no byte of the others
/// but the first [`cram::reader::HEADER_PEEK`] of the two that end the regions, whose headers
/// the regions are read on to (as htslib reads on to them: an index wrong about them loses
/// nothing).
#[test]
fn a_remote_multi_region_query_fetches_only_its_containers() {
    // The regions one by one, and with -M (htslib's multi-region iterator, in file order).
    for (option, gold) in [(None, "spaced-r"), (Some("-M"), "spaced-M-two")] {
        let server = testkit::Server::start(&dir()).unwrap();
        let url = format!("{}/spaced-3.0.cram", server.base());
        let mut args: Vec<String> = option.map(String::from).into_iter().collect();
        args.extend([url, "chr3:1000-200000".into(), "chr1:1-3000".into()]);
        let out = view_cold_in(&dir(), &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout == golden(gold), "{gold}");
        only_the_needed_containers(&ranges_of(&server, "/spaced-3.0.cram"));
    }
}

/// Of spaced-3.0.cram, the header and chr1's and chr3's containers were asked for, no byte of
/// the others, every request bounded.
fn only_the_needed_containers(ranges: &[Option<(u64, u64)>]) {
    println!("container requests: {ranges:?}");
    assert!(ranges.iter().all(Option::is_some), "{ranges:?}");
    let peek = cram::reader::HEADER_PEEK;
    let unneeded = [49277 + peek..229282u64, 247629 + peek..249744];
    for (a, b) in ranges.iter().flatten() {
        for u in &unneeded {
            assert!(
                *b < u.start || *a >= u.end,
                "bytes {a}-{b} overlap unneeded containers {u:?}"
            );
        }
    }
    let fetched = |from: u64, to: u64| {
        (from..to).all(|x| ranges.iter().flatten().any(|(a, b)| *a <= x && x <= *b))
    };
    assert!(fetched(0, 337), "header not fetched: {ranges:?}");
    assert!(
        fetched(337, 49277),
        "chr1's container not fetched: {ranges:?}"
    );
    assert!(
        fetched(229282, 247629),
        "chr3's container not fetched: {ranges:?}"
    );
}

/// `hts` run in the fixtures' folder with `args`, its standard input `stdin` (a fixture).
fn hts_in_fixtures(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = testkit::command(hts());
    cmd.current_dir(dir()).args(args);
    if let Some(f) = stdin {
        cmd.stdin(std::fs::File::open(dir().join(f)).unwrap());
    }
    cmd.output().unwrap()
}

/// flagstat, idxstats and quickcheck on remote CRAM print what samtools printed for the local
/// files (the same goldens), every request bounded.
#[test]
fn flagstat_idxstats_and_quickcheck_read_remote_cram() {
    let server = testkit::Server::start(&dir()).unwrap();
    let url = |f: &str| format!("{}/{f}.cram", server.base());
    for f in ["aligned-3.0", "aligned-3.0-multi", "rand-3.0-gzip"] {
        let out = hts_in_fixtures(&["flagstat", &url(f)], None);
        assert!(out.status.success(), "{f}");
        assert!(out.stdout == golden(&format!("flagstat-{f}")), "{f}");
    }
    for f in ["aligned-3.0-multi", "rand-3.0-gzip"] {
        let out = hts_in_fixtures(&["idxstats", &url(f)], None);
        assert!(out.status.success(), "{f}");
        assert!(out.stdout == golden(&format!("idxstats-{f}")), "{f}");
    }
    assert_eq!(server.summary().unbounded, 0);
    // quickcheck's statuses as samtools gives them for the same files locally (see
    // quickcheck_as_samtools), served from a folder of their own.
    let data = std::fs::read(dir().join("aligned-3.0.cram")).unwrap();
    let served = scratch("quickcheck-remote");
    let _ = std::fs::remove_dir_all(&served);
    std::fs::create_dir_all(&served).unwrap();
    std::fs::write(served.join("whole.cram"), &data).unwrap();
    std::fs::write(served.join("no-eof.cram"), &data[..data.len() - 38]).unwrap();
    std::fs::write(served.join("cut.cram"), &data[..100]).unwrap();
    let server = testkit::Server::start(&served).unwrap();
    for (f, status) in [("whole", 0), ("no-eof", 16), ("cut", 2)] {
        let out = hts_in_fixtures(&["quickcheck", "-v", &url_of(&server, f)], None);
        assert_eq!(out.status.code(), Some(status), "{f}");
    }
    assert_eq!(server.summary().unbounded, 0);
}

fn url_of(server: &testkit::Server, f: &str) -> String {
    format!("{}/{f}.cram", server.base())
}

/// CRAM on standard input (`-`): read in order, no index, printed as samtools prints the file.
#[test]
fn cram_from_standard_input() {
    for (f, golden_name, args) in [
        (
            "aligned-3.0.cram",
            "aligned",
            &["view", "-T", "ref.fa", "-"][..],
        ),
        (
            "aligned-3.0-slices.cram",
            "aligned",
            &["view", "-T", "ref.fa", "-"],
        ),
        (
            "aligned-2.1.cram",
            "aligned-2.1",
            &["view", "-T", "ref.fa", "-"],
        ),
        ("aligned-3.0-embed.cram", "aligned", &["view", "-"]),
        (
            "aligned-3.0.cram",
            "aligned-c",
            &["view", "-c", "-T", "ref.fa", "-"],
        ),
        (
            "aligned-3.0.cram",
            "flagstat-aligned-3.0",
            &["flagstat", "-"],
        ),
        (
            "rand-3.0-gzip.cram",
            "flagstat-rand-3.0-gzip",
            &["flagstat", "-"],
        ),
    ] {
        let out = hts_in_fixtures(args, Some(f));
        assert!(
            out.status.success(),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout == golden(golden_name), "{f} {args:?}");
        assert!(
            out.stderr.is_empty(),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
