//! `hts view` on CRAM files other programs wrote (fixtures/cram-thirdparty: htsjdk, Picard,
//! cram-js, the spec's test data and a dozen more projects) against what samtools 1.16.1 did
//! with the same arguments: its exit status, and the size and SHA-256 of its output
//! (cases.tsv, made by make_goldens.py). Where samtools succeeds, hts prints the same bytes;
//! where it fails, hts fails with one error line naming the file. Every case runs locally and
//! over the test server, at `-@ 0` and `-@ 2`.
//!
//! The CRAM files are not in this repository (they are the projects' own files). Two halves:
//! - the registry's (REGISTRY.tsv: Debian's source archives and PyPI's sdists), laid out on
//!   first use by `testkit::tools::cram_thirdparty` (collect.py): these run everywhere;
//! - the git repositories' (MANIFEST.tsv, less what the registry supplies: cram-js, the spec's
//!   own test data, htslib's and samtools' repositories, ...), which no registry this project's
//!   machines reach carries: laid out with `collect.py DIR --mirrors M` from clones, and run
//!   by the ignored tests here, `HTS_CRAM_THIRDPARTY=DIR cargo test --test cram_thirdparty --
//!   --ignored` (DIR then holds both halves).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use sha2::{Digest, Sha256};
use testkit::hts;

/// One row of cases.tsv.
struct Case {
    id: String,
    file: String,
    /// Also over HTTP (an index beside its file as `x.crai` is found locally only).
    remote: bool,
    status: i32,
    bytes: usize,
    sha256: String,
    args: Vec<String>,
}

fn fixtures() -> PathBuf {
    testkit::workspace_root().join("fixtures/cram-thirdparty")
}

/// The corpus: `$HTS_CRAM_THIRDPARTY` (both halves, laid out by hand), else the registry half
/// laid out on first use.
fn data() -> PathBuf {
    match std::env::var_os("HTS_CRAM_THIRDPARTY").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => testkit::tools::cram_thirdparty()
            .unwrap_or_else(|e| panic!("the third-party CRAM corpus: {e}")),
    }
}

/// The files of the registry half (and `hts/`, which collect.py makes): `project/path`.
fn registry_files() -> HashSet<String> {
    let text = std::fs::read_to_string(fixtures().join("REGISTRY.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            format!("{}/{}", f[0], f[9])
        })
        .collect()
}

/// Which half a case's file is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Half {
    Registry,
    Git,
}

fn half(c: &Case, registry: &HashSet<String>) -> Half {
    if registry.contains(&c.file) || c.file.starts_with("hts/") {
        Half::Registry
    } else {
        Half::Git
    }
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(fixtures().join("cases.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Case {
                id: f[0].to_string(),
                file: f[1].to_string(),
                remote: f[2] == "all",
                status: f[3].parse().unwrap(),
                bytes: f[4].parse().unwrap(),
                sha256: f[5].to_string(),
                args: f[6].split(' ').map(String::from).collect(),
            }
        })
        .collect()
}

fn case(id: &str) -> Case {
    cases()
        .into_iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no case {id} in cases.tsv"))
}

/// Runs `c` with its CRAM (and made index) named by `location`, `threads` workers.
fn run(c: &Case, data: &Path, location: &dyn Fn(&str) -> String, threads: &str) -> Output {
    let index = [".crai", ".made.crai"]
        .iter()
        .map(|e| format!("{}{e}", c.file))
        .find(|i| data.join(i).exists())
        .unwrap_or_default();
    let args = c.args.iter().map(|a| match a.as_str() {
        "{FILE}" => location(&c.file),
        "{INDEX}" => location(&index),
        _ => a.clone(),
    });
    let refs = format!("{}/refcache/%2s/%2s/%s", data.display());
    testkit::command(hts())
        .current_dir(data)
        .env("REF_PATH", &refs)
        .env("REF_CACHE", &refs)
        .env("HTS_CACHE", "off")
        .args(["view", "-@", threads])
        .args(args)
        .output()
        .unwrap()
}

