//! Where `hts` behaves as the Unix tool samtools is but no samtools golden can say so: help and
//! version output, options hts does not support yet, inputs that are not BAM, a closed output
//! pipe.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

fn hts(args: &[&str]) -> Output {
    testkit::command(testkit::hts())
        .args(args)
        .current_dir(fixtures())
        .stdin(Stdio::null())
        .output()
        .expect("hts runs")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn help_goes_to_stdout_with_status_0() {
    for args in [&["view", "--help"][..], &["view", "-?"], &["help", "view"]] {
        let out = hts(args);
        assert!(out.status.success(), "{args:?}");
        assert!(text(&out.stdout).contains("Usage: hts view"), "{args:?}");
        assert!(text(&out.stdout).contains("--write-index"));
        assert!(out.stderr.is_empty());
    }
    for args in [&["-h"][..], &["--help"], &["help"]] {
        let out = hts(args);
        assert!(out.status.success());
        assert!(text(&out.stdout).contains("Commands:"));
    }
    // Alone, as samtools alone: the command list on stderr, status 1.
    let out = hts(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("Commands:"));
    assert!(out.stdout.is_empty());
}

#[test]
fn version_names_hts_libcurl_and_libdeflate() {
    for flag in ["--version", "-V", "version"] {
        let out = hts(&[flag]);
        assert!(out.status.success());
        let v = text(&out.stdout);
        let lines: Vec<&str> = v.lines().collect();
        assert_eq!(lines[0], format!("hts {}", env!("CARGO_PKG_VERSION")));
        assert!(
            lines[1].starts_with("Using libcurl ") && lines[1].len() > 14,
            "{v}"
        );
        assert!(lines[2].starts_with("Using libdeflate 1."), "{v}");
    }
}

#[test]
fn unsupported_options_say_exactly_that() {
    for (args, option) in [
        (&["view", "-C", "conformance/data/rand.bam"][..], "-C"),
        (&["view", "-cC", "conformance/data/rand.bam"], "-C"),
    ] {
        let out = hts(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            text(&out.stderr).trim(),
            format!("hts view does not support option {option} yet")
        );
    }
    let out = hts(&["view", "-Z", "conformance/data/rand.bam"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("hts view: invalid option -- 'Z'"));
    let out = hts(&["view", "-o", "x.cram", "conformance/data/rand.bam"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("does not support writing CRAM"));
}

#[test]
fn inputs_that_are_not_bam_are_named() {
    for (file, format) in [
        ("conformance-extra/data/small.sam", "this is SAM"),
        ("conformance/data/rand.bam.bai", "this is a BAI index"),
    ] {
        let out = hts(&["view", file]);
        assert_eq!(out.status.code(), Some(1), "{file}");
        assert!(out.stdout.is_empty());
        let err = text(&out.stderr);
        assert!(
            err.contains("hts reads BAM and CRAM; ") && err.contains(format),
            "{file}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// CRAM on standard input is read as the same file by name is (the corpus,
/// crates/cli/tests/cram_corpus.rs, checks both against samtools' goldens).
#[test]
fn cram_on_standard_input_reads_as_the_file_does() {
    let path = fixtures().join("conformance-extra/data/small.cram");
    let cram = std::fs::File::open(&path).unwrap();
    let piped = testkit::command(testkit::hts())
        .args(["view", "-h", "--no-PG", "-"])
        .stdin(cram)
        .output()
        .unwrap();
    let named = testkit::command(testkit::hts())
        .args(["view", "-h", "--no-PG"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(piped.status.code(), Some(0), "{}", text(&piped.stderr));
    assert_eq!(named.status.code(), Some(0), "{}", text(&named.stderr));
    assert!(!piped.stdout.is_empty());
    assert_eq!(piped.stdout, named.stdout);
}

#[test]
fn a_named_pipe_is_read_as_a_stream() {
    // `hts view <(cat x.bam)`: the shell passes /dev/fd/N, a pipe that cannot seek; samtools
    // reads it in order, as standard input (it failed with "Illegal seek").
    let path = fixtures().join("conformance/data/aux.bam");
    for args in [
        &["view", "-h", "--no-PG"][..],
        &["flagstat"],
        &["view", "-c"],
    ] {
        let piped = testkit::command(Path::new("bash"))
            .arg("-c")
            .arg(r#"exec "$0" "${@:2}" <(cat "$1")"#)
            .arg(testkit::hts())
            .arg(&path)
            .args(args)
            .output()
            .unwrap();
        let named = testkit::command(testkit::hts())
            .args(args)
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(
            piped.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&piped.stderr)
        );
        assert_eq!(named.status.code(), Some(0), "{}", text(&named.stderr));
        assert!(!piped.stdout.is_empty());
        assert_eq!(piped.stdout, named.stdout, "{args:?}");
    }
}

#[test]
fn sam_on_standard_input_is_named_too() {
    let sam = std::fs::File::open(fixtures().join("conformance-extra/data/small.sam")).unwrap();
    let out = testkit::command(testkit::hts())
        .args(["view", "-"])
        .stdin(sam)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr)
        .contains("-: hts reads BAM and CRAM; this is SAM (by its bytes from byte 0)"));
}

#[test]
fn index_needs_an_output_file() {
    let out = hts(&["view", "--write-index", "-b", "conformance/data/rand.bam"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).contains("--write-index needs an output file"));
}

/// samtools dies of SIGPIPE when its reader goes away: quietly, status 141 in a shell.
#[test]
fn closed_pipe_ends_quietly_with_samtools_status() {
    for args in [
        &["view", "conformance/data/rand.bam"][..],
        &["view", "-u", "conformance/data/rand.bam"],
    ] {
        let mut child = testkit::command(testkit::hts())
            .args(args)
            .current_dir(fixtures())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 100];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        // The pipe's reading end is closed now.
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(141), "{args:?}");
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    }
}

/// A run that fails part-way leaves what it wrote, without the EOF marker that would pass it
/// off as complete (samtools would close the file normally).
#[test]
fn failed_run_leaves_no_eof_marker() {
    let dir = std::env::temp_dir().join(format!("hts-conventions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_path = dir.join("partial.bam");
    let out_arg = out_path.display().to_string();
    let out = hts(&[
        "view",
        "-b",
        "-o",
        &out_arg,
        "conformance/malformed/bad_crc.bam",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("bad_crc.bam"),
        "{}",
        text(&out.stderr)
    );
    let written = std::fs::read(&out_path).unwrap();
    let eof: [u8; 28] = [
        0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0,
        0, 0, 0, 0,
    ];
    assert!(written.len() > 28, "the records before the damage are kept");
    assert!(!written.ends_with(&eof));
    let _ = std::fs::remove_dir_all(&dir);
}
