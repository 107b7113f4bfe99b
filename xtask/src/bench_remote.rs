//! `cargo xtask bench-remote`: the remote benchmark on a local emulated link (127.0.0.1), every
//! mode side by side in one run: htslib's request pattern and PR #1998's (both reproduced by
//! `hts --fetch-mode`), `hts` cold and warm (its index cache), a sweep of `--fetchers`, and
//! samtools cold and warm, with the physical minimum of each query.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use testkit::corpus::{apply_env, EnvChange};
use testkit::s3::{Object, S3Stack};
use testkit::{Link, Server};

use crate::bench_minimum::{Minimum, Needed};
use crate::bench_table::{self, Cell};

pub const HELP: &str = "\
cargo xtask bench-remote [--profiles ec2,home] [--runs N] [--cases r1,r5,...] [--pairs N]
                         [--fetchers-sweep] [--variants 'NAME:OPTS;...'] [--json FILE]
                         [--transports http,s3] [--format bam|vcf|cram] [--size MB] [--request-log]
                         [--peak-rss] [--old-hts PATH] [--cpu] [--python]
  Serves the benchmark BAM (cargo xtask bench-data makes it) through an emulated link on
  127.0.0.1 and runs each query with htslib's request pattern (hts --fetch-mode open-ended),
  PR #1998's (--fetch-mode per-chunk), hts as it is (cold: an empty cache; warm: run again with
  its cache), with --fetchers 1, 2, 4, 8 (--fetchers-sweep), and samtools view -X (cold, and
  warm with the index it left in its working directory), comparing every output with
  samtools'. Columns: wall time, time to the first record, bytes written by the server, index
  bytes, GETs, connections. The modes of a case run in turn, one cold (and warm) run of each a
  round, and s3s-fs is woken by one direct GET before each run through it (its file threads
  exit after 10 s idle). Profiles: ec2 (35 MB/s shared, 20 ms), home (2 MB/s, 60 ms),
  s3 (an object store: 35 MB/s per connection, 200 MB/s in all, 20 ms), loopback.
  Cases: the names in regions.txt (r1, r1far, r5, r10, chr22, chr1) and chr22mid
  (22:20000000-25000000).
  --request-log the server's request log of hts's first cold run of each case, and the number
                of files its working directory held after it.
  --peak-rss    each hts mode's peak RSS, from one more cold run under GNU time.
  --variants    more hts modes, each a name and its options ('p1m:--part-size 1M').
  --old-hts     another hts binary (e.g. a copy of main's release build) run cold beside this
                one on each transport: modes old and old-s3.
  --cpu         the median CPU seconds of each mode's cold runs: the client's, s3s-fs's (on
                the s3 transports) and this process's (link, servers, proxy, reading output).
  --transports  http, s3 or both (default): with s3 also hts over s3:// (hts-s3) and samtools'
                own S3 plugin over s3+http:// (samtools-s3), from s3s-fs behind the same link
                (installed on first use into ~/.cache/hts-tools), and hts over boto3's
                pre-signed URLs of the same objects (hts-presigned, cold: plain HTTP GETs
                with the signature in the query) and over plain HTTP from the file server
                behind the same proxy as s3s-fs (hts-proxied, cold); a table of hts-s3 /
                hts (the gap), hts-s3 / hts-presigned (signing), hts-presigned / hts-proxied
                (the store) and hts-proxied / hts (the proxy) follows each profile's.
  --format vcf  the benchmark VCF (cargo xtask bench-data --vcf [--size MB]) instead:
                `hts tabix URL REGION...` against Debian's `tabix URL REGION...` (1.16; cold:
                a fresh working directory, where tabix downloads the index, and an empty hts
                cache; warm: both left in place), a folder served with the data and its TBI
                only; -s3 modes: s3:// for hts, s3+http:// through htslib's plugin for tabix.
                Cases vcf-r1, vcf-r5, vcf-r10 (20 kb regions at regions.txt's places) and
                vcf-chr22. Every hts run is checked to leave its working directory empty.
  --format cram the benchmark CRAM (cargo xtask bench-data --cram) instead: `hts view -@ 2 -T
                REF -X URL URL.crai REGION...` against `samtools view -T REF -X ...` (1.16),
                the same local reference FASTA for both; hts-s3 and samtools-s3 as for BAM.
  --python      the Python package instead (xtask/src/bench_python.rs): hts vs pysam 0.24.1
                on r1, r5, r10, chr22 (ec2, s3), chr22 iterated locally, chr22 to Arrow vs
                oxbow 0.8.2 (local, s3) with peak memory; whole Python processes, cold. With
                --format cram (xtask/src/bench_python_cram.rs): the benchmark CRAM, r1, r5,
                r10, chr22 over ec2 and chr22 locally, both with the local reference.";

#[derive(Debug, Clone)]
pub struct Options {
    pub profiles: Vec<(String, Link)>,
    pub runs: usize,
    pub cases: Vec<(String, Vec<String>)>,
    pub json: PathBuf,
    pub threads: usize,
    pub fetchers_sweep: bool,
    /// Extra hts modes: a name and its options (`--variants 'NAME:OPTS;NAME:OPTS'`).
    pub variants: Vec<(String, Vec<String>)>,
    /// Also measure `s3://` (s3s-fs behind the same emulated link), for hts and for samtools'
    /// own S3 plugin.
    pub s3: bool,
    /// Also report each hts mode's peak RSS: one more cold run, under GNU time.
    pub peak_rss: bool,
    /// Print the server's request log of hts's first cold run of each case, and what its
    /// working directory held after it.
    pub request_log: bool,
    /// Another `hts` binary (say main's release build) run cold beside this one, on every
    /// transport, as modes `old` and `old-s3` (`--old-hts PATH`).
    pub old_hts: Option<PathBuf>,
    /// Also report the CPU seconds of each mode's cold runs: the client's, s3s-fs's, and this
    /// process's (the emulated link, the servers, the proxy, reading the output) (`--cpu`).
    pub cpu: bool,
}

/// What one run of a command gave.
pub(crate) struct Run {
    /// The output (empty when it was compared as it arrived: see [`timed_against`]).
    pub(crate) stdout: Vec<u8>,
    pub(crate) wall: f64,
    pub(crate) first_record: Option<f64>,
    /// Whether the output was identical to the reference it was compared with as it arrived.
    pub(crate) same: Option<bool>,
}

/// Runs `program args` in `cwd` with `env`, timing the whole run and the first byte of output.
pub(crate) fn timed(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[EnvChange],
) -> Result<Run, String> {
    let mut stdout = Vec::new();
    let mut run = timed_into(program, args, cwd, env, &mut |b| {
        stdout.extend_from_slice(b)
    })?;
    run.stdout = stdout;
    Ok(run)
}

/// [`timed`], comparing the output with `reference` as it arrives instead of keeping it: the
/// reader costs what a reader of the pipe such as `cmp` costs, not a growing copy of the
/// output (chr22's 248 MB of SAM: ~0.2 s of CPU, taken on a 2-core machine from whichever
/// program is measured).
pub(crate) fn timed_against(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[EnvChange],
    reference: &[u8],
) -> Result<Run, String> {
    let mut at = 0usize;
    let mut same = true;
    let mut run = timed_into(program, args, cwd, env, &mut |b| {
        same &= reference.get(at..at + b.len()) == Some(b);
        at += b.len();
    })?;
    run.same = Some(same && at == reference.len());
    Ok(run)
}

/// Runs `program args`, handing its output to `sink` piece by piece as it arrives.
fn timed_into(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[EnvChange],
    sink: &mut dyn FnMut(&[u8]),
) -> Result<Run, String> {
    let start = Instant::now();
    let mut command = Command::new(program);
    apply_env(&mut command, env);
    let mut child = command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let mut stderr = child.stderr.take().ok_or("no stderr pipe")?;
    let errors = std::thread::spawn(move || {
        let mut e = Vec::new();
        let _ = stderr.read_to_end(&mut e);
        e
    });
    let mut out = child.stdout.take().ok_or("no stdout pipe")?;
    let mut first_record = None;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = out.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        if first_record.is_none() {
            first_record = Some(start.elapsed().as_secs_f64());
        }
        sink(&buf[..n]);
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let wall = start.elapsed().as_secs_f64();
    let errors = errors.join().unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "{} {} failed ({status}): {}",
            program.display(),
            args.join(" "),
            String::from_utf8_lossy(&errors)
                .chars()
                .take(400)
                .collect::<String>()
        ));
    }
    Ok(Run {
        stdout: Vec::new(),
        wall,
        first_record,
        same: None,
    })
}

