//! `cargo xtask <command>`: commands only (test orchestration, the demo, a server, benchmarks).
//! What tests need as a library lives in `crates/testkit`.

mod bench_cohort;
mod bench_cram;
mod bench_data;
mod bench_local;
mod bench_local_cram;
mod bench_local_vcf;
mod bench_minimum;
mod bench_modes;
mod bench_process;
mod bench_python;
mod bench_python_cram;
mod bench_remote;
mod bench_remote_cram;
mod bench_remote_runs;
mod bench_remote_vcf;
mod bench_table;
mod bench_targets;
mod bench_vcf;
mod cohort_demo;
mod conformance;
mod fuzz;
mod fuzz_seeds;
mod mutate;
mod mutate_crai;
mod mutate_cram;
mod mutate_fixtures;
mod mutate_run;
mod mutate_tabix;
mod noodles_count;
mod python;
mod s3;
mod setup;
mod soak;
mod test;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "\
cargo xtask <command> [--help]
  test           every test: fmt, clippy, cargo test (unit, integration, the conformance corpus
                 locally and over HTTP), doc tests, cargo doc, and the corpus over nginx
  demo           a 5-region query on the bundled fixture, served over local HTTP
  cohort-demo    the Snakemake cohort workflow over 50 served BAMs (and --compare: samtools loops)
  conformance    run the conformance corpus on a release build (locally, --http or --nginx)
  serve          serve a folder on 127.0.0.1, optionally through an emulated link
  bench-data     generate the benchmark BAM (+ BAI, CSI), with --cram also its CRAM and
                 reference, or, with --vcf, the benchmark VCF (+ TBI, CSI) into ~/.cache/hts-bench
  bench-remote   the remote benchmark: htslib's and PR #1998's request patterns, hts, samtools
  bench-cohort   hts view --manifest -c vs loops of hts and samtools 8 at a time, N objects
  bench-local    local decoding, hts vs samtools and noodles-bam: counts, SAM, regions, BAM
  bench-targets  a 10,000-line BED (--region-file, -L) over an emulated link, hts vs samtools
  s3             hts over s3:// against s3s-fs with the server's request log, and the byte
                 totals of s3://, pre-signed and plain HTTP
  s3-serve       serve the conformance corpus from s3s-fs until killed
  fuzz           run each fuzz target of fuzz/ (cargo-fuzz, nightly) for a fixed time
  mutate         damaged CRAM and tabix fixtures through hts and samtools/tabix: no record
                 lost with exit 0, no panic, no hang, every error naming the file
  soak           many threads querying random regions over HTTP with faults, checked locally
  python-test    the Python package: its wheel built into the test venv, pytest against pysam
`cargo xtask <command> --help` tells a command's options.";

/// A command: its help text and what it does with its arguments.
struct Cmd {
    name: &'static str,
    help: &'static str,
    run: fn(&[String]) -> Result<(), String>,
}

const COMMANDS: &[Cmd] = &[
    Cmd {
        name: "test",
        help: test::HELP,
        run: test::cmd,
    },
    Cmd {
        name: "demo",
        help: DEMO_HELP,
        run: cmd_demo,
    },
    Cmd {
        name: "cohort-demo",
        help: cohort_demo::HELP,
        run: cohort_demo::cmd,
    },
    Cmd {
        name: "conformance",
        help: conformance::HELP,
        run: conformance::cmd,
    },
    Cmd {
        name: "serve",
        help: SERVE_HELP,
        run: cmd_serve,
    },
    Cmd {
        name: "bench-data",
        help: bench_data::HELP,
        run: bench_data::cmd,
    },
    Cmd {
        name: "bench-remote",
        help: bench_remote::HELP,
        run: bench_remote::cmd,
    },
    Cmd {
        name: "bench-targets",
        help: bench_targets::HELP,
        run: bench_targets::cmd,
    },
    Cmd {
        name: "bench-cohort",
        help: bench_cohort::HELP,
        run: bench_cohort::cmd,
    },
    Cmd {
        name: "bench-local",
        help: bench_local::HELP,
        run: bench_local::cmd,
    },
    Cmd {
        name: "s3",
        help: s3::HELP,
        run: s3::cmd,
    },
    Cmd {
        name: "s3-serve",
        help: s3::SERVE_HELP,
        run: s3::serve,
    },
    Cmd {
        name: "fuzz",
        help: fuzz::HELP,
        run: fuzz::cmd,
    },
    Cmd {
        name: "python-test",
        help: python::HELP,
        run: python::cmd,
    },
    Cmd {
        name: "mutate",
        help: mutate::HELP,
        run: mutate::cmd,
    },
    Cmd {
        name: "soak",
        help: soak::HELP,
        run: soak::cmd,
    },
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(first) = args.first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if matches!(first.as_str(), "-h" | "--help" | "help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let Some(cmd) = COMMANDS.iter().find(|c| c.name == first) else {
        eprintln!("xtask: unknown command '{first}'\n{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[1..];
    if rest.iter().any(|a| a == "-h" || a == "--help") {
        println!("{}", cmd.help);
        return ExitCode::SUCCESS;
    }
    if let Some(code) = in_release(cmd.name, &args) {
        return code;
    }
    match (cmd.run)(rest) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {}: {e}", cmd.name);
            ExitCode::from(1)
        }
    }
}

