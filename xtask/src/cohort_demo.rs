//! `cargo xtask cohort-demo`: the Snakemake cohort workflow (`workflows/cohort`) over synthetic
//! BAMs served on 127.0.0.1 through an emulated link, and with `--compare` the same regions
//! fetched by shell-style loops over samtools and over hts, side by side.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use testkit::cohort::{self, Cohort, Setup, Spec};
use testkit::{Link, Server};

use crate::{flag_value, release_hts, root};

pub const HELP: &str = "\
cargo xtask cohort-demo [--samples N] [--regions N] [--pairs N] [--profile P] [--jobs N]
                        [--batch-size N] [--compare]
  Installs Snakemake from PyPI into ~/.cache/hts-tools (once), makes N synthetic BAMs (default
  50; gen_bam.py --pairs N over chromosomes 21 and 22, default 2000000, 60% of it per sample)
  with their BAI or CSI in target/cohort-demo, serves them on 127.0.0.1 through the link
  profile (ec2 by default: 35 MB/s, 20 ms per response; home; loopback), and runs
  workflows/cohort with the release hts and -j N (default 4) over --regions N (default 40).
  Then the same workflow in batches (--batch-size N samples a job, default the samples / jobs
  rounded up, so every job slot has a batch: one `hts view --manifest` per job), against the
  same server, twice: with the per-sample run's 6 requests in flight per job, and with the
  workflow's default of 16; and the ratios to the per-sample run.
  Prints the wall time, the server's requests and bytes, and the cost per sample.
  --compare: also the same regions of every sample by a loop over `samtools view -b
  --write-index -X URL URL.bai REGIONS`, one sample after another and 4 at a time, and the same
  two loops over hts (no Snakemake).";

/// What the server saw over one way of fetching the cohort.
struct Measured {
    label: String,
    wall: f64,
    requests: usize,
    bytes: u64,
    connections: u64,
}

fn measure(
    server: &Server,
    label: &str,
    run: impl FnOnce() -> Result<(), String>,
) -> Result<Measured, String> {
    server.reset();
    let started = Instant::now();
    run()?;
    let wall = started.elapsed().as_secs_f64();
    let s = server.summary();
    Ok(Measured {
        label: label.to_string(),
        wall,
        requests: s.requests,
        bytes: s.written,
        connections: s.connections,
    })
}

