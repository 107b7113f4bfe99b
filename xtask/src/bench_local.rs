//! `cargo xtask bench-local`: local decoding of the benchmark BAM by `hts`, `samtools view`
//! and (for counts) a noodles-bam program, as whole processes alternated in one run.
//!
//! For each case and thread count, one untimed pass checks that the outputs agree (counts
//! compared, SAM text compared by a digest of the whole stream; it also warms the page cache),
//! then `runs` rounds time each tool in turn. The table gives medians of wall time, the ratio
//! `hts / other` (below 1: `hts` is faster), CPU time (user + system, all threads) and peak
//! resident memory.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// One benchmark case: `view` arguments after the file (e.g. `-c`, or regions).
pub struct Case {
    pub name: String,
    /// Options placed before the file (`-c`).
    pub options: Vec<String>,
    /// Regions placed after the file.
    pub regions: Vec<String>,
}

impl Case {
    fn counts(&self) -> bool {
        self.options.iter().any(|o| o == "-c")
    }
}

/// The programs compared; `noodles` runs only in count cases.
pub struct Tools {
    pub hts: PathBuf,
    pub samtools: PathBuf,
    pub noodles: Option<PathBuf>,
}

/// One timed process.
#[derive(Clone, Copy)]
pub(crate) struct Sample {
    wall: f64,
    cpu: f64,
    max_rss_kib: u64,
}

/// What a verification pass saw on stdout.
#[derive(PartialEq, Eq, Debug)]
pub(crate) struct Output {
    pub(crate) bytes: u64,
    digest: u64,
    /// The text itself when it is short (a count).
    short: Option<String>,
}

/// A digest of a whole output: std's SipHash fed the bytes as a stream (std is built optimized,
/// so this keeps up with a pipe even in the xtask's debug build; only equality matters).
#[derive(Default)]
struct Digest {
    hasher: std::collections::hash_map::DefaultHasher,
    bytes: u64,
}

impl Digest {
    fn update(&mut self, data: &[u8]) {
        use std::hash::Hasher;
        self.bytes += data.len() as u64;
        self.hasher.write(data);
    }

    fn finish(self) -> u64 {
        use std::hash::Hasher;
        self.hasher.finish()
    }
}

/// Waits for `pid` and returns its resource use (`wait4` gives the child's own peak RSS, which
/// `std::process` does not).
fn wait_rusage(pid: u32) -> Result<(i32, libc::rusage), String> {
    let mut status = 0;
    // SAFETY: rusage is plain old data, fully written by wait4 on success.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to a local status and rusage; pid is our child.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if r == pid as libc::pid_t {
            return Ok((status, usage));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("wait4: {err}"));
        }
    }
}

fn seconds(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// GNU time, when installed: the peak RSS a process reports through `wait4` includes the memory
/// of the process that started it (the kernel carries it across `exec`), so a small launcher is
/// needed for a true figure.
fn gnu_time() -> Option<&'static Path> {
    static TIME: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    TIME.get_or_init(|| {
        let time = PathBuf::from("/usr/bin/time");
        let ok = Command::new(&time)
            .args(["-f", "%M", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(time)
    })
    .as_deref()
}

/// Where a run's stdout goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Out {
    /// Digested by the xtask (the time then includes the xtask's reading, so captured runs are
    /// not timed runs).
    Capture,
    /// `/dev/null`.
    Null,
    /// A pipe read by another process (`cat` into `/dev/null`), as a user's pipeline reads it;
    /// the time includes that reader's end.
    Pipe,
}

/// Runs `program args` once, its stdout sent to `out`.
pub(crate) fn run_once(
    program: &Path,
    args: &[String],
    out: Out,
) -> Result<(Sample, Output), String> {
    let rss_file = std::env::temp_dir().join(format!("bench-local-rss-{}", std::process::id()));
    let mut command = match gnu_time() {
        Some(time) => {
            let mut c = Command::new(time);
            c.arg("-f").arg("%M").arg("-o").arg(&rss_file).arg(program);
            c
        }
        None => Command::new(program),
    };
    let start = Instant::now();
    let mut reader = match out {
        Out::Pipe => Some(
            Command::new("cat")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot run cat: {e}"))?,
        ),
        _ => None,
    };
    let stdout = match (out, reader.as_mut().and_then(|r| r.stdin.take())) {
        (Out::Capture, _) => Stdio::piped(),
        (Out::Pipe, Some(pipe)) => Stdio::from(pipe),
        _ => Stdio::null(),
    };
    let mut child = command
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    // The command holds the write end of `cat`'s pipe until it is dropped.
    drop(command);
    let mut digest = Digest::default();
    let mut short = Vec::new();
    if let Some(mut stdout) = child.stdout.take() {
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = stdout.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            if short.len() < 4096 {
                short.extend_from_slice(&buf[..n.min(4096)]);
            }
            digest.update(&buf[..n]);
        }
    }
    let (status, usage) = wait_rusage(child.id())?;
    if let Some(mut r) = reader {
        r.wait().map_err(|e| format!("cat: {e}"))?;
    }
    let wall = start.elapsed().as_secs_f64();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(format!(
            "{} {} failed (wait status {status:#x})",
            program.display(),
            args.join(" ")
        ));
    }
    let bytes = digest.bytes;
    let output = Output {
        bytes,
        digest: digest.finish(),
        short: (bytes < 4096).then(|| String::from_utf8_lossy(&short).into_owned()),
    };
    // Linux reports kilobytes, as GNU time does.
    let max_rss_kib = match std::fs::read_to_string(&rss_file) {
        Ok(text) => {
            let _ = std::fs::remove_file(&rss_file);
            text.trim().parse().unwrap_or(0)
        }
        Err(_) => usage.ru_maxrss as u64,
    };
    let sample = Sample {
        wall,
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        max_rss_kib,
    };
    Ok((sample, output))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Medians of one tool's timed runs.
