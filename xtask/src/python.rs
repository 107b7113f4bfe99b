//! The Python package (`crates/python`): its wheel built with maturin into the test
//! environment (`~/.cache/hts-tools`, testkit's `tools`), and its pytest suite run against the
//! conformance and tabix corpora, locally, over the test HTTP server (also through a slow
//! link, for the GIL test) and over S3 (s3s-fs), with pysam 0.24.1 as the oracle.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use testkit::corpus::apply_env;
use testkit::s3::{self, Object, S3Stack};
use testkit::{Link, Server};

use crate::root;

pub const HELP: &str = "\
cargo xtask python-test [PYTEST ARGS...]
  Builds the Python package's wheel (maturin, a debug build sharing cargo test's artifacts)
  into the test environment under ~/.cache/hts-tools (pysam 0.24.1, pytest, pyarrow, polars,
  pandas, DuckDB, oxbow; installed from PyPI on first use), starts the test HTTP server over
  fixtures/ (and a second one behind a 150 ms link), s3s-fs with the conformance corpus and
  the tabix corpus, and runs pytest on crates/python/tests with the rest of the arguments.
  `cargo xtask test` runs it with none.";

/// How the wheel is built.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// Cargo's dev profile: the libraries' artifacts are those `cargo test` made.
    Dev,
    /// Release, for benchmarks.
    Release,
}

/// The test environment with the package's wheel, built now, installed in it; its folder.
pub fn venv_with_wheel(build: Build) -> Result<PathBuf, String> {
    let venv = testkit::tools::python_test_venv()?;
    let (profile, dir) = match build {
        Build::Dev => ("dev", "dev"),
        Build::Release => ("release", "release"),
    };
    let out = root().join("target/wheels").join(dir);
    let _ = std::fs::remove_dir_all(&out);
    let manifest = root().join("crates/python/Cargo.toml");
    println!("==> maturin build --profile {profile}");
    testkit::tools::run_command(
        Command::new(venv.join("bin/maturin"))
            .args(["build", "--quiet", "--profile", profile, "--manifest-path"])
            .arg(&manifest)
            .arg("--out")
            .arg(&out)
            .arg("--interpreter")
            .arg(venv.join("bin/python"))
            .current_dir(root()),
    )?;
    let wheel = std::fs::read_dir(&out)
        .map_err(|e| format!("{}: {e}", out.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("maturin left no wheel in {}", out.display()))?;
    testkit::tools::run_command(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(["--force-reinstall", "--no-deps"])
            .arg(&wheel),
    )?;
    Ok(venv)
}

/// The S3 objects of the tests: the conformance corpus (`data/`, `malformed/`), the tabix
/// corpus (`tabix/`) and the CRAM corpus with its references (`cram/`).
fn objects(fixtures: &Path) -> Result<Vec<Object>, String> {
    let mut objects = s3::corpus_objects(&fixtures.join("conformance"))?;
    for folder in ["tabix", "cram"] {
        let dir = fixtures.join(folder);
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_file() {
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                objects.push(Object {
                    key: format!("{folder}/{}", name.unwrap_or_default()),
                    source: path,
                });
            }
        }
    }
    Ok(objects)
}

/// Runs pytest on the package's tests with `args`, the servers running.
pub fn test(args: &[String]) -> Result<(), String> {
    let venv = venv_with_wheel(Build::Dev)?;
    let fixtures = root().join("fixtures");
    let http = Server::start(&fixtures)?;
    // Every response 150 ms late: a region query is a few round trips, so two queries at
    // once take about as long as one only when neither holds the GIL while it waits.
    let slow_link = Link {
        latency: Duration::from_millis(150),
        ..Link::default()
    };
    let slow = Server::start_with(&fixtures, 0, slow_link)?;
    let stack = S3Stack::start(&[("corpus", objects(&fixtures)?)], Link::default())?;
    let cache = std::env::temp_dir().join(format!("hts-python-tests-{}", std::process::id()));
    std::fs::create_dir_all(&cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let mut command = Command::new(venv.join("bin/python"));
    apply_env(&mut command, &stack.env(s3::SECRET_KEY));
    command
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root().join("crates/python/tests"))
        .args(args)
        .env("HTS_TEST_FIXTURES", &fixtures)
        .env("HTS_TEST_HTTP", http.url(""))
        .env("HTS_TEST_SLOW_HTTP", slow.url(""))
        .env("HTS_TEST_S3_BUCKET", "corpus")
        .env("XDG_CACHE_HOME", &cache)
        .current_dir(root());
    println!("==> pytest crates/python/tests");
    let result = testkit::tools::run_command(&mut command);
    let _ = std::fs::remove_dir_all(&cache);
    result
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    test(args)
}