fn number(args: &[String], name: &str, default: u64) -> Result<u64, String> {
    flag_value(args, name).map_or(Ok(default), |v| {
        v.parse()
            .map_err(|_| format!("{name} needs a number, got '{v}'"))
    })
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    let spec = Spec {
        samples: number(args, "--samples", 50)? as usize,
        regions: number(args, "--regions", 40)? as usize,
        pairs: number(args, "--pairs", 2_000_000)?,
        seed: 1,
    };
    let jobs = number(args, "--jobs", 4)? as usize;
    let profile = flag_value(args, "--profile").unwrap_or("ec2");
    let link = Link::profile(profile).ok_or_else(|| format!("unknown profile '{profile}'"))?;
    let hts = release_hts()?;
    let snakemake = testkit::tools::snakemake()?;
    let demo = root().join("target/cohort-demo");
    println!("==> {} synthetic BAMs in {}", spec.samples, demo.display());
    let cohort = cohort::make(&demo, &spec)?;
    let server = Server::start_with(&cohort.dir, 0, link)?;
    let batch_size = number(
        args,
        "--batch-size",
        spec.samples.div_ceil(jobs.max(1)) as u64,
    )?;
    let work = demo.join(format!("run-{profile}"));
    let _ = std::fs::remove_dir_all(&work);
    let mut setup = Setup {
        hts: hts.clone(),
        base_url: server.base(),
        threads: 1,
        fetchers: 6,
        retries: 3,
        retry_delay: 10.0,
        region_file: false,
        // Today's workflow first: one job per sample.
        batch_size: 1,
    };
    cohort::write_setup(&work, &cohort, &setup)?;
    println!(
        "==> snakemake -j {jobs}: {} samples x {} regions, link {profile}",
        spec.samples, spec.regions
    );
    let mut rows = Vec::new();
    rows.push(measure(
        &server,
        &format!("snakemake -j {jobs}, hts"),
        || workflow(&snakemake, &work, jobs),
    )?);
    println!(
        "    outputs in {}/out (summary.tsv, bams/, logs/)",
        work.display()
    );
    let per_sample = per_sample_cost(&work.join("out/summary.tsv"))?;
    // The same workflow in batches: one `hts view --manifest` per job, first with the same
    // requests in flight per job as above, then with the workflow's default (config.yaml).
    setup.batch_size = batch_size as usize;
    for fetchers in [6, 16] {
        let batched = demo.join(format!("run-{profile}-batched-{fetchers}"));
        let _ = std::fs::remove_dir_all(&batched);
        setup.fetchers = fetchers;
        cohort::write_setup(&batched, &cohort, &setup)?;
        let label = format!("snakemake -j {jobs}, batch {batch_size}, fetchers {fetchers}");
        println!("==> {label}");
        rows.push(measure(&server, &label, || {
            workflow(&snakemake, &batched, jobs)
        })?);
        println!(
            "    outputs in {}/out (summary.tsv, bams/, logs/)",
            batched.display()
        );
        // Batches change how the samples are fetched, not what: the same records.
        if records(&batched.join("out/summary.tsv"))? != records(&work.join("out/summary.tsv"))? {
            return Err(format!(
                "{label}: summary.tsv's records differ from the per-sample run's"
            ));
        }
    }
    let notes = if args.iter().any(|a| a == "--compare") {
        compare(&hts, &cohort, &server, &demo, jobs, &mut rows)?
    } else {
        Vec::new()
    };
    print_table(&spec, profile, &link, &rows, per_sample, &notes);
    for batched in &rows[1..3] {
        println!(
            "{}: {:.1}x the per-sample workflow's speed ({:.2} s against {:.2} s)",
            batched.label,
            rows[0].wall / batched.wall.max(1e-9),
            batched.wall,
            rows[0].wall
        );
    }
    Ok(())
}

/// One run of the workflow set up in `work`, bounded to an hour.
fn workflow(snakemake: &Path, work: &Path, jobs: usize) -> Result<(), String> {
    let limit = std::time::Duration::from_secs(3600);
    let run = cohort::run_workflow(snakemake, work, jobs, limit, &[], &[])?;
    if run.success {
        Ok(())
    } else {
        Err(format!(
            "the workflow failed; see {}/snakemake.out",
            work.display()
        ))
    }
}

/// `--compare`: the same queries as a loop of processes, hts and samtools, one at a time and
/// `jobs` at a time; a row each, and a note for each sample that failed once.
fn compare(
    hts: &Path,
    cohort: &Cohort,
    server: &Server,
    demo: &Path,
    jobs: usize,
    rows: &mut Vec<Measured>,
) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    let base = server.base();
    for (program, name) in [(hts, "hts"), (Path::new("samtools"), "samtools")] {
        for parallel in [1, jobs] {
            let out = demo.join(format!("loop-{name}-{parallel}"));
            let _ = std::fs::remove_dir_all(&out);
            std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
            let label = match parallel {
                1 => format!("loop, {name}"),
                n => format!("loop x{n}, {name}"),
            };
            println!("==> {label}");
            let mut failed = Vec::new();
            rows.push(measure(server, &label, || {
                failed = loop_over(program, cohort, &base, &out, parallel)?;
                Ok(())
            })?);
            for (sample, said) in &failed {
                let asked: String = server
                    .log()
                    .iter()
                    .filter(|e| e.path.starts_with(&format!("/{sample}.")))
                    .map(|e| format!("{} {:?} -> {}\n", e.connection, e.range, e.status))
                    .collect();
                let requests = out.join(format!("{sample}.requests"));
                std::fs::write(&requests, asked).map_err(|e| e.to_string())?;
                notes.push(format!(
                    "{label}: {sample} failed once, then passed: {said} (requests: {})",
                    requests.display()
                ));
            }
        }
    }
    Ok(notes)
}