pub(crate) fn fresh_dir(tag: &str) -> Result<PathBuf, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!(
        "hts-bench-{}-{tag}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
    Ok(d)
}

use crate::bench_modes::{modes, vcf_modes};
pub(crate) use crate::bench_modes::{Format, Mode, Transport};
use crate::bench_remote_runs::{peak_rss, Bench, Planned, Targets};

/// The bytes of index files served (the index is small: what was advertised was sent).
pub(crate) fn index_bytes(server: &Server, index_size: u64) -> u64 {
    server
        .log()
        .iter()
        .filter(|e| {
            e.method == "GET"
                && [".bai", ".csi", ".tbi", ".crai"]
                    .iter()
                    .any(|x| e.path.ends_with(x))
        })
        .map(|e| e.content_length.min(index_size))
        .sum()
}

/// Measures every mode for every case under every profile. `dir` holds the data file and only
/// the index of `format` (what a client probing for indexes finds).
pub fn run(
    hts: &Path,
    format: Format,
    dir: &Path,
    file: &str,
    opts: &Options,
) -> Result<Vec<Cell>, String> {
    let bam = dir.join(file);
    let file = file.to_string();
    let ext = format.index_ext();
    let index_size = std::fs::metadata(format!("{}.{ext}", bam.display()))
        .map_err(|e| e.to_string())?
        .len();
    let baseline = which(format.baseline());
    match &baseline {
        Some(s) => println!("{}: {}", format.baseline(), s.display()),
        None => println!("{}: not on PATH: its rows are left out", format.baseline()),
    }
    let modes = match format {
        Format::Bam => modes(hts, baseline.as_deref(), opts),
        Format::Vcf => vcf_modes(hts, baseline.as_deref(), opts),
        Format::Cram => crate::bench_remote_cram::modes(hts, baseline.as_deref(), opts),
    };
    let bench = Bench {
        hts,
        index_size,
        opts,
    };
    let mut cells = Vec::new();
    for (pname, link) in &opts.profiles {
        let server = Server::start_with(dir, 0, *link)?;
        let stack = match opts.s3 {
            true => Some(s3_stack(&bam, dir, &file, ext, *link)?),
            false => None,
        };
        let presigned = match &stack {
            Some(st) => Some(presigned_urls(st, &file, ext)?),
            None => None,
        };
        // The file server, unpaced, behind a proxy with the link: what s3s-fs is behind.
        let proxied = match opts.s3 {
            true => {
                let files = Server::start_with(dir, 0, Link::default())?;
                let proxy = Server::start_proxy(files.addr(), 0, *link)?;
                Some((files, proxy))
            }
            false => None,
        };
        let targets = Targets {
            server: &server,
            stack: stack.as_ref(),
            presigned: presigned.as_ref(),
            proxied: proxied.as_ref().map(|(_, proxy)| proxy),
            file: &file,
            ext,
        };
        for (case, regions) in &opts.cases {
            // The reference output: the local query by samtools or tabix (or hts without them).
            let reference = reference_output(format, baseline.as_deref(), hts, &bam, ext, regions)?;
            let planned: Vec<Planned> = modes
                .iter()
                .filter_map(|mode| targets.plan(mode, format, regions))
                .collect();
            let samples = bench.case(&planned, case, &reference)?;
            for (p, samples) in planned.iter().zip(samples) {
                let mode = p.mode;
                if opts.peak_rss && mode.program == hts {
                    let kib = peak_rss(&mode.program, &p.args, &p.env)?;
                    println!(
                        "  {pname:>5} {case:>6} {:>16}: peak RSS {:.1} MiB (cold, GNU time)",
                        mode.name,
                        kib as f64 / 1024.0
                    );
                }
                for (temperature, runs) in [("cold", samples.cold), ("warm", samples.warm)] {
                    if runs.is_empty() {
                        continue;
                    }
                    let cell = Cell::median(pname, case, &mode.name, temperature, &runs);
                    println!("  {}", cell.line());
                    cells.push(cell);
                }
            }
        }
    }
    Ok(cells)
}

