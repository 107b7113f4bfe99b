//! Test support for the `hts` workspace (a dev-dependency, never published):
//!
//! - [`Server`]: the one HTTP/1.1 test server (tower-http's `ServeDir` on 127.0.0.1) with a
//!   request log, an emulated link for benchmarks, and [`Fault`]s for the remote fault tests;
//! - [`builders`]: BGZF and BAM bytes written without the crates under test;
//! - [`corpus`]: the conformance corpus runner, by the rules of the corpus's `run.sh`;
//! - [`layering`]: the check that each crate names only the crates below it.
//!
//! It depends on none of the project's crates, so every crate can use it in its tests.

pub mod builders;
pub mod corpus;
pub mod layering;
mod server;

pub use server::{ConnId, Fault, Link, LogEntry, Rule, Server, Summary};

use std::path::{Path, PathBuf};

/// The workspace root (the folder holding `Cargo.toml`, `crates/` and `fixtures/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The project's copy of the samtools-made conformance corpus.
pub fn corpus_dir() -> PathBuf {
    workspace_root().join("fixtures/conformance")
}
