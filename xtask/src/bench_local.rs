//! `cargo xtask bench-local`: local decoding of the benchmark BAM by `hts`, `samtools view`
//! and (for counts) a noodles-bam program, as whole processes alternated in one run.
//!
//! For each case and thread count, one untimed pass checks that the outputs agree (counts
//! compared, SAM text compared by a digest of the whole stream; it also warms the page cache and
//! takes each tool's peak resident memory), then `runs` rounds time each tool in turn, twice:
//! its output read from a pipe by another process (`cat`, as a user's `| samtools sort` or
//! `| awk` would), and written to `/dev/null`. The table gives medians of wall time, the ratios
//! `hts / other` in both (below 1: `hts` is faster), CPU time (user + system, all threads, into
//! the pipe) and peak resident memory. Start-up cases (`--version`, a header, one small region
//! of a small file) take a few milliseconds, so they run more rounds.

use std::path::{Path, PathBuf};

pub(crate) use crate::bench_process::{time_once, verify_once, Output, Sample, Sink};

/// One benchmark case.
pub struct Case {
    pub name: String,
    /// Options placed before the file (`-c`).
    pub options: Vec<String>,
    /// Regions placed after the file.
    pub regions: Vec<String>,
    /// Another file than the benchmark BAM (the start-up cases' small one).
    pub file: Option<PathBuf>,
    /// `--version` instead of `view`.
    pub version: bool,
}

impl Case {
    fn view(name: &str, options: &[&str], regions: Vec<String>) -> Case {
        Case {
            name: name.to_string(),
            options: options.iter().map(|o| o.to_string()).collect(),
            regions,
            file: None,
            version: false,
        }
    }

    fn counts(&self) -> bool {
        self.options.iter().any(|o| o == "-c")
    }

    /// Start-up cases: one thread, and more rounds.
    fn startup(&self) -> bool {
        self.version || self.file.is_some()
    }

    /// The command line after the program's name, for `hts` and `samtools`.
    fn args(&self, bam: &Path, threads: usize) -> Vec<String> {
        if self.version {
            return vec!["--version".to_string()];
        }
        // -@ N means N threads besides the main one, for every tool.
        let mut args = vec!["view".to_string()];
        if !self.startup() {
            args.extend(["-@".to_string(), (threads - 1).to_string()]);
        }
        args.extend(self.options.iter().cloned());
        args.push(self.file.as_deref().unwrap_or(bam).display().to_string());
        args.extend(self.regions.iter().cloned());
        args
    }

    /// The noodles program's command line, for the counts it can make.
    fn noodles_args(&self, bam: &Path, threads: usize) -> Option<Vec<String>> {
        // Its region queries are single-threaded.
        if !self.counts() || !(self.regions.is_empty() || threads == 1) {
            return None;
        }
        let mut args = vec!["-@".to_string(), (threads - 1).to_string()];
        args.push(self.file.as_deref().unwrap_or(bam).display().to_string());
        args.extend(self.regions.iter().cloned());
        Some(args)
    }
}

/// The programs compared; `noodles` runs only in count cases.
pub struct Tools {
    pub hts: PathBuf,
    pub samtools: PathBuf,
    pub noodles: Option<PathBuf>,
}

/// Records a mismatch of hts's output with the other tool's for case `name` at `threads`, and
/// says what the table shows for it.
pub(crate) fn output_differs(
    mismatches: &mut Vec<String>,
    name: &str,
    threads: usize,
    mine: &Output,
    theirs: &Output,
) -> &'static str {
    mismatches.push(format!(
        "{name} ({threads} threads): hts's output differs ({} vs {} bytes)",
        mine.bytes, theirs.bytes
    ));
    "DIFFERS (void)"
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_string())
}

/// One tool in one case: its command line and what was measured.
struct Entry<'a> {
    program: &'a Path,
    args: Vec<String>,
    pipe: Vec<Sample>,
    null: Vec<Sample>,
    max_rss_kib: u64,
}

