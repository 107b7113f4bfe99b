//! `cargo xtask ...`: test orchestration, the demo, servers and (later) benchmarks.

mod bench_data;
mod bench_local;
mod bench_minimum;
mod bench_remote;
mod conformance;
mod layering;
mod nginx;
mod noodles_count;
mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

const USAGE: &str = "\
cargo xtask <command>
  test                     every test: cargo test, the conformance corpus locally, over the
                           in-process HTTP server and over nginx (if installed), request-log checks
  demo                     a multi-region query on the bundled fixture, served over local HTTP
  conformance [--http|--nginx] [--bin PATH] [ID_SUBSTRING ...]
                           run the conformance corpus (fixtures/conformance)
  bench-data [--pairs=N]   generate the benchmark BAM (+ BAI, CSI) into ~/.cache/hts-bench
  bench-remote [--profiles ec2,home] [--runs N] [--cases r1,r5,...] [--pairs N] [--json FILE]
                           the seed's remote benchmark: unbounded, bounded, hts, samtools, minimum
  bench-local [--runs N] [--pairs N] [--threads 1,2] [--cases NAME,..] [--no-noodles]
                           whole-file and region decoding, hts vs samtools, 1 and 2 threads
  serve [DIR] [--port N] [--profile ec2|home|loopback]
                           serve DIR (default fixtures/) on 127.0.0.1 until killed";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => cmd_test(),
        Some("demo") => cmd_demo(),
        Some("conformance") => cmd_conformance(&args[1..]),
        Some("serve") => cmd_serve(&args[1..]),
        Some("bench-remote") => cmd_bench_remote(&args[1..]),
        Some("bench-local") => cmd_bench_local(&args[1..]),
        Some("bench-data") => {
            let pairs = args
                .get(1)
                .and_then(|p| p.strip_prefix("--pairs="))
                .and_then(|p| p.parse().ok());
            bench_data::run(&root(), pairs.unwrap_or(bench_data::DEFAULT_PAIRS)).map(|_| ())
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::from(1)
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from(".."))
}

fn corpus_dir() -> PathBuf {
    root().join("fixtures/conformance")
}

fn cargo(args: &[&str]) -> Result<(), String> {
    cargo_with(args, &[])
}

fn cargo_with(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    println!("==> cargo {}", args.join(" "));
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo {} failed ({status})", args.join(" ")))
    }
}

fn release_hts() -> Result<PathBuf, String> {
    cargo(&["build", "--release", "--quiet", "-p", "cli"])?;
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join("target"));
    let hts = target.join("release/hts");
    if hts.exists() {
        Ok(hts)
    } else {
        Err(format!("{} was not built", hts.display()))
    }
}

fn timeout() -> Duration {
    let secs = std::env::var("CONFORMANCE_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    Duration::from_secs(secs)
}

fn run_corpus(
    hts: &Path,
    base_url: Option<&str>,
    filter: &[String],
    label: &str,
) -> Result<(), String> {
    println!("==> conformance ({label})");
    let dir = corpus_dir();
    let (_, failed) = conformance::run(&conformance::Run {
        hts,
        dir: &dir,
        base_url,
        filter,
        timeout: timeout(),
    })?;
    if failed == 0 {
        Ok(())
    } else {
        Err(format!("conformance ({label}): {failed} case(s) failed"))
    }
}

fn cmd_conformance(args: &[String]) -> Result<(), String> {
    let mut mode = "local";
    let mut bin = None;
    let mut filter = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--http" => mode = "http",
            "--nginx" => mode = "nginx",
            "--bin" => {
                i += 1;
                bin = Some(PathBuf::from(args.get(i).ok_or("--bin needs a path")?));
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
            let server = server::Server::start(&corpus_dir(), 0)?;
            run_corpus(
                &hts,
                Some(&server.url("")),
                &filter,
                "in-process HTTP server",
            )
        }
        "nginx" => {
            let nginx = nginx::Nginx::start(&corpus_dir())?;
            run_corpus(&hts, Some(&nginx.base_url()), &filter, "nginx")
        }
        _ => run_corpus(&hts, None, &filter, "local"),
    }
}

/// The five regions of the request-log checks and the demo.
const FIVE_REGIONS: [&str; 5] = [
    "chr1:10000-10500",
    "chr1:150000-150600",
    "chr2:5000-5400",
    "chr3:20000-20100",
    "chrM:100-300",
];

fn run_hts(hts: &Path, args: &[String]) -> Result<(Vec<u8>, String), String> {
    let out = Command::new(hts)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", hts.display()))?;
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    if !out.status.success() {
        return Err(format!(
            "hts {} failed ({}): {err}",
            args.join(" "),
            out.status
        ));
    }
    Ok((out.stdout, err))
}

