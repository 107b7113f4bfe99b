//! `cargo xtask conformance`: the corpus on a chosen `hts` binary, locally, over the test server
//! or over nginx (the same runner `cargo test` uses, from `testkit`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use testkit::corpus::{self, Run};

use crate::{flag_value, release_hts};
use testkit::nginx;

pub const HELP: &str = "\
cargo xtask conformance [--http|--nginx] [--bin PATH] [--fetchers N] [ID_SUBSTRING ...]
  Runs the conformance corpus (fixtures/conformance, 150 cases whose goldens came from
  samtools 1.16.1) on target/release/hts (or --bin), by the rules of its run.sh.
  --http      every data path rewritten to a URL on the in-process test server
  --nginx     the same on nginx (must be installed)
  --fetchers  passed to hts view (remote runs)
  ID_SUBSTRING  only cases whose id contains one of these";

fn timeout() -> Duration {
    let secs = std::env::var("CONFORMANCE_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    Duration::from_secs(secs)
}

/// Runs the corpus; an error unless every selected case passed.
pub fn run_corpus(
    hts: &Path,
    base_url: Option<&str>,
    filter: &[String],
    extra: &[String],
    label: &str,
) -> Result<(), String> {
    println!("==> conformance ({label})");
    let dir = testkit::corpus_dir();
    let report = corpus::run(&Run {
        program: hts,
        dir: &dir,
        base_url,
        filter,
        timeout: timeout(),
        extra_args: extra,
        env: &[],
    })?;
    for line in &report.failures {
        println!("{line}");
    }
    println!("{}", report.summary());
    if report.failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "conformance ({label}): {} case(s) failed",
            report.failures.len()
        ))
    }
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    let mut mode = "local";
    let mut bin: Option<PathBuf> = None;
    let mut filter = Vec::new();
    let mut extra = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--http" => mode = "http",
            "--nginx" => mode = "nginx",
            "--bin" => {
                i += 1;
                bin = Some(PathBuf::from(args.get(i).ok_or("--bin needs a path")?));
            }
            "--fetchers" => {
                let n = flag_value(args, "--fetchers").ok_or("--fetchers needs a number")?;
                extra.extend(["--fetchers".to_string(), n.to_string()]);
                i += 1;
            }
            other => filter.push(other.to_string()),
        }
        i += 1;
    }
    let hts = match bin {
        Some(b) => b
            .canonicalize()
            .map_err(|e| format!("{}: {e}", b.display()))?,
        None => release_hts()?,
    };
    match mode {
        "http" => {
            let server = testkit::Server::start(&testkit::corpus_dir())?;
            run_corpus(&hts, Some(&server.base()), &filter, &extra, "test server")
        }
        "nginx" => {
            let ng = nginx::Nginx::start(&testkit::corpus_dir())?;
            run_corpus(&hts, Some(&ng.base_url()), &filter, &extra, "nginx")
        }
        _ => run_corpus(&hts, None, &filter, &extra, "local"),
    }
}