/// s3s-fs serving the data file and its index as bucket `bench`, behind `link`.
fn s3_stack(bam: &Path, dir: &Path, file: &str, ext: &str, link: Link) -> Result<S3Stack, String> {
    let objects = vec![
        Object {
            source: bam.to_path_buf(),
            key: file.to_string(),
        },
        Object {
            source: dir.join(format!("{file}.{ext}")),
            key: format!("{file}.{ext}"),
        },
    ];
    S3Stack::start(&[("bench", objects)], link)
}

/// boto3's pre-signed GET URLs of the data file and its index in bucket `bench` (path-style,
/// through the proxy), valid for a day: longer than any benchmark run.
fn presigned_urls(stack: &S3Stack, file: &str, ext: &str) -> Result<(String, String), String> {
    let python = testkit::s3::boto3_python()?;
    let index = format!("{file}.{ext}");
    let urls = testkit::s3::presign(&python, &stack.endpoint(), "bench", &[file, &index], 86400)?;
    match urls.as_slice() {
        [data, index] => Ok((data.clone(), index.clone())),
        _ => Err(format!("boto3 gave {} URLs for 2 keys", urls.len())),
    }
}

/// The query's output from the local file: by samtools or tabix, or by hts without them.
fn reference_output(
    format: Format,
    baseline: Option<&Path>,
    hts: &Path,
    bam: &Path,
    ext: &str,
    regions: &[String],
) -> Result<Vec<u8>, String> {
    let mut local_args = match (format, baseline) {
        (Format::Bam | Format::Cram, _) => vec!["view".to_string()],
        (Format::Vcf, Some(_)) => Vec::new(),
        (Format::Vcf, None) => vec!["tabix".to_string()],
    };
    local_args.extend(format.query_args(
        bam.display().to_string(),
        format!("{}.{ext}", bam.display()),
        regions,
    ));
    let local_dir = fresh_dir("local")?;
    let reference = timed(baseline.unwrap_or(hts), &local_args, &local_dir, &[])?.stdout;
    let _ = std::fs::remove_dir_all(&local_dir);
    Ok(reference)
}