impl Entry<'_> {
    fn wall(&self, sink: Sink) -> f64 {
        let samples = if sink == Sink::Pipe {
            &self.pipe
        } else {
            &self.null
        };
        median(samples.iter().map(|s| s.wall).collect())
    }

    fn cpu(&self) -> f64 {
        median(self.pipe.iter().map(|s| s.cpu).collect())
    }
}

/// A time in the unit that suits it.
fn time(seconds: f64) -> String {
    if seconds < 0.1 {
        format!("{:.1} ms", seconds * 1e3)
    } else {
        format!("{seconds:.2} s")
    }
}

pub const TABLE_HEAD: &str = "| case | threads | hts, pipe | samtools, pipe | hts / samtools, \
    pipe | hts / samtools, /dev/null | noodles, pipe | hts / noodles, pipe | hts / noodles, \
    /dev/null | CPU hts / samtools / noodles | peak RSS hts / samtools / noodles |\n\
    |---|---|---|---|---|---|---|---|---|---|---|\n";

/// The table row of one case at one thread count; `e`: hts, samtools and maybe noodles.
fn row(case: &Case, threads: usize, e: &[Entry]) -> String {
    let (hts, sam) = (&e[0], &e[1]);
    let ratio = |other: &Entry, sink| format!("{:.2}", hts.wall(sink) / other.wall(sink));
    let dash = || "—".to_string();
    let n = e.get(2);
    let cpu = |x: &Entry| {
        if case.startup() {
            format!("{:.1}", x.cpu() * 1e3)
        } else {
            format!("{:.2}", x.cpu())
        }
    };
    let mib = |x: &Entry| format!("{:.1}", x.max_rss_kib as f64 / 1024.0);
    format!(
        "| {} | {threads} | {} | {} | {} | {} | {} | {} | {} | {} / {} / {} {} | {} / {} / {} MiB |\n",
        case.name,
        time(hts.wall(Sink::Pipe)),
        time(sam.wall(Sink::Pipe)),
        ratio(sam, Sink::Pipe),
        ratio(sam, Sink::Null),
        n.map_or_else(dash, |n| time(n.wall(Sink::Pipe))),
        n.map_or_else(dash, |n| ratio(n, Sink::Pipe)),
        n.map_or_else(dash, |n| ratio(n, Sink::Null)),
        cpu(hts),
        cpu(sam),
        n.map_or_else(dash, cpu),
        if case.startup() { "ms" } else { "s" },
        mib(hts),
        mib(sam),
        n.map_or_else(dash, mib),
    )
}

/// Runs every case at every thread count and returns the table (also printed row by row).
pub fn run(
    tools: &Tools,
    bam: &Path,
    runs: usize,
    threads: &[usize],
    cases: &[Case],
) -> Result<String, String> {
    println!("load average before: {}", load_average());
    let mut table = String::from(TABLE_HEAD);
    let mut mismatches = Vec::new();
    for case in cases {
        let counts: &[usize] = if case.startup() { &[1] } else { threads };
        for &t in counts {
            let args = case.args(bam, t);
            // samtools --version lists its libraries' features (some 17 ms); --version-only is
            // the bare start-up, as hts --version is.
            let samtools_args = if case.version {
                vec!["--version-only".to_string()]
            } else {
                args.clone()
            };
            let mut lineup = vec![
                ("hts", tools.hts.as_path(), args),
                ("samtools", tools.samtools.as_path(), samtools_args),
            ];
            if let (Some(noodles), Some(nargs)) = (&tools.noodles, case.noodles_args(bam, t)) {
                lineup.push(("noodles", noodles.as_path(), nargs));
            }
            let mut entries = Vec::new();
            let mut outputs = Vec::new();
            for (name, program, args) in lineup {
                let (out, max_rss_kib) = verify_once(program, &args)?;
                outputs.push((name, out));
                entries.push(Entry {
                    program,
                    args,
                    pipe: Vec::new(),
                    null: Vec::new(),
                    max_rss_kib,
                });
            }
            let reference = &outputs[1].1;
            for (name, out) in &outputs {
                let same = match *name {
                    "noodles" => {
                        out.short.as_deref().map(str::trim)
                            == reference.short.as_deref().map(str::trim)
                    }
                    // Each tool names itself.
                    "hts" if case.version => true,
                    _ => out == reference,
                };
                if !same {
                    mismatches.push(format!(
                        "{} ({t} threads): {name} output differs from samtools' ({} vs {} bytes)",
                        case.name, out.bytes, reference.bytes
                    ));
                }
            }
            let rounds = if case.startup() {
                (runs * 10).max(30)
            } else {
                runs.max(1)
            };
            for _ in 0..rounds {
                for e in entries.iter_mut() {
                    e.pipe.push(time_once(e.program, &e.args, Sink::Pipe)?);
                    e.null.push(time_once(e.program, &e.args, Sink::Null)?);
                }
            }
            let line = row(case, t, &entries);
            print!("{line}");
            table += &line;
        }
    }
    finish(table, &mismatches)
}

