//! `cargo xtask bench-local --format cram`: `hts view` against `samtools view` (1.16) decoding
//! the benchmark CRAM to SAM with the same local reference (`-T`), as whole processes
//! alternated in one run, each writing into a pipe read by another process (`cat`).

use std::path::Path;

use crate::bench_local::{load_average, output_differs, time_once, verify_once, Sample, Sink};

/// One comparison: the same arguments to both tools.
struct Case {
    name: String,
    threads: usize,
    regions: Vec<String>,
}

impl Case {
    /// `view -@ N -T REF FILE REGION...`: `-@ N` is N threads besides the main one.
    fn args(&self, cram: &Path, fasta: &Path) -> Vec<String> {
        let mut args = vec![
            "view".to_string(),
            "-@".to_string(),
            (self.threads - 1).to_string(),
            "-T".to_string(),
            fasta.display().to_string(),
            cram.display().to_string(),
        ];
        args.extend(self.regions.iter().cloned());
        args
    }
}

/// The cases: decoding to SAM (chromosome 1: 2.2 M records, a twelfth of the file, read from
/// its first container to its last; the whole file with `--cases 'whole file'`) at 1 and 2
/// threads, then the region queries of `regions.txt` (r5, chr22) at 1 thread.
fn cases(threads: &[usize]) -> Result<Vec<Case>, String> {
    let mut out = Vec::new();
    for (name, regions) in [("view 1 (SAM)", vec!["1".to_string()])]
        .into_iter()
        .chain([("view whole file (SAM)", Vec::new())])
    {
        for &t in threads {
            out.push(Case {
                name: name.to_string(),
                threads: t,
                regions: regions.clone(),
            });
        }
    }
    for (name, regions) in crate::bench_data::cases(Some("r5,chr22"))? {
        out.push(Case {
            name: format!("view {name} (SAM)"),
            threads: 1,
            regions,
        });
    }
    Ok(out)
}

/// Runs the cases (those whose names contain a word of `only`; by default all but the whole
/// file), checking outputs first, and returns the table (printed row by row).
pub fn run(
    hts: &Path,
    runs: usize,
    threads: &[usize],
    only: Option<&str>,
    args: &[String],
) -> Result<String, String> {
    let (cram, fasta) = crate::bench_cram::existing(args)?;
    let samtools = crate::bench_remote::which("samtools").ok_or("samtools is not on PATH")?;
    let mut cases = cases(threads)?;
    match only {
        Some(only) => {
            let wanted: Vec<&str> = only.split(',').collect();
            cases.retain(|c| wanted.iter().any(|w| c.name.contains(w)));
        }
        None => cases.retain(|c| !c.name.contains("whole file")),
    }
    println!("load average before: {}", load_average());
    let mut table = String::from(
        "| case | threads | hts, pipe | samtools, pipe | hts / samtools | output \
         | CPU hts / samtools | peak RSS hts / samtools |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut mismatches = Vec::new();
    for case in &cases {
        let a = case.args(&cram, &fasta);
        let (mine, rss_mine) = verify_once(hts, &a)?;
        let (theirs, rss_theirs) = verify_once(&samtools, &a)?;
        let output = if mine == theirs {
            "identical"
        } else {
            output_differs(&mut mismatches, &case.name, case.threads, &mine, &theirs)
        };
        let mut samples: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..runs.max(1) {
            samples[0].push(time_once(hts, &a, Sink::Pipe)?);
            samples[1].push(time_once(&samtools, &a, Sink::Pipe)?);
        }
        let row = crate::bench_local_vcf::pair_row(
            &case.name,
            case.threads,
            output,
            &samples,
            [rss_mine, rss_theirs],
        );
        print!("{row}");
        table += &row;
    }
    crate::bench_local::finish(table, &mismatches)
}

/// `cargo xtask bench-local --format cram [--runs N] [--threads 1,2] [--cases WORD,..]`.
pub fn cmd(args: &[String]) -> Result<(), String> {
    let hts = crate::release_hts()?;
    let runs = crate::flag_value(args, "--runs")
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let threads = crate::bench_local::threads_arg(args)?;
    let table = run(
        &hts,
        runs,
        &threads,
        crate::flag_value(args, "--cases"),
        args,
    )?;
    println!(
        "\n{table}\n(cargo xtask bench-local {}: median of {runs})",
        args.join(" ")
    );
    Ok(())
}