fn five_region_args(bam: &str, bai: &str) -> Vec<String> {
    let mut args = vec![
        "view".to_string(),
        "-X".to_string(),
        bam.to_string(),
        bai.to_string(),
    ];
    args.extend(FIVE_REGIONS.iter().map(|s| s.to_string()));
    args
}

/// A parsed `bytes=X-Y` header: `None` for a missing or open-ended range.
fn bounded_range(range: &str) -> Option<(u64, u64)> {
    let (a, b) = range.strip_prefix("bytes=")?.split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The byte ranges the 5-region query may ask of the BAM: the header's first block, the EOF
/// marker, and the spans our planner makes of the index's chunks (DESIGN.md rules 2 and 3).
fn expected_ranges(bam: &Path, bai: &Path, size: u64) -> Result<Vec<(u64, u64)>, String> {
    use bam::index::span;
    let mut reader = bam::Reader::open(&bam.display().to_string(), &bam::OpenOptions::default())
        .map_err(|e| e.to_string())?;
    reader
        .load_index(Some(&bai.display().to_string()))
        .map_err(|e| e.to_string())?;
    let index = reader.index().ok_or("no index")?;
    let mut chunks = Vec::new();
    for region in FIVE_REGIONS {
        if let Ok(bam::Target::Ref { tid, beg, end }) = bam::parse_region(region, reader.header()) {
            chunks.extend(index.query(tid, beg, end));
        }
    }
    let starts = index.block_starts();
    let mut ranges = vec![(0, 65536.min(size)), (size.saturating_sub(28), size)];
    ranges.extend(
        span::plan(&chunks, &starts, size, &span::Options::default())
            .iter()
            .map(|s| (s.start, s.end)),
    );
    Ok(ranges)
}

/// One request as a server logged it: connection, method, path, Range header.
type Logged = (u64, String, String, String);

/// The 5-region query over HTTP: same bytes as locally, every Range bounded, every BAM range
/// inside the header block, the EOF marker or a planned span, and one connection in all.
fn check_request_log(
    label: &str,
    hts: &Path,
    base: &str,
    log: &dyn Fn() -> Vec<Logged>,
    clear: &dyn Fn(),
) -> Result<(), String> {
    println!("==> request-log check ({label})");
    let data = corpus_dir().join("data");
    let (bam, bai) = (data.join("rand.bam"), data.join("rand.bam.bai"));
    let local = five_region_args(&bam.display().to_string(), &bai.display().to_string());
    let (expected, _) = run_hts(hts, &local)?;
    clear();
    let remote = five_region_args(
        &format!("{base}/data/rand.bam"),
        &format!("{base}/data/rand.bam.bai"),
    );
    let (got, _) = run_hts(hts, &remote)?;
    if got != expected {
        return Err(format!(
            "{label}: remote output differs from local ({} vs {} bytes)",
            got.len(),
            expected.len()
        ));
    }
    let size = std::fs::metadata(&bam).map_err(|e| e.to_string())?.len();
    let allowed = expected_ranges(&bam, &bai, size)?;
    let entries = log();
    if entries.is_empty() {
        return Err(format!("{label}: the server logged no request"));
    }
    let mut connections: Vec<u64> = entries.iter().map(|e| e.0).collect();
    connections.sort_unstable();
    connections.dedup();
    for (_, method, path, range) in &entries {
        if method != "GET" {
            continue;
        }
        let Some((a, b)) = bounded_range(range) else {
            return Err(format!(
                "{label}: unbounded request for {path}: Range '{range}'"
            ));
        };
        if path.ends_with("rand.bam.bai") {
            // The whole index, in one bounded request from its start.
            if a != 0 {
                return Err(format!("{label}: index read from byte {a}, not 0"));
            }
            continue;
        }
        if !path.ends_with("rand.bam") {
            return Err(format!("{label}: unexpected request for {path}"));
        }
        if !allowed.iter().any(|&(s, e)| s <= a && b < e) {
            return Err(format!(
                "{label}: Range {range} is outside the planned spans {allowed:?}"
            ));
        }
    }
    if connections.len() != 1 {
        return Err(format!(
            "{label}: the 5-region query used {} connections, expected 1",
            connections.len()
        ));
    }
    println!("{label}: {} requests, all bounded and inside the planned spans, 1 connection, output identical", entries.len());
    Ok(())
}

fn cmd_test() -> Result<(), String> {
    let mut failures = Vec::new();
    let mut step = |name: &str, r: Result<(), String>| {
        if let Err(e) = r {
            println!("!! {name}: {e}");
            failures.push(name.to_string());
        }
    };
    step("cargo fmt", cargo(&["fmt", "--all", "--check"]));
    step(
        "cargo clippy",
        cargo(&[
            "clippy",
            "--workspace",
            "--all-targets",
            "--quiet",
            "--",
            "-D",
            "warnings",
        ]),
    );
    step(
        "cargo test",
        cargo(&["test", "--workspace", "--all-targets"]),
    );
    step("doc tests", cargo(&["test", "--workspace", "--doc"]));
    // Warnings are errors: the public API stays documented.
    step(
        "cargo doc",
        cargo_with(
            &["doc", "--workspace", "--no-deps", "--quiet"],
            &[("RUSTDOCFLAGS", "-D warnings")],
        ),
    );
    let hts = release_hts()?;
    step("conformance local", run_corpus(&hts, None, &[], "local"));
    match server::Server::start(&corpus_dir(), 0) {
        Ok(server) => {
            step(
                "conformance http",
                run_corpus(&hts, Some(&server.url("")), &[], "in-process HTTP server"),
            );
            let counters = server.counters.clone();
            let log = || {
                counters
                    .entries()
                    .into_iter()
                    .map(|e| (e.connection, e.method, e.path, e.range.unwrap_or_default()))
                    .collect()
            };
            let clear = || server.counters.reset();
            step(
                "request log http",
                check_request_log(
                    "in-process server",
                    &hts,
                    server.url("").trim_end_matches('/'),
                    &log,
                    &clear,
                ),
            );
        }
        Err(e) => step("in-process server", Err(e)),
    }
    let need_nginx = std::env::var("HTS_REQUIRE_NGINX").is_ok_and(|v| v == "1");
    if nginx::available() {
        match nginx::Nginx::start(&corpus_dir()) {
            Ok(ng) => {
                step(
                    "conformance nginx",
                    run_corpus(&hts, Some(&ng.base_url()), &[], "nginx"),
                );
                let log = || {
                    ng.log()
                        .into_iter()
                        .map(|a| (a.connection, a.method, a.uri, a.range))
                        .collect()
                };
                let clear = || ng.clear_log();
                step(
                    "request log nginx",
                    check_request_log("nginx", &hts, &ng.base_url(), &log, &clear),
                );
            }
            Err(e) => step("nginx", Err(e)),
        }
    } else if need_nginx {
        step(
            "nginx",
            Err("nginx is not installed (HTS_REQUIRE_NGINX=1)".to_string()),
        );
    } else {
        println!("==> nginx not installed: its conformance run is skipped (CI installs it)");
    }
    if failures.is_empty() {
        println!("==> all tests passed");
        Ok(())
    } else {
        Err(format!("failed: {}", failures.join(", ")))
    }
}

fn cmd_demo() -> Result<(), String> {
    let hts = release_hts()?;
    let fixtures = root().join("fixtures");
    let server = server::Server::start(&fixtures, 0)?;
    let base = server.url("conformance/data");
    let mut args = vec!["view".to_string(), format!("{base}/rand.bam")];
    args.extend(FIVE_REGIONS.iter().map(|s| s.to_string()));
    println!("$ hts {}", args.join(" "));
    let (out, _) = run_hts(&hts, &args)?;
    let text = String::from_utf8_lossy(&out);
    let lines: Vec<&str> = text.lines().collect();
    for line in lines.iter().take(20) {
        println!("{}", line.chars().take(150).collect::<String>());
    }
    if lines.len() > 20 {
        println!("... ({} more records)", lines.len() - 20);
    }
    println!("records: {}", lines.len());
    println!("requests: {}", server.counters.summary());
    Ok(())
}

fn cmd_serve(args: &[String]) -> Result<(), String> {
    let mut dir = root().join("fixtures");
    let mut port = 8000u16;
    let mut link = server::Link::default();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--port" => {
                i += 1;
                port = args
                    .get(i)
                    .and_then(|p| p.parse().ok())
                    .ok_or("--port needs a number")?;
            }
            "--profile" => {
                i += 1;
                let name = args.get(i).ok_or("--profile needs a name")?;
                link = bench_remote::profile(name)
                    .ok_or_else(|| format!("unknown profile '{name}'"))?;
            }
            other => dir = PathBuf::from(other),
        }
        i += 1;
    }
    let server = server::Server::start_with(&dir, port, link)?;
    println!("serving {} at {}", dir.display(), server.url(""));
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// `--name value` options of the bench commands.
fn flag_value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// The query cases of `regions.txt`: name and region list.
fn bench_cases(filter: Option<&str>) -> Result<Vec<(String, Vec<String>)>, String> {
    let path = bench_data::bench_source(&root()).join("regions.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let wanted: Option<Vec<&str>> = filter.map(|f| f.split(',').collect());
    let mut cases = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let Some((name, regions)) = line.split_once('\t') else {
            continue;
        };
        if wanted.as_ref().is_some_and(|w| !w.contains(&name)) {
            continue;
        }
        cases.push((
            name.to_string(),
            regions.split_whitespace().map(str::to_string).collect(),
        ));
    }
    Ok(cases)
}