/// The end of a run: the load average after it, and the table, or an error holding it when
/// some outputs differed (those timings are void).
pub(crate) fn finish(table: String, mismatches: &[String]) -> Result<String, String> {
    println!("load average after: {}", load_average());
    if !mismatches.is_empty() {
        return Err(format!(
            "{table}\noutputs differ, so those timings are void:\n{}",
            mismatches.join("\n")
        ));
    }
    Ok(table)
}

pub const HELP: &str = "\
cargo xtask bench-local [--runs N] [--pairs N] [--threads 1,2] [--cases NAME,..] [--no-noodles]
                        [--format vcf [--size MB] | --format cram]
  Times local decoding of the benchmark BAM (cargo xtask bench-data makes it): view -c, view to
  SAM, 5 small regions and chr22, at each thread count (default 1,2; -@ N = N + 1 threads), hts
  against samtools view and, for counts, a noodles-bam 0.98 program (libdeflate) that the xtask
  builds in its own project under ~/.cache/hts-tools. Then start-up: --version (samtools
  --version-only), view -H and one
  small region counted (view -c) of a small file (fixtures/conformance/data/rand.bam), one thread,
  10 times as many rounds. Outputs are compared first (counts, and a digest of the whole SAM
  text; peak RSS is taken in this pass), then whole processes alternate for N rounds (default
  3), each run twice: stdout read through a pipe by another process (cat > /dev/null), as users
  send it, and into /dev/null. The table gives medians of wall time, ratios hts / other in both
  (below 1: hts is faster), CPU time into the pipe and peak RSS. Then BAM writing at the default
  level (-b --no-PG, outputs compared byte for byte): chr22, and the whole file. --cases keeps
  the cases whose names contain one of the words (e.g. --cases 'view -c,view (SAM),regions,to
  BAM,start-up'). Run it on an idle machine: the load average is printed before and after.
  --format vcf [--size MB]: the benchmark VCF (cargo xtask bench-data --vcf) instead: hts tabix
  against Debian's tabix 1.16 on vcf-r1, vcf-r5, vcf-r10 and vcf-chr22, and hts bgzip against
  bgzip 1.16 compressing (-c) and decompressing (-d -c) the VCF's first 200 MB of text (made
  once beside it) at -@ 1 and -@ 2; every output goes into a pipe read by `cat`. Queries and
  decompression take well under a second: they run 5 N rounds.
  --format cram: the benchmark CRAM (cargo xtask bench-data --cram) instead: hts view against
  samtools view 1.16, both `-T` the benchmark reference, to SAM into a pipe read by `cat`:
  chromosome 1 (2.2 M records decoded) at each thread count (--threads, default 1,2), and the
  regions r5 and chr22 at 1 thread; the whole file with --cases 'whole file'.";