pub(crate) struct Summary {
    pub(crate) wall: f64,
    pub(crate) cpu: f64,
    pub(crate) max_rss_mib: f64,
}

pub(crate) fn summarize(samples: &[Sample]) -> Summary {
    Summary {
        wall: median(samples.iter().map(|s| s.wall).collect()),
        cpu: median(samples.iter().map(|s| s.cpu).collect()),
        max_rss_mib: samples.iter().map(|s| s.max_rss_kib).max().unwrap_or(0) as f64 / 1024.0,
    }
}

pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_string())
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
    let mut table = String::from(
        "| case | threads | hts | samtools | hts / samtools | noodles | hts / noodles \
         | CPU hts / samtools / noodles | peak RSS hts / samtools / noodles |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    let mut mismatches = Vec::new();
    for case in cases {
        for &t in threads {
            // -@ N means N threads besides the main one, for every tool.
            let mut args = vec!["view".to_string(), "-@".to_string(), (t - 1).to_string()];
            args.extend(case.options.iter().cloned());
            args.push(bam.display().to_string());
            args.extend(case.regions.iter().cloned());
            let mut lineup: Vec<(&str, &Path, Vec<String>)> = vec![
                ("hts", &tools.hts, args.clone()),
                ("samtools", &tools.samtools, args.clone()),
            ];
            // The noodles program counts; its region queries are single-threaded.
            if let Some(noodles) = &tools.noodles {
                if case.counts() && (case.regions.is_empty() || t == 1) {
                    let mut nargs = vec!["-@".to_string(), (t - 1).to_string()];
                    nargs.push(bam.display().to_string());
                    nargs.extend(case.regions.iter().cloned());
                    lineup.push(("noodles", noodles, nargs));
                }
            }
            let mut outputs = Vec::new();
            for (name, program, args) in &lineup {
                let (_, out) = run_once(program, args, Out::Capture)?;
                outputs.push((*name, out));
            }
            let reference = &outputs[1].1;
            for (name, out) in &outputs {
                let same = if *name == "noodles" {
                    out.short.as_deref().map(str::trim) == reference.short.as_deref().map(str::trim)
                } else {
                    out == reference
                };
                if !same {
                    mismatches.push(format!(
                        "{} ({t} threads): {name} output differs from samtools' ({} vs {} bytes)",
                        case.name, out.bytes, reference.bytes
                    ));
                }
            }
            let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); lineup.len()];
            for _ in 0..runs.max(1) {
                for (i, (_, program, args)) in lineup.iter().enumerate() {
                    samples[i].push(run_once(program, args, Out::Null)?.0);
                }
            }
            let s: Vec<Summary> = samples.iter().map(|v| summarize(v)).collect();
            let (hts, sam) = (&s[0], &s[1]);
            let (noodles_time, noodles_ratio, noodles_cpu, noodles_rss) = match s.get(2) {
                Some(n) => (
                    format!("{:.2} s", n.wall),
                    format!("{:.2}", hts.wall / n.wall),
                    format!("{:.2}", n.cpu),
                    format!("{:.0}", n.max_rss_mib),
                ),
                None => ("—".into(), "—".into(), "—".into(), "—".into()),
            };
            let row = format!(
                "| {} | {t} | {:.2} s | {:.2} s | {:.2} | {noodles_time} | {noodles_ratio} \
                 | {:.2} / {:.2} / {noodles_cpu} s | {:.0} / {:.0} / {noodles_rss} MiB |\n",
                case.name,
                hts.wall,
                sam.wall,
                hts.wall / sam.wall,
                hts.cpu,
                sam.cpu,
                hts.max_rss_mib,
                sam.max_rss_mib,
            );
            print!("{row}");
            table += &row;
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
                        [--format vcf [--size MB]]
  Times local decoding of the benchmark BAM (cargo xtask bench-data makes it): view -c, view to
  SAM, 5 small regions and chr22, at each thread count (default 1,2; -@ N = N + 1 threads), hts
  against samtools view and, for counts, a noodles-bam 0.98 program (libdeflate) that the xtask
  builds in its own project under ~/.cache/hts-tools. Outputs are compared first (counts, and a
  digest of the whole SAM text), then whole processes alternate for N rounds (default 3); the
  table gives medians of wall time, ratios hts / other (below 1: hts is faster), CPU time and
  peak RSS. Then BAM writing at the default level (-b --no-PG, outputs compared byte for byte):
  chr22, and the whole file. --cases keeps the cases whose names contain one of the words
  (e.g. --cases 'view -c,view (SAM),regions,to BAM'). Run it on an idle machine: the load
  average is printed before and after.
  --format vcf [--size MB]: the benchmark VCF (cargo xtask bench-data --vcf) instead: hts tabix
  against Debian's tabix 1.16 on vcf-r1, vcf-r5, vcf-r10 and vcf-chr22, and hts bgzip against
  bgzip 1.16 compressing (-c) and decompressing (-d -c) the VCF's first 200 MB of text (made
  once beside it) at -@ 1 and -@ 2; every output goes into a pipe read by `cat`. Queries and
  decompression take well under a second: they run 5 N rounds.";