/// The table of rows, hts's own cost per sample, and the notes.
fn print_table(
    spec: &Spec,
    profile: &str,
    link: &Link,
    rows: &[Measured],
    per_sample: (f64, f64, f64),
    notes: &[String],
) {
    println!();
    println!(
        "{} samples x {} regions, link {profile} ({} per response):",
        spec.samples,
        spec.regions,
        format_args!("{} ms", link.latency.as_millis())
    );
    println!(
        "{:<38} {:>9} {:>9} {:>12} {:>12}",
        "", "wall s", "requests", "bytes sent", "connections"
    );
    for m in rows {
        println!(
            "{:<38} {:>9.2} {:>9} {:>12} {:>12}",
            m.label, m.wall, m.requests, m.bytes, m.connections
        );
    }
    println!(
        "hts per sample (its own counts, summary.tsv): {:.1} requests, {:.0} bytes received, \
         {:.2} s",
        per_sample.0, per_sample.1, per_sample.2
    );
    for note in notes {
        println!("{note}");
    }
}

/// Mean requests, bytes and wall seconds per sample from the workflow's table (the cost
/// columns are the sample's, repeated on each of its regions).
fn per_sample_cost(table: &Path) -> Result<(f64, f64, f64), String> {
    let text = std::fs::read_to_string(table).map_err(|e| format!("{}: {e}", table.display()))?;
    let mut seen = std::collections::BTreeMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if let [sample, _, _, bytes, requests, _, wall] = f[..] {
            let num = |s: &str| s.parse::<f64>().unwrap_or(0.0);
            seen.insert(sample.to_string(), (num(requests), num(bytes), num(wall)));
        }
    }
    let n = seen.len().max(1) as f64;
    let sum = seen
        .values()
        .fold((0.0, 0.0, 0.0), |a, v| (a.0 + v.0, a.1 + v.1, a.2 + v.2));
    Ok((sum.0 / n, sum.1 / n, sum.2 / n))
}

/// The (sample, region, records) of the workflow's table.
fn records(table: &Path) -> Result<Vec<(String, String, String)>, String> {
    let text = std::fs::read_to_string(table).map_err(|e| format!("{}: {e}", table.display()))?;
    Ok(text
        .lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let field = |i: usize| f.get(i).copied().unwrap_or_default().to_string();
            (field(0), field(1), field(2))
        })
        .collect())
}

/// `PROGRAM view -b --write-index -o OUT/S.bam -X URL INDEX-URL REGIONS` for every sample,
/// `parallel` at a time, each run in `out` (htslib saves a downloaded index there). A run that
/// fails is run once more, as a person at a shell would; the samples that needed it come back
/// with what the program said the first time.
fn loop_over(
    program: &Path,
    cohort: &Cohort,
    base: &str,
    out: &Path,
    parallel: usize,
) -> Result<Vec<(String, String)>, String> {
    let next = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    let specs = cohort.region_specs();
    let one = |sample: &str, attempt: u32| -> Result<(), String> {
        let index = cohort.index(sample);
        let index = index
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let err_path = out.join(format!("{sample}.err{attempt}"));
        let err = std::fs::File::create(&err_path).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(program);
        cmd.args(["view", "-b", "--write-index", "-o"])
            .arg(format!("{sample}.bam"))
            .arg("-X")
            .arg(format!("{base}/{sample}.bam"))
            .arg(format!("{base}/{index}"))
            .args(&specs)
            .current_dir(out)
            // hts starts cold, as samtools does in a new folder.
            .env("XDG_CACHE_HOME", out.join(".cache"))
            .stderr(err);
        testkit::tools::run_command(&mut cmd).map_err(|e| {
            let said = std::fs::read_to_string(&err_path).unwrap_or_default();
            format!("{e}: {}", said.lines().collect::<Vec<_>>().join(" / "))
        })
    };
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..parallel.max(1))
            .map(|_| {
                scope.spawn(|| -> Result<(), String> {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(sample) = cohort.samples.get(i) else {
                            return Ok(());
                        };
                        if let Err(said) = one(sample, 1) {
                            one(sample, 2).map_err(|e| format!("{sample}, twice: {e}"))?;
                            if let Ok(mut f) = failed.lock() {
                                f.push((sample.clone(), said));
                            }
                        }
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err("a loop thread panicked".into()))
            })
            .collect::<Result<Vec<()>, String>>()
    })?;
    Ok(failed.into_inner().unwrap_or_default())
}
