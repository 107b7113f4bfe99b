//! `cargo xtask fuzz`: the fuzz targets of `fuzz/` (cargo-fuzz, libFuzzer, nightly), each run
//! for a fixed time on seeds made from the conformance corpus, one at a time.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use testkit::tools::run_command;

use crate::{flag_value, root};

pub const HELP: &str = "\
cargo xtask fuzz [--seconds N] [--target T]
  Builds the fuzz targets of fuzz/ with cargo-fuzz on nightly (installing the nightly toolchain
  and cargo-fuzz first if missing) and runs each (or only T) for N seconds (default 60), one at a
  time on one core, seeded from the conformance corpus (fixtures/conformance*: data and
  malformed cases; the seeds are written to fuzz/seeds/). New inputs go to fuzz/corpus/T, crashes
  to fuzz/artifacts/T. Prints per target: seconds, executions, crashes. Fails if any crashed.";

/// The targets, in the order they run (`fuzz/fuzz_targets/T.rs`).
pub const TARGETS: [&str; 11] = [
    "bgzf_block",
    "bgzf_reader",
    "index_load",
    "bam_query",
    "bam_file",
    "bam_record",
    "region",
    "http_response",
    "cram_container",
    "cram_codec",
    "cram_records",
];

/// Seeds are cut to this size, and so are the inputs libFuzzer makes.
const MAX_LEN: usize = 64 * 1024;

struct Outcome {
    target: &'static str,
    seconds: f64,
    execs: Option<u64>,
    crashes: Vec<PathBuf>,
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    let seconds: u64 = match flag_value(args, "--seconds") {
        Some(s) => s
            .parse()
            .map_err(|_| format!("--seconds: not a number: {s}"))?,
        None => 60,
    };
    let targets: Vec<&'static str> = match flag_value(args, "--target") {
        Some(t) => vec![*TARGETS
            .iter()
            .find(|&&x| x == t)
            .ok_or_else(|| format!("no fuzz target '{t}' (targets: {})", TARGETS.join(", ")))?],
        None => TARGETS.to_vec(),
    };
    ensure_tools()?;
    let fuzz = root().join("fuzz");
    for t in &targets {
        let n = write_seeds(t, &fuzz.join("seeds").join(t))?;
        println!("==> {t}: {n} seeds");
    }
    run_command(
        Command::new("cargo")
            .args(["fmt", "--manifest-path", "fuzz/Cargo.toml", "--check"])
            .current_dir(root()),
    )?;
    // Release with debug assertions: an overflow that would wrap silently is a crash here.
    run(&["fuzz", "build", "-O", "-a"])?;
    let mut outcomes = Vec::new();
    for t in targets {
        outcomes.push(run_target(t, seconds, &fuzz)?);
    }
    println!(
        "\n{:<14} {:>8} {:>12} {:>8}",
        "target", "seconds", "executions", "crashes"
    );
    for o in &outcomes {
        let execs = o.execs.map_or("?".to_string(), |n| n.to_string());
        println!(
            "{:<14} {:>8.0} {:>12} {:>8}",
            o.target,
            o.seconds,
            execs,
            o.crashes.len()
        );
    }
    let crashed: Vec<String> = outcomes
        .iter()
        .flat_map(|o| o.crashes.iter().map(|c| c.display().to_string()))
        .collect();
    if crashed.is_empty() {
        Ok(())
    } else {
        Err(format!("crashes: {}", crashed.join(", ")))
    }
}

/// Nightly and cargo-fuzz, installed if missing (a fresh CI machine has neither).
fn ensure_tools() -> Result<(), String> {
    let nightly = Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !nightly {
        println!("==> rustup toolchain install nightly --profile minimal");
        run_command(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))?;
    }
    let have_fuzz = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_fuzz {
        println!("==> cargo install cargo-fuzz --locked");
        run_command(Command::new("cargo").args(["install", "cargo-fuzz", "--locked"]))?;
    }
    Ok(())
}

/// `cargo +nightly ARGS` in the workspace root (cargo-fuzz finds `fuzz/` there).
fn run(args: &[&str]) -> Result<(), String> {
    println!("==> cargo +nightly {}", args.join(" "));
    run_command(
        Command::new("cargo")
            .arg("+nightly")
            .args(args)
            .current_dir(root()),
    )
}

fn run_target(target: &'static str, seconds: u64, fuzz: &Path) -> Result<Outcome, String> {
    let corpus = fuzz.join("corpus").join(target);
    let seeds = fuzz.join("seeds").join(target);
    let artifacts = fuzz.join("artifacts").join(target);
    std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    let before = crash_files(&artifacts);
    println!("==> fuzz {target} for {seconds} s");
    let started = Instant::now();
    let out = Command::new("cargo")
        .current_dir(root())
        .args(["+nightly", "fuzz", "run", "-O", "-a", target])
        .arg(&corpus)
        .arg(&seeds)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-max_len={MAX_LEN}"))
        .args(["-timeout=20", "-rss_limit_mb=2048", "-print_final_stats=1"])
        .output()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    let secs = started.elapsed().as_secs_f64();
    // bam_query's index file, one per fuzzing process.
    if let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) {
        for e in dir.flatten() {
            if e.file_name().to_string_lossy().starts_with("hts-fuzz-") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    let log = String::from_utf8_lossy(&out.stderr);
    let execs = log
        .lines()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .and_then(|n| n.trim().parse().ok());
    let crashes: Vec<PathBuf> = crash_files(&artifacts)
        .into_iter()
        .filter(|c| !before.contains(c))
        .collect();
    if !out.status.success() {
        // The end of libFuzzer's report: the panic, the input, how to reproduce it.
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        for line in tail.iter().rev() {
            println!("   {line}");
        }
        if crashes.is_empty() {
            return Err(format!("cargo fuzz run {target} failed ({})", out.status));
        }
    }
    Ok(Outcome {
        target,
        seconds: secs,
        execs,
        crashes,
    })
}

fn crash_files(dir: &Path) -> HashSet<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| !n.starts_with('.'))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Writes the seeds of `target` into `dir` (replacing what was there); returns their number.
fn write_seeds(target: &str, dir: &Path) -> Result<usize, String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let seeds = crate::fuzz_seeds::seeds(target)?;
    let mut seen = HashSet::new();
    let mut n = 0;
    for (name, mut bytes) in seeds {
        bytes.truncate(MAX_LEN);
        if bytes.is_empty() || !seen.insert(bytes.clone()) {
            continue;
        }
        let path = dir.join(name.replace('/', "_"));
        std::fs::write(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        n += 1;
    }
    Ok(n)
}