pub fn cmd(args: &[String]) -> Result<(), String> {
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
    let threads: Vec<usize> = crate::flag_value(args, "--threads")
        .unwrap_or("1,2")
        .split(',')
        .map(|t| t.parse().ok().filter(|&t: &usize| t >= 1))
        .collect::<Option<_>>()
        .ok_or("--threads takes a list of counts of at least 1, e.g. 1,2")?;
    let mut cases = vec![
        Case {
            name: "view -c".to_string(),
            options: vec!["-c".to_string()],
            regions: Vec::new(),
        },
        Case {
            name: "view (SAM)".to_string(),
            options: Vec::new(),
            regions: Vec::new(),
        },
    ];
    for (name, regions) in crate::bench_data::cases(Some("r5,chr22"))? {
        cases.push(Case {
            name: format!("view {name} (SAM)"),
            options: Vec::new(),
            regions,
        });
    }
    // Writing BAM at the default level: one large region, and the whole file. No @PG line, so
    // the two tools' outputs can be compared byte for byte.
    let to_bam = || vec!["-b".to_string(), "--no-PG".to_string()];
    for (name, regions) in crate::bench_data::cases(Some("chr22"))? {
        cases.push(Case {
            name: format!("region {name} to BAM"),
            options: to_bam(),
            regions,
        });
    }
    cases.push(Case {
        name: "whole file to BAM".to_string(),
        options: to_bam(),
        regions: Vec::new(),
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
        "\n{table}\n(cargo xtask bench-local {}: median of {runs}, {})",
        args.join(" "),
        bam.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Digest;

    fn digest(pieces: &[&[u8]]) -> (u64, u64) {
        let mut d = Digest::default();
        for p in pieces {
            d.update(p);
        }
        let n = d.bytes;
        (d.finish(), n)
    }

    #[test]
    fn digest_is_the_same_however_the_stream_is_cut() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let whole = digest(&[&data]);
        assert_eq!(whole.1, 10_000);
        for cut in [1, 7, 8, 9, 4096, 9_999] {
            assert_eq!(digest(&[&data[..cut], &data[cut..]]), whole, "cut at {cut}");
        }
        let mut other = data.clone();
        other[5_000] ^= 1;
        assert_ne!(digest(&[&other]).0, whole.0);
    }
}