/// Whether `out` is what samtools did: the same bytes when it succeeded; when it failed, a
/// failure too, its one error line naming the file.
fn judge(c: &Case, out: &Output) -> Result<(), String> {
    let err = String::from_utf8_lossy(&out.stderr);
    if c.status != 0 {
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("hts view:")).collect();
        let name = c.file.rsplit('/').next().unwrap_or(&c.file);
        return match out.status.code() {
            Some(0) => Err(format!("{}: exit 0 where samtools failed", c.id)),
            _ if err.contains("panicked") => Err(format!("{}: panic: {err}", c.id)),
            _ if lines.len() != 1
                || !(lines[0].contains(name) || lines[0].contains(&name.replace('#', "%23"))) =>
            {
                Err(format!(
                    "{}: not one error line naming the file: {err}",
                    c.id
                ))
            }
            _ => Ok(()),
        };
    }
    let sha = format!("{:x}", Sha256::digest(&out.stdout));
    if out.status.code() != Some(0) || sha != c.sha256 {
        return Err(format!(
            "{}: status {:?}, {} bytes vs samtools' {}: {}",
            c.id,
            out.status.code(),
            out.stdout.len(),
            c.bytes,
            err.trim()
        ));
    }
    Ok(())
}

/// Every case of one half (the remote ones only, for a URL) at `-@ 0` and `-@ 2`; at least
/// `least` runs.
fn run_all(
    which: Half,
    label: &str,
    location: &dyn Fn(&str) -> String,
    remote: bool,
    least: usize,
) {
    let data = data();
    let registry = registry_files();
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| half(c, &registry) == which && (c.remote || !remote))
        .collect();
    let mut failures = Vec::new();
    let mut ran = 0;
    for threads in ["0", "2"] {
        for c in &cases {
            ran += 1;
            if let Err(e) = judge(c, &run(c, &data, location, threads)) {
                failures.push(format!("-@ {threads}: {e}"));
            }
        }
    }
    println!(
        "cram third-party corpus ({label}): {}/{ran} passed",
        ran - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran >= least, "only {ran} runs");
}

fn over_http(which: Half, least: usize) {
    let data = data();
    let server = testkit::Server::start(&data).unwrap();
    let base = server.base();
    // A name with `#` (htsjdk's) is escaped, or it would end the URL's path.
    run_all(
        which,
        "HTTP",
        &|f| format!("{base}/{}", f.replace('#', "%23")),
        true,
        least,
    );
    assert_eq!(server.summary().unbounded, 0, "every request was bounded");
}

#[test]
fn registry_cases_as_samtools_did() {
    run_all(
        Half::Registry,
        "registry, local",
        &|f| f.to_string(),
        false,
        1300,
    );
}

#[test]
fn registry_cases_over_http() {
    over_http(Half::Registry, 1300);
}

#[test]
#[ignore = "needs the git repositories' files (see the module's comment)"]
fn git_cases_as_samtools_did() {
    run_all(Half::Git, "git, local", &|f| f.to_string(), false, 1500);
}

#[test]
#[ignore = "needs the git repositories' files (see the module's comment)"]
fn git_cases_over_http() {
    over_http(Half::Git, 1500);
}

/// The cases of one group, locally at both thread counts: each failed before the change
/// that made it pass.
fn group(ids: &[&str]) {
    let data = data();
    for id in ids {
        let c = case(id);
        for threads in ["0", "2"] {
            judge(&c, &run(&c, &data, &|f| f.to_string(), threads))
                .unwrap_or_else(|e| panic!("-@ {threads}: {e}"));
        }
    }
}

/// htsjdk's CRAM 2.1: the header container's length is two bytes short of its block.
#[test]
fn htsjdk_2_1_header_container_shorter_than_its_block() {
    group(&[
        "htsjdk/src/test/resources/htsjdk/samtools/cram/ce#1.2.1.cram:h",
        "htsjdk/src/test/resources/htsjdk/samtools/cram/xx#pair.2.1.cram:sam",
    ]);
}

