//! `cargo xtask bench-local`: whole-file and region decoding of the benchmark BAM, `hts` against
//! `samtools view`, with 1 and 2 threads, as ratios from one run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

fn time_once(program: &Path, args: &[String]) -> Result<f64, String> {
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if !status.success() {
        return Err(format!(
            "{} {} failed ({status})",
            program.display(),
            args.join(" ")
        ));
    }
    Ok(start.elapsed().as_secs_f64())
}

fn median(program: &Path, args: &[String], runs: usize) -> Result<f64, String> {
    let mut v = Vec::new();
    for _ in 0..runs.max(1) {
        v.push(time_once(program, args)?);
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    Ok(v[v.len() / 2])
}

/// Prints a table of medians and the ratio samtools / hts (above 1: hts is faster).
pub fn run(
    hts: &Path,
    samtools: Option<&Path>,
    bam: &Path,
    runs: usize,
    cases: &[(String, Vec<String>)],
) -> Result<String, String> {
    let mut table = String::from(
        "| case | threads | hts | samtools | samtools / hts |\n|---|---|---|---|---|\n",
    );
    for (name, extra) in cases {
        for threads in [1usize, 2] {
            // -@ N means N threads besides the main one, for both tools.
            let mut args = vec![
                "view".to_string(),
                "-@".to_string(),
                (threads - 1).to_string(),
                bam.display().to_string(),
            ];
            args.extend(extra.iter().cloned());
            let ours = median(hts, &args, runs)?;
            let theirs = match samtools {
                Some(s) => Some(median(s, &args, runs)?),
                None => None,
            };
            let row = match theirs {
                Some(t) => format!(
                    "| {name} | {threads} | {ours:.2} s | {t:.2} s | {:.2}x |\n",
                    t / ours
                ),
                None => format!("| {name} | {threads} | {ours:.2} s | n/a | |\n"),
            };
            print!("{row}");
            table += &row;
        }
    }
    Ok(table)
}

pub const HELP: &str = "\
cargo xtask bench-local [--runs N] [--pairs N]
  Times whole-file and region decoding of the benchmark BAM (cargo xtask bench-data makes it),
  hts against samtools view, with 1 and 2 threads; medians of N runs (default 3), whole
  processes alternated in one run.";

pub fn cmd(args: &[String]) -> Result<(), String> {
    let bam = crate::bench_data::existing_bam(args)?;
    let hts = crate::release_hts()?;
    let samtools = crate::bench_remote::which("samtools");
    let runs = crate::flag_value(args, "--runs")
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let mut cases = vec![("whole file".to_string(), Vec::new())];
    for (name, regions) in crate::bench_data::cases(Some("r10,chr22"))? {
        cases.push((format!("regions {name}"), regions));
    }
    let table = run(&hts, samtools.as_deref(), &bam, runs, &cases)?;
    println!("\n{table}\n(cargo xtask bench-local, median of {runs})");
    Ok(())
}