/// Set in a benchmark run again from a release build of xtask: it is one already.
const RELEASE_RUN: &str = "HTS_XTASK_RELEASE";

/// Runs a benchmark again from a release build of xtask when this one is a debug build, and
/// returns its exit status. The test server runs inside xtask, on the same cores as the
/// programs it serves: unoptimised, its tokio and hyper spent more CPU than hts itself on a
/// 1,000-file cohort, and every contender paid for it. None: run here.
fn in_release(name: &str, args: &[String]) -> Option<ExitCode> {
    // The commands that time programs against the test server (not bench-data, which only
    // makes files).
    const TIMED: [&str; 5] = [
        "bench-remote",
        "bench-local",
        "bench-cohort",
        "bench-targets",
        "cohort-demo",
    ];
    let benchmark = TIMED.contains(&name);
    if !benchmark || !cfg!(debug_assertions) || std::env::var_os(RELEASE_RUN).is_some() {
        return None;
    }
    println!("==> xtask {name} from a release build of xtask (the test server optimised)");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["run", "--release", "--quiet", "--package", "xtask", "--"])
        .args(args)
        .env(RELEASE_RUN, "1")
        .status();
    Some(match status {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => ExitCode::from(u8::try_from(s.code().unwrap_or(1)).unwrap_or(1)),
        Err(e) => {
            eprintln!("xtask {name}: cannot run cargo: {e}");
            ExitCode::from(1)
        }
    })
}

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from(".."))
}

/// Runs `cargo ARGS` in the workspace with extra environment variables.
pub fn cargo_with(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
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

/// Builds the release `hts` and returns its path.
pub fn release_hts() -> Result<PathBuf, String> {
    cargo_with(&["build", "--release", "--quiet", "-p", "cli"], &[])?;
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

/// The value after `--name` in `args`.
pub fn flag_value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// The five regions of the demo (on the fixture `rand.bam`).
use testkit::FIVE_REGIONS;

const DEMO_HELP: &str = "\
cargo xtask demo
  Serves fixtures/ on a local HTTP server (127.0.0.1) and runs a 5-region query on
  conformance/data/rand.bam with the release hts, printing the records and what the server saw.";

fn cmd_demo(_args: &[String]) -> Result<(), String> {
    let hts = release_hts()?;
    let server = testkit::Server::start(&root().join("fixtures"))?;
    let base = server.url("conformance/data");
    let mut args = vec!["view".to_string(), format!("{base}/rand.bam")];
    args.extend(FIVE_REGIONS.iter().map(|s| s.to_string()));
    println!("$ hts {}", args.join(" "));
    let out = Command::new(&hts)
        .args(&args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", hts.display()))?;
    if !out.status.success() {
        return Err(format!(
            "hts failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    for line in lines.iter().take(20) {
        println!("{}", line.chars().take(150).collect::<String>());
    }
    if lines.len() > 20 {
        println!("... ({} more records)", lines.len() - 20);
    }
    println!("records: {}", lines.len());
    println!("requests: {}", server.summary());
    Ok(())
}

const SERVE_HELP: &str = "\
cargo xtask serve [DIR] [--port N] [--profile ec2|home|s3|loopback]
  Serves DIR (default fixtures/) on 127.0.0.1:N (default 8000) until killed, through the
  emulated link of the profile (default: none).";

fn cmd_serve(args: &[String]) -> Result<(), String> {
    let mut dir = root().join("fixtures");
    let mut port = 8000u16;
    let mut link = testkit::Link::default();
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
                link = testkit::Link::profile(name)
                    .ok_or_else(|| format!("unknown profile '{name}'"))?;
            }
            other => dir = PathBuf::from(other),
        }
        i += 1;
    }
    let server = testkit::Server::start_with(&dir, port, link)?;
    println!("serving {} at {}", dir.display(), server.url(""));
    // Serve until killed: park forever (the server runs on its own threads).
    loop {
        std::thread::park();
    }
}