/// samtools 1.16's `reheader` of a 2.1 file: 3.0 containers with 2.1 lengths (#1866).
#[test]
fn reheader_of_2_1_lengths_without_crc32s() {
    group(&["hts/reheader-2.1.cram:h", "hts/reheader-2.1.cram:c"]);
}

/// rANS Nx16 order 1: a run of zeros in a frequency table is one byte.
#[test]
#[ignore = "needs the git repositories' files (see the module's comment)"]
fn rans_nx16_order_1_zero_runs() {
    group(&[
        "hts-specs/test/cram/3.1/passed/level-2.cram:sam",
        "hts-specs/test/cram/3.1/passed/level-2.cram:across",
    ]);
}

/// rANS Nx16 with run lengths and 32 states: the run-length metadata uses 32 states too.
#[test]
#[ignore = "needs the git repositories' files (see the module's comment)"]
fn rans_nx16_run_lengths_with_32_states() {
    group(&["cram-js/test/data/ce#1000.noref.cram:sam"]);
}

/// Records without a sequence need no quality block.
#[test]
fn records_without_a_sequence() {
    group(&[
        "htsjdk/src/test/resources/htsjdk/samtools/cram/xx#minimal.3.0.cram:sam",
        "htsjdk/src/test/resources/htsjdk/samtools/cram/xx#minimal.2.1.cram:sam",
    ]);
}

/// CRAM 2.0 reads as 2.1 does, without an EOF container (quickcheck, as samtools': it cannot
/// be checked for one, and that is no failure).
#[test]
fn cram_2_0() {
    group(&[
        "samtools/test/mpileup/ce#5b.cram:h",
        "samtools/test/mpileup/ce#5b.cram:first",
    ]);
    let out = testkit::command(hts())
        .current_dir(data().join("samtools/test/mpileup"))
        .args(["quickcheck", "-vvv", "ce#5b.cram"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not contain one"));
}

/// The index beside the file as `x.crai`.
#[test]
fn index_beside_as_x_crai() {
    group(&["hts/beside.cram:first", "hts/beside.cram:across"]);
}

/// An `@SQ LN` the FASTA contradicts: decoded with the FASTA's length.
#[test]
fn sq_length_the_reference_contradicts() {
    group(&[
        "hts/sq-longer-than-fasta.cram:sam",
        "htsjdk/src/test/resources/htsjdk/samtools/cram/cramQueryWithBAI.cram:sam",
    ]);
}

/// Picard's unmapped slices start at -1: refused, as samtools refuses them.
#[test]
fn negative_slice_starts_are_refused() {
    group(&[
        "picard/testdata/picard/sam/unmapped_part_1.cram:sam",
        "picard/testdata/picard/sam/unmapped_with_oq_tag.cram:c",
    ]);
}

/// The spec's test data: every `passed` file as samtools reads it; the one `failed` file (no
/// EOF container) samtools reads with a warning, and so does hts (README).
#[test]
#[ignore = "needs the git repositories' files (see the module's comment)"]
fn the_specs_test_files() {
    let spec: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.file.starts_with("hts-specs/test/cram/"))
        .collect();
    assert!(spec.iter().filter(|c| c.file.contains("/passed/")).count() >= 68 * 4);
    let data = data();
    for c in &spec {
        if c.file.contains("/passed/") {
            assert_eq!(c.status, 0, "{}: samtools failed a passed file", c.id);
        }
        judge(c, &run(c, &data, &|f| f.to_string(), "0")).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// cram-js' copies of the cases above: a 2.1 header container, a record without a sequence.
#[test]
#[ignore = "needs the git repositories' files (see the module's comment)"]
fn cram_js_files_of_the_groups_above() {
    group(&[
        "cram-js/test/data/c1#bounds2_.2.1.cram:sam",
        "cram-js/test/data/xx#minimal.tmp.cram:sam",
    ]);
}
