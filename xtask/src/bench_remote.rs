//! `cargo xtask bench-remote`: the seed's benchmark (htslib PR #1998) on a local emulated link,
//! with samtools, our three range modes and the physical minimum side by side, in one run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use testkit::corpus::{apply_env, EnvChange};
use testkit::s3::{Object, S3Stack};
use testkit::{Link, Server, Summary};

#[derive(Debug, Clone)]
pub struct Options {
    pub profiles: Vec<(String, Link)>,
    pub runs: usize,
    pub cases: Vec<(String, Vec<String>)>,
    pub json: PathBuf,
    pub threads: usize,
    /// Also measure `s3://` (s3s-fs behind the same emulated link), for hts and for samtools'
    /// own S3 plugin.
    pub s3: bool,
}

/// One measured cell: medians over the runs.
#[derive(Debug, Clone)]
pub struct Cell {
    pub profile: String,
    pub case: String,
    pub mode: String,
    pub temperature: &'static str,
    pub wall: f64,
    pub written: u64,
    pub advertised: u64,
    pub gets: usize,
    pub connections: u64,
    pub unbounded: usize,
    pub output_ok: bool,
}

fn median_f(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn median_u(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Runs `program args` in `cwd` with `env`; returns (stdout, wall seconds).
fn timed(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[EnvChange],
) -> Result<(Vec<u8>, f64), String> {
    let start = Instant::now();
    let mut command = Command::new(program);
    apply_env(&mut command, env);
    let out = command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let wall = start.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "{} {} failed ({}): {}",
            program.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .chars()
                .take(400)
                .collect::<String>()
        ));
    }
    Ok((out.stdout, wall))
}