fn bench_bam(args: &[String]) -> Result<PathBuf, String> {
    let pairs = flag_value(args, "--pairs")
        .and_then(|p| p.parse().ok())
        .unwrap_or(bench_data::DEFAULT_PAIRS);
    let bam = bench_data::bam_path(pairs);
    if !PathBuf::from(format!("{}.done", bam.display())).exists() {
        return Err(format!(
            "{} is missing: run `cargo xtask bench-data` first",
            bam.display()
        ));
    }
    Ok(bam)
}

fn cmd_bench_remote(args: &[String]) -> Result<(), String> {
    let bam = bench_bam(args)?;
    let hts = release_hts()?;
    let mut profiles = Vec::new();
    for p in flag_value(args, "--profiles")
        .unwrap_or("ec2,home")
        .split(',')
    {
        let link = bench_remote::profile(p)
            .ok_or_else(|| format!("unknown profile '{p}' (ec2, home, loopback)"))?;
        profiles.push((p.to_string(), link));
    }
    let opts = bench_remote::Options {
        profiles,
        runs: flag_value(args, "--runs")
            .and_then(|r| r.parse().ok())
            .unwrap_or(3),
        cases: bench_cases(Some(
            flag_value(args, "--cases").unwrap_or("r1,r5,r10,chr22"),
        ))?,
        json: PathBuf::from(flag_value(args, "--json").unwrap_or("target/bench-remote.json")),
        threads: 2,
    };
    let started = std::time::Instant::now();
    let cells = bench_remote::run(&hts, &bam, &opts)?;
    let minimum = bench_minimum::Minimum::new(&bam)?;
    let min = |case: &str| {
        opts.cases
            .iter()
            .find(|(n, _)| n == case)
            .and_then(|(_, regions)| minimum.of(regions).ok())
    };
    let tables = bench_remote::print_tables(&cells, &min);
    println!("{tables}");
    println!(
        "(cargo xtask bench-remote, {} run(s) a cell, {:.0} s in all)",
        opts.runs,
        started.elapsed().as_secs_f64()
    );
    let json = root().join(&opts.json);
    std::fs::write(&json, bench_remote::to_json(&cells, &min))
        .map_err(|e| format!("{}: {e}", json.display()))?;
    println!("JSON: {}", json.display());
    if cells.iter().any(|c| !c.output_ok) {
        return Err("some outputs differ from samtools: those cells are void".to_string());
    }
    Ok(())
}

