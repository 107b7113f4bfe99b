//! `cargo xtask test`: every test, as CI runs it.

use crate::{cargo_with, conformance, release_hts};
use testkit::nginx;

pub const HELP: &str = "\
cargo xtask test
  Every test, as CI runs it: cargo fmt --check; clippy with warnings as errors; cargo test
  --workspace --all-targets (unit and integration tests, including the conformance corpus on
  the hts binary locally and over the in-process HTTP test server, the S3 tests against s3s-fs
  and boto3, and the Snakemake cohort workflow over 20 served BAMs, each tool installed by
  testkit on first use); doc tests; the fuzz targets type-checked; cargo doc with warnings as
  errors; cargo publish
  --workspace --dry-run --no-verify (the libraries package); the conformance corpus over
  nginx (a release build); and the Python package (cargo xtask python-test: clippy on its
  bindings, its wheel built with maturin, pytest against pysam 0.24.1). First installs what the tests need and a fresh Debian
  machine lacks (samtools, nginx-light, python3-venv) with apt when run as root; otherwise
  stops at once with the apt-get command to run.";

pub fn cmd(_args: &[String]) -> Result<(), String> {
    // samtools, nginx and Python's venv: installed with apt as root, else named and stopped
    // at once (a run without them would fail, or skip, tests one by one).
    crate::setup::ensure(crate::setup::FOR_TESTS)?;
    let mut failures = Vec::new();
    let mut step = |name: &str, r: Result<(), String>| {
        if let Err(e) = r {
            println!("!! {name}: {e}");
            failures.push(name.to_string());
        }
    };
    step("cargo fmt", cargo_with(&["fmt", "--all", "--check"], &[]));
    // The fuzz crate is a workspace of its own, out of `--all`'s reach.
    step(
        "cargo fmt (fuzz targets)",
        cargo_with(
            &["fmt", "--manifest-path", "fuzz/Cargo.toml", "--check"],
            &[],
        ),
    );
    step(
        "cargo clippy",
        cargo_with(
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--quiet",
                "--",
                "-D",
                "warnings",
            ],
            &[],
        ),
    );
    step(
        "cargo test",
        cargo_with(&["test", "--workspace", "--all-targets"], &[]),
    );
    step(
        "doc tests",
        cargo_with(&["test", "--workspace", "--doc"], &[]),
    );
    // The Python bindings are behind the `python` feature (off in the workspace, so no test
    // binary links libpython): linted here with it on, then built and tested by maturin and
    // pytest below.
    step(
        "cargo clippy (python bindings)",
        cargo_with(
            &[
                "clippy",
                "-p",
                "hts-python",
                "--features",
                "python",
                "--all-targets",
                "--quiet",
                "--",
                "-D",
                "warnings",
            ],
            &[],
        ),
    );
    // The fuzz targets compile against the libraries as they are now (they run on nightly in
    // `cargo xtask fuzz`; a type check needs only stable), so an API change cannot leave them
    // behind unnoticed.
    step(
        "fuzz targets compile",
        cargo_with(
            &[
                "check",
                "--manifest-path",
                "fuzz/Cargo.toml",
                "--bins",
                "--quiet",
            ],
            &[],
        ),
    );
    // Warnings are errors: the public API stays documented.
    step(
        "cargo doc",
        cargo_with(
            &["doc", "--workspace", "--no-deps", "--quiet"],
            &[("RUSTDOCFLAGS", "-D warnings")],
        ),
    );
    // The libraries package as they would be published (names, metadata, path dependencies
    // with versions, files); `--no-verify`: building each package again from its archive would
    // double the build for what `cargo test` has just compiled. Takes seconds.
    step(
        "publish dry-run",
        cargo_with(
            &[
                "publish",
                "--workspace",
                "--dry-run",
                "--no-verify",
                "--allow-dirty",
                "--quiet",
            ],
            &[],
        ),
    );
    let result = release_hts().and_then(|hts| {
        let ng = nginx::Nginx::start(&testkit::corpus_dir())?;
        conformance::run_corpus(&hts, Some(&ng.base_url()), &[], &[], "nginx")?;
        ng.check_bounded()
    });
    step("conformance nginx", result);
    step("python package (pytest)", crate::python::test(&[]));
    if failures.is_empty() {
        println!("==> all tests passed");
        Ok(())
    } else {
        Err(format!("failed: {}", failures.join(", ")))
    }
}