/// `NAME:OPTS;NAME:OPTS` as (name, options) pairs.
fn variants(spec: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    spec.split(';')
        .filter(|v| !v.trim().is_empty())
        .map(|v| {
            let (name, opts) = v
                .split_once(':')
                .ok_or_else(|| format!("--variants: '{v}' is not NAME:OPTIONS"))?;
            Ok((
                name.trim().to_string(),
                opts.split_whitespace().map(str::to_string).collect(),
            ))
        })
        .collect()
}

pub fn which(cmd: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|p| p.join(cmd))
        .find(|p| p.is_file())
}

/// The options of `cargo xtask bench-remote ARGS` for `format`.
fn options(args: &[String], format: Format) -> Result<Options, String> {
    let mut profiles = Vec::new();
    for p in crate::flag_value(args, "--profiles")
        .unwrap_or("ec2,home")
        .split(',')
    {
        let link = Link::profile(p)
            .ok_or_else(|| format!("unknown profile '{p}' (ec2, home, s3, loopback)"))?;
        profiles.push((p.to_string(), link));
    }
    Ok(Options {
        profiles,
        runs: crate::flag_value(args, "--runs")
            .and_then(|r| r.parse().ok())
            .unwrap_or(3),
        cases: match format {
            Format::Bam | Format::Cram => crate::bench_data::cases(Some(
                crate::flag_value(args, "--cases").unwrap_or("r1,r5,r10,chr22"),
            ))?,
            Format::Vcf => crate::bench_vcf::cases(crate::flag_value(args, "--cases")),
        },
        json: PathBuf::from(
            crate::flag_value(args, "--json").unwrap_or("target/bench-remote.json"),
        ),
        threads: 2,
        fetchers_sweep: args.iter().any(|a| a == "--fetchers-sweep"),
        variants: variants(crate::flag_value(args, "--variants").unwrap_or(""))?,
        s3: {
            let transports = crate::flag_value(args, "--transports").unwrap_or("http,s3");
            if let Some(bad) = transports.split(',').find(|t| !matches!(*t, "http" | "s3")) {
                return Err(format!("unknown transport '{bad}' (http, s3)"));
            }
            transports.split(',').any(|t| t == "s3")
        },
        request_log: args.iter().any(|a| a == "--request-log"),
        peak_rss: args.iter().any(|a| a == "--peak-rss"),
        old_hts: crate::flag_value(args, "--old-hts").map(PathBuf::from),
        cpu: args.iter().any(|a| a == "--cpu"),
    })
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "--python") {
        return crate::bench_python::run(args);
    }
    let format = match crate::flag_value(args, "--format").unwrap_or("bam") {
        "bam" => Format::Bam,
        "vcf" => Format::Vcf,
        "cram" => Format::Cram,
        other => return Err(format!("unknown --format '{other}' (bam, vcf, cram)")),
    };
    let (dir, file, data) = match format {
        Format::Bam => {
            let bam = crate::bench_data::existing_bam(args)?;
            let dir = bam
                .parent()
                .ok_or("benchmark BAM has no folder")?
                .to_path_buf();
            let file = bam
                .file_name()
                .and_then(|n| n.to_str())
                .ok_or("bad benchmark file name")?
                .to_string();
            (dir, file, bam)
        }
        Format::Vcf => {
            let vcf = crate::bench_vcf::existing_vcf(args)?;
            let (dir, file) = crate::bench_remote_vcf::served_dir(&vcf)?;
            (dir, file, vcf)
        }
        Format::Cram => crate::bench_remote_cram::served(args)?,
    };
    let hts = crate::release_hts()?;
    let opts = options(args, format)?;
    let started = Instant::now();
    let load = crate::bench_local::load_average();
    println!("load average before: {load}");
    let cells = run(&hts, format, &dir, &file, &opts)?;
    let mut mins: Vec<(String, Needed)> = Vec::new();
    if format == Format::Bam {
        let mut minimum = Minimum::new(&data)?;
        for (case, regions) in &opts.cases {
            mins.push((case.clone(), minimum.of(regions)?));
        }
    }
    let min = |case: &str| mins.iter().find(|(c, _)| c == case).map(|(_, n)| *n);
    println!("{}", bench_table::tables(&cells, &min, format.baseline()));
    println!(
        "(cargo xtask bench-remote {}, {} run(s) a cell, {:.0} s in all, {}; load average \
         before {load}, after {})",
        args.join(" "),
        opts.runs,
        started.elapsed().as_secs_f64(),
        data.display(),
        crate::bench_local::load_average()
    );
    let json = crate::root().join(&opts.json);
    std::fs::write(&json, bench_table::to_json(&cells, &min))
        .map_err(|e| format!("{}: {e}", json.display()))?;
    println!("JSON: {}", json.display());
    if cells.iter().any(|c| !c.output_ok) {
        return Err(format!(
            "some outputs differ from {}'s: those cells are void",
            format.baseline()
        ));
    }
    Ok(())
}