fn fresh_dir(tag: &str) -> Result<PathBuf, String> {
    let d = std::env::temp_dir().join(format!(
        "hts-bench-{}-{tag}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
    Ok(d)
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

struct Mode {
    name: &'static str,
    program: PathBuf,
    extra: Vec<String>,
    transport: Transport,
}

/// How a mode reaches the benchmark BAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// Plain HTTP from the benchmark server.
    Http,
    /// `s3://bench/...` from s3s-fs behind the same link (hts's signer).
    S3,
    /// `s3+http://bench/...` through htslib's S3 plugin (samtools).
    HtslibS3,
}

/// Measures every mode for every case under every profile.
pub fn run(hts: &Path, bam: &Path, opts: &Options) -> Result<Vec<Cell>, String> {
    let dir = bam.parent().ok_or("benchmark BAM has no folder")?;
    let file = bam
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("bad benchmark file name")?
        .to_string();
    let samtools = which("samtools");
    if let Some(s) = &samtools {
        let v = Command::new(s)
            .arg("--version")
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default();
        println!("samtools: {v} ({})", s.display());
    } else {
        println!("samtools: not on PATH: its rows are left out, outputs are checked against the local query");
    }
    let mut modes = vec![
        Mode {
            name: "unbounded",
            program: hts.to_path_buf(),
            extra: vec!["--range-mode".into(), "unbounded".into()],
            transport: Transport::Http,
        },
        Mode {
            name: "bounded",
            program: hts.to_path_buf(),
            extra: vec!["--range-mode".into(), "bounded".into()],
            transport: Transport::Http,
        },
        Mode {
            name: "hts",
            program: hts.to_path_buf(),
            extra: vec!["-@".into(), opts.threads.to_string()],
            transport: Transport::Http,
        },
    ];
    if let Some(s) = &samtools {
        modes.push(Mode {
            name: "samtools",
            program: s.clone(),
            extra: vec![],
            transport: Transport::Http,
        });
    }
    if opts.s3 {
        modes.push(Mode {
            name: "hts-s3",
            program: hts.to_path_buf(),
            extra: vec!["-@".into(), opts.threads.to_string()],
            transport: Transport::S3,
        });
        if let Some(s) = &samtools {
            modes.push(Mode {
                name: "samtools-s3",
                program: s.clone(),
                extra: vec![],
                transport: Transport::HtslibS3,
            });
        }
    }
    let mut cells = Vec::new();
    for (pname, link) in &opts.profiles {
        let server = Server::start_with(dir, 0, *link)?;
        let url = server.url(&file);
        let idx_url = format!("{url}.bai");
        let stack = if opts.s3 {
            let objects = vec![
                Object {
                    source: bam.to_path_buf(),
                    key: file.clone(),
                },
                Object {
                    source: dir.join(format!("{file}.bai")),
                    key: format!("{file}.bai"),
                },
            ];
            Some(S3Stack::start(&[("bench", objects)], *link)?)
        } else {
            None
        };
        for (case, regions) in &opts.cases {
            // The reference output: the local query (itself checked against samtools by the corpus).
            let local_dir = fresh_dir("local")?;
            let mut local_args = vec![
                "view".to_string(),
                "-X".to_string(),
                bam.display().to_string(),
                format!("{}.bai", bam.display()),
            ];
            local_args.extend(regions.iter().cloned());
            let reference = match &samtools {
                Some(s) => timed(s, &local_args, &local_dir, &[])?.0,
                None => timed(hts, &local_args, &local_dir, &[])?.0,
            };
            let _ = std::fs::remove_dir_all(&local_dir);
            for mode in &modes {
                let (bam_url, bai_url, env, server) = match (mode.transport, &stack) {
                    (Transport::Http, _) => (url.clone(), idx_url.clone(), Vec::new(), &server),
                    (Transport::S3, Some(st)) => (
                        format!("s3://bench/{file}"),
                        format!("s3://bench/{file}.bai"),
                        st.env(testkit::s3::SECRET_KEY),
                        &st.proxy,
                    ),
                    (Transport::HtslibS3, Some(st)) => (
                        format!("s3+http://bench/{file}"),
                        format!("s3+http://bench/{file}.bai"),
                        st.htslib_env(),
                        &st.proxy,
                    ),
                    _ => continue,
                };
                let mut args = vec!["view".to_string()];
                args.extend(mode.extra.iter().cloned());
                args.extend(["-X".to_string(), bam_url, bai_url]);
                args.extend(regions.iter().cloned());
                let mut cold: Vec<(f64, Summary, bool)> = Vec::new();
                let mut warm: Vec<(f64, Summary, bool)> = Vec::new();
                for _ in 0..opts.runs {
                    let cwd = fresh_dir("cold")?;
                    server.reset();
                    let (out, wall) = timed(&mode.program, &args, &cwd, &env)?;
                    cold.push((wall, server.summary(), out == reference));
                    if mode.name.starts_with("samtools") {
                        // Warm: again where htslib left the index it downloaded.
                        server.reset();
                        let (out, wall) = timed(&mode.program, &args, &cwd, &env)?;
                        warm.push((wall, server.summary(), out == reference));
                    }
                    let _ = std::fs::remove_dir_all(&cwd);
                }
                for (temperature, runs) in [("cold", cold), ("warm", warm)] {
                    if runs.is_empty() {
                        continue;
                    }
                    let cell = Cell {
                        profile: pname.clone(),
                        case: case.clone(),
                        mode: mode.name.to_string(),
                        temperature,
                        wall: median_f(runs.iter().map(|r| r.0).collect()),
                        written: median_u(runs.iter().map(|r| r.1.written).collect()),
                        advertised: median_u(runs.iter().map(|r| r.1.advertised).collect()),
                        gets: median_u(runs.iter().map(|r| r.1.gets as u64).collect()) as usize,
                        connections: median_u(runs.iter().map(|r| r.1.connections).collect()),
                        unbounded: runs.iter().map(|r| r.1.unbounded).max().unwrap_or(0),
                        output_ok: runs.iter().all(|r| r.2),
                    };
                    println!(
                        "  {pname:>5} {case:>6} {:>10} {temperature}: {:>7.3} s {:>10} B written {:>12} B advertised {:>3} GETs {:>3} conns{}",
                        cell.mode,
                        cell.wall,
                        cell.written,
                        cell.advertised,
                        cell.gets,
                        cell.connections,
                        if cell.output_ok { "" } else { "  OUTPUT DIFFERS (void)" }
                    );
                    cells.push(cell);
                }
            }
        }
    }
    Ok(cells)
}

pub fn which(cmd: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|p| p.join(cmd))
        .find(|p| p.is_file())
}

fn mb(b: u64) -> String {
    format!("{:.2} MB", b as f64 / 1e6)
}

/// The seed's table (Query | Unbounded | Bounded | Bandwidth | Time) and the full table.
pub fn print_tables(cells: &[Cell], minimum: &dyn Fn(&str) -> Option<(u64, usize)>) -> String {
    let mut s = String::new();
    let mut profiles: Vec<&str> = cells.iter().map(|c| c.profile.as_str()).collect();
    profiles.dedup();
    for p in profiles {
        let find = |case: &str, mode: &str, t: &str| {
            cells
                .iter()
                .find(|c| c.profile == p && c.case == case && c.mode == mode && c.temperature == t)
        };
        let mut cases: Vec<&str> = cells
            .iter()
            .filter(|c| c.profile == p)
            .map(|c| c.case.as_str())
            .collect();
        cases.dedup();
        s += &format!("\nProfile {p}: the seed's table (htslib's open-ended requests vs bounded requests, ours)\n\n");
        s += "| Query | Unbounded | Bounded | Bandwidth | Time |\n|---|---|---|---|---|\n";
        for case in &cases {
            if let (Some(u), Some(b)) = (
                find(case, "unbounded", "cold"),
                find(case, "bounded", "cold"),
            ) {
                s += &format!(
                    "| {case} | {} / {:.2} s | {} / {:.2} s | {:+.0}% | {:+.0}% |\n",
                    mb(u.written),
                    u.wall,
                    mb(b.written),
                    b.wall,
                    pct(b.written as f64, u.written as f64),
                    pct(b.wall, u.wall)
                );
            }
        }
        s += &format!("\nProfile {p}: every mode (median of runs; bytes are what the server wrote to sockets)\n\n");
        s += "| Query | mode | wall | written | advertised | GETs | conns | written / minimum | speed vs samtools |\n|---|---|---|---|---|---|---|---|---|\n";
        for case in &cases {
            let base = find(case, "samtools", "cold");
            for c in cells.iter().filter(|c| c.profile == p && &c.case == case) {
                let min = minimum(case);
                let ratio = min
                    .map(|(bytes, _)| format!("{:.2}x", c.written as f64 / bytes.max(1) as f64))
                    .unwrap_or_default();
                let vs = base
                    .map(|b| format!("{:.2}x", b.wall / c.wall.max(1e-9)))
                    .unwrap_or_default();
                s += &format!(
                    "| {case} | {}{} | {:.3} s | {} | {} | {} | {} | {ratio} | {vs}{} |\n",
                    c.mode,
                    if c.temperature == "warm" {
                        " (warm)"
                    } else {
                        ""
                    },
                    c.wall,
                    mb(c.written),
                    mb(c.advertised),
                    c.gets,
                    c.connections,
                    if c.output_ok {
                        ""
                    } else {
                        " VOID: output differs"
                    }
                );
            }
            if let Some((bytes, spans)) = minimum(case) {
                s += &format!(
                    "| {case} | minimum | | {} | | {spans} spans | | 1.00x | |\n",
                    mb(bytes)
                );
            }
        }
    }
    s
}

fn pct(new: f64, old: f64) -> f64 {
    if old == 0.0 {
        0.0
    } else {
        (new - old) / old * 100.0
    }
}

pub fn to_json(cells: &[Cell], minimum: &dyn Fn(&str) -> Option<(u64, usize)>) -> String {
    let mut s = String::from("{\n  \"cells\": [\n");
    for (i, c) in cells.iter().enumerate() {
        s += &format!(
            "    {{\"profile\": \"{}\", \"case\": \"{}\", \"mode\": \"{}\", \"temperature\": \"{}\", \"wall_s\": {:.4}, \"bytes_written\": {}, \"bytes_advertised\": {}, \"gets\": {}, \"connections\": {}, \"unbounded_requests\": {}, \"output_identical\": {}}}{}\n",
            c.profile, c.case, c.mode, c.temperature, c.wall, c.written, c.advertised, c.gets, c.connections, c.unbounded, c.output_ok,
            if i + 1 < cells.len() { "," } else { "" }
        );
    }
    s += "  ],\n  \"minimum\": {";
    let mut cases: Vec<&str> = cells.iter().map(|c| c.case.as_str()).collect();
    cases.sort_unstable();
    cases.dedup();
    let mins: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            minimum(c).map(|(b, n)| format!("\"{c}\": {{\"bytes\": {b}, \"spans\": {n}}}"))
        })
        .collect();
    s += &mins.join(", ");
    s += "}\n}\n";
    s
}

