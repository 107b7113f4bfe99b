//! Test support for the `hts` workspace (a dev-dependency, never published):
//!
//! - [`Server`]: the one HTTP/1.1 test server (tower-http's `ServeDir` on 127.0.0.1) with a
//!   request log, an emulated link for benchmarks, and [`Fault`]s for the remote fault tests;
//! - [`RawServer`]: a small file server on plain TCP for the protocol faults hyper will not
//!   produce ([`RawFault`]: cut chunked bodies, lying lengths, endless headers, ...);
//! - [`TlsFront`]: HTTPS in front of a test server, with a self-signed certificate;
//! - [`peak`]: a program's peak resident memory, for the memory-bound tests;
//! - [`builders`]: BGZF and BAM bytes written without the crates under test;
//! - [`corpus`]: the conformance corpus runner, by the rules of the corpus's `run.sh`;
//! - [`s3`]: a real S3 (s3s-fs, which checks signatures) behind the server in proxy mode, and
//!   boto3 for pre-signed URLs, both installed on first use;
//! - [`layering`]: the check that each crate names only the crates below it;
//! - [`tools`]: tools from package registries (Snakemake from PyPI), installed on first use;
//! - [`cohort`]: a synthetic cohort of served BAMs for the Snakemake workflow, and its runs;
//! - [`Rng`]: a seeded generator for generated inputs.
//!
//! It depends on none of the project's crates, so every crate can use it in its tests.

pub mod builders;
pub mod children;
pub mod cohort;
pub mod corpus;
pub mod layering;
pub mod nginx;
pub mod peak;
mod raw;
mod rng;
pub mod s3;
mod server;
mod tls;
pub mod tools;

pub use raw::{RawEntry, RawFault, RawServer};
pub use rng::Rng;
pub use server::{
    least_time, Chaos, ConnId, Fault, Link, LogEntry, RateLimit, Refusal, Rule, Server, Summary,
};
pub use tls::TlsFront;

use std::path::{Path, PathBuf};

/// The workspace root (the folder holding `Cargo.toml`, `crates/` and `fixtures/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The five regions of the demo and of the remote checks, on the corpus's `data/rand.bam`.
pub const FIVE_REGIONS: [&str; 5] = [
    "chr1:10000-10500",
    "chr1:150000-150600",
    "chr2:5000-5400",
    "chr3:20000-20100",
    "chrM:100-300",
];

/// A cache folder of this test process's own, for `XDG_CACHE_HOME` of the programs it runs:
/// tests never read or fill the user's cache, and entries of one process never meet another's.
pub fn cache_home() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("testkit-cache-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// A command for the program at `path` with its cache in [`cache_home`].
pub fn command(path: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut c = std::process::Command::new(path);
    c.env("XDG_CACHE_HOME", cache_home());
    // With no REF_PATH, a CRAM reference is asked of the EBI's MD5 server, as htslib asks it:
    // no test does that (those that look references up set their own).
    c.env("REF_PATH", "/nonexistent/hts-test-ref-path");
    c
}

/// The project's copy of the samtools-made conformance corpus.
pub fn corpus_dir() -> PathBuf {
    workspace_root().join("fixtures/conformance")
}

/// The `hts` binary, for the integration tests of the crate that builds it: beside the folder
/// of the test executable (`target/debug/deps/..`), where Cargo puts a package's binaries
/// before it runs the package's integration tests.
pub fn hts() -> &'static Path {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test executable's path");
        let dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>/deps");
        let hts = dir.join(format!("hts{}", std::env::consts::EXE_SUFFIX));
        assert!(
            hts.is_file(),
            "no hts binary at {} (run the CLI's tests: cargo test -p cli)",
            hts.display()
        );
        hts
    })
}

/// A lock the tests of one test binary take to run one at a time, for what they share across
/// threads: a global allocator's counters, the requests a server logs, a transport's process-wide
/// state. A test that panicked while holding it does not fail the others.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}