fn cmd_bench_local(args: &[String]) -> Result<(), String> {
    let bam = bench_bam(args)?;
    let hts = release_hts()?;
    let samtools = bench_remote::which("samtools").ok_or("samtools is not on PATH")?;
    let noodles = if args.iter().any(|a| a == "--no-noodles") {
        None
    } else {
        Some(noodles_count::build()?)
    };
    let runs = flag_value(args, "--runs")
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let threads: Vec<usize> = flag_value(args, "--threads")
        .unwrap_or("1,2")
        .split(',')
        .map(|t| t.parse().ok().filter(|&t: &usize| t >= 1))
        .collect::<Option<_>>()
        .ok_or("--threads takes a list of counts of at least 1, e.g. 1,2")?;
    let mut cases = vec![
        bench_local::Case {
            name: "view -c".to_string(),
            options: vec!["-c".to_string()],
            regions: Vec::new(),
        },
        bench_local::Case {
            name: "view (SAM)".to_string(),
            options: Vec::new(),
            regions: Vec::new(),
        },
    ];
    for (name, regions) in bench_cases(Some("r5,chr22"))? {
        cases.push(bench_local::Case {
            name: format!("view {name} (SAM)"),
            options: Vec::new(),
            regions,
        });
    }
    if let Some(only) = flag_value(args, "--cases") {
        let wanted: Vec<&str> = only.split(',').collect();
        cases.retain(|c| wanted.iter().any(|w| c.name.contains(w)));
    }
    let tools = bench_local::Tools {
        hts,
        samtools,
        noodles,
    };
    let table = bench_local::run(&tools, &bam, runs, &threads, &cases)?;
    println!(
        "\n{table}\n(cargo xtask bench-local {}: median of {runs}, {})",
        args.join(" "),
        bam.display()
    );
    Ok(())
}