pub const HELP: &str = "\
cargo xtask bench-remote [--profiles ec2,home] [--runs N] [--cases r1,r5,...] [--pairs N]
                         [--json FILE] [--transports http,s3]
  Serves the benchmark BAM (cargo xtask bench-data makes it) through an emulated link on
  127.0.0.1 and runs each query with htslib's request pattern (--range-mode unbounded), PR
  #1998's (bounded), hts as it is, and samtools view -X (cold, and warm with its downloaded
  index), comparing every output with samtools'. Profiles: ec2 (35 MB/s, 20 ms), home (2 MB/s,
  60 ms), loopback. Cases: the names in regions.txt (r1, r1far, r5, r10, chr22, chr1).
  --transports  http, s3 or both (default): with s3, hts over s3:// (hts-s3) and samtools'
                own S3 plugin over s3+http:// (samtools-s3), from s3s-fs behind the same link
                (installed on first use).";

pub fn cmd(args: &[String]) -> Result<(), String> {
    let bam = crate::bench_data::existing_bam(args)?;
    let hts = crate::release_hts()?;
    let mut profiles = Vec::new();
    for p in crate::flag_value(args, "--profiles")
        .unwrap_or("ec2,home")
        .split(',')
    {
        let link = Link::profile(p)
            .ok_or_else(|| format!("unknown profile '{p}' (ec2, home, loopback)"))?;
        profiles.push((p.to_string(), link));
    }
    let opts = Options {
        profiles,
        runs: crate::flag_value(args, "--runs")
            .and_then(|r| r.parse().ok())
            .unwrap_or(3),
        cases: crate::bench_data::cases(Some(
            crate::flag_value(args, "--cases").unwrap_or("r1,r5,r10,chr22"),
        ))?,
        json: PathBuf::from(
            crate::flag_value(args, "--json").unwrap_or("target/bench-remote.json"),
        ),
        threads: 2,
        s3: {
            let transports = crate::flag_value(args, "--transports").unwrap_or("http,s3");
            if let Some(bad) = transports.split(',').find(|t| !matches!(*t, "http" | "s3")) {
                return Err(format!("unknown transport '{bad}' (http, s3)"));
            }
            transports.split(',').any(|t| t == "s3")
        },
    };
    let started = Instant::now();
    let cells = run(&hts, &bam, &opts)?;
    let minimum = crate::bench_minimum::Minimum::new(&bam)?;
    let min = |case: &str| {
        opts.cases
            .iter()
            .find(|(n, _)| n == case)
            .and_then(|(_, regions)| minimum.of(regions).ok())
    };
    let tables = print_tables(&cells, &min);
    println!("{tables}");
    println!(
        "(cargo xtask bench-remote, {} run(s) a cell, {:.0} s in all)",
        opts.runs,
        started.elapsed().as_secs_f64()
    );
    let json = crate::root().join(&opts.json);
    std::fs::write(&json, to_json(&cells, &min)).map_err(|e| format!("{}: {e}", json.display()))?;
    println!("JSON: {}", json.display());
    if cells.iter().any(|c| !c.output_ok) {
        return Err("some outputs differ from samtools: those cells are void".to_string());
    }
    Ok(())
}