/// `--threads 1,2`: the thread counts to run (default 1 and 2).
pub(crate) fn threads_arg(args: &[String]) -> Result<Vec<usize>, String> {
    crate::flag_value(args, "--threads")
        .unwrap_or("1,2")
        .split(',')
        .map(|t| t.parse().ok().filter(|&t: &usize| t >= 1))
        .collect::<Option<_>>()
        .ok_or_else(|| "--threads takes a list of counts of at least 1, e.g. 1,2".to_string())
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    if crate::flag_value(args, "--format") == Some("cram") {
        return crate::bench_local_cram::cmd(args);
    }
    if crate::flag_value(args, "--format") == Some("vcf") {
        let vcf = crate::bench_vcf::existing_vcf(args)?;
        let hts = crate::release_hts()?;
        let runs = crate::flag_value(args, "--runs")
            .and_then(|r| r.parse().ok())
            .unwrap_or(3);
        let table =
            crate::bench_local_vcf::run(&hts, &vcf, runs, crate::flag_value(args, "--cases"))?;
        println!(
            "\n{table}\n(cargo xtask bench-local {}: median of {runs}, {})",
            args.join(" "),
            vcf.display()
        );
        return Ok(());
    }
    let bam = crate::bench_data::existing_bam(args)?;
    let hts = crate::release_hts()?;
    let samtools = crate::bench_remote::which("samtools").ok_or("samtools is not on PATH")?;
    let noodles = if args.iter().any(|a| a == "--no-noodles") {
        None
    } else {
        Some(crate::noodles_count::build()?)
    };
    let runs = crate::flag_value(args, "--runs")
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let threads = threads_arg(args)?;
    let mut cases = vec![
        Case::view("view -c", &["-c"], Vec::new()),
        Case::view("view (SAM)", &[], Vec::new()),
    ];
    for (name, regions) in crate::bench_data::cases(Some("r5,chr22"))? {
        cases.push(Case::view(&format!("view {name} (SAM)"), &[], regions));
    }
    // Writing BAM at the default level: one large region, and the whole file. No @PG line, so
    // the two tools' outputs can be compared byte for byte.
    let to_bam = ["-b", "--no-PG"];
    for (name, regions) in crate::bench_data::cases(Some("chr22"))? {
        cases.push(Case::view(
            &format!("region {name} to BAM"),
            &to_bam,
            regions,
        ));
    }
    cases.push(Case::view("whole file to BAM", &to_bam, Vec::new()));
    // Start-up: what a user running many small queries pays each time.
    let small = crate::root().join("fixtures/conformance/data/rand.bam");
    cases.push(Case {
        version: true,
        ..Case::view(
            "start-up: --version (samtools --version-only)",
            &[],
            Vec::new(),
        )
    });
    cases.push(Case {
        file: Some(small.clone()),
        ..Case::view(
            "start-up: view -H, small file",
            &["-H", "--no-PG"],
            Vec::new(),
        )
    });
    cases.push(Case {
        file: Some(small),
        ..Case::view(
            "start-up: view -c chr1:1-1000, small file",
            &["-c"],
            vec!["chr1:1-1000".to_string()],
        )
    });
    if let Some(only) = crate::flag_value(args, "--cases") {
        let wanted: Vec<&str> = only.split(',').collect();
        cases.retain(|c| wanted.iter().any(|w| c.name.contains(w)));
    }
    let tools = Tools {
        hts,
        samtools,
        noodles,
    };
    let table = run(&tools, &bam, runs, &threads, &cases)?;
    println!(
        "\n{table}\n(cargo xtask bench-local {}: median of {runs} (start-up: {}), {})",
        args.join(" "),
        (runs * 10).max(30),
        bam.display()
    );
    Ok(())
}
