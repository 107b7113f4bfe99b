//! `cargo xtask bench-remote --python`: the Python package against pysam 0.24.1 and oxbow
//! 0.8.2, each run a whole Python process (interpreter start and import included), cold (a
//! fresh cache folder for hts, a fresh working directory for pysam, where htslib downloads the
//! index), run in turn, medians of `--runs` (default 3). Every pair's outputs are compared.
//!
//! - Regions (r1, r5, r10, chr22) on the `ec2` (HTTP) and `s3` (s3s-fs) profiles: hts's
//!   `fetch_many` against pysam's `fetch` region by region, over `s3://` for hts and htslib's
//!   own S3 plugin (`s3+http://`) for pysam; each reads `reference_start` and
//!   `mapping_quality` of every record.
//! - chr22's records iterated locally, reading the same two fields.
//! - chr22 to an Arrow table, locally and on the `s3` profile: `f.to_arrow().read_all()` (a
//!   `pyarrow.Table`; `pyarrow.table(...)` would import pandas first, which oxbow's import
//!   does anyway) against oxbow's batches (through s3fs for S3); with the peak memory of each
//!   (GNU time).

use std::path::Path;

use testkit::corpus::EnvChange;
use testkit::s3::{self, Object, S3Stack};
use testkit::{Link, Server};

use crate::bench_remote::{fresh_dir, timed};
use crate::python::{venv_with_wheel, Build};

/// A query: every record's `reference_start` and `mapping_quality` read, totals printed.
/// A CRAM's reference comes in `HTS_BENCH_REFERENCE` (`bench_python_cram`).
pub(crate) const QUERY: &str = r#"
import os, sys
lib, url, index, regions = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
reference = os.environ.get("HTS_BENCH_REFERENCE")
if lib == "hts":
    import hts
    f = hts.AlignmentFile(url, index_filename=index, reference_filename=reference)
    records = f.fetch_many(regions)
else:
    import pysam
    f = pysam.AlignmentFile(url, index_filename=index, reference_filename=reference)
    records = (r for region in regions for r in f.fetch(region=region))
n = starts = quals = 0
for r in records:
    n += 1
    starts += r.reference_start
    quals += r.mapping_quality
print(n, starts, quals)
"#;

/// A region to an Arrow table: hts's stream or oxbow's batches (s3fs for `s3://`).
const ARROW: &str = r#"
import os, sys
lib, url, index, region = sys.argv[1:5]
import pyarrow as pa
import pyarrow.compute as pc
if lib == "hts":
    import hts
    table = hts.AlignmentFile(url, index_filename=index).to_arrow(regions=region).read_all()
else:
    import oxbow
    source, idx = url, index
    if url.startswith("s3://"):
        import s3fs
        fs = s3fs.S3FileSystem(endpoint_url=os.environ["AWS_ENDPOINT_URL"])
        source = lambda: fs.open(url[5:], "rb")
        idx = lambda: fs.open(index[5:], "rb")
    batches = oxbow.from_bam(source, index=idx, regions=region).batches()
    table = pa.Table.from_batches([pa.record_batch(b) for b in batches])
print(table.num_rows, pc.sum(table.column("pos")).as_py())
"#;

/// s3fs for oxbow over S3, the release matching the fsspec oxbow brings.
const S3FS: &str = "s3fs==2026.9.0";

/// One program run of a row.
pub(crate) struct Side {
    pub(crate) script: &'static str,
    pub(crate) lib: &'static str,
    pub(crate) url: String,
    pub(crate) index: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<EnvChange>,
}

impl Side {
    /// The interpreter's arguments: the script and its own.
    fn command_line(&self) -> Vec<String> {
        let mut args = vec![
            "-c".to_string(),
            self.script.to_string(),
            self.lib.to_string(),
        ];
        args.extend([self.url.clone(), self.index.clone()]);
        args.extend(self.args.iter().cloned());
        args
    }
}

/// A row of the table: what was measured, both sides' medians (wall and CPU seconds), and
/// for a remote query the bytes it needs and their time on the link.
pub(crate) struct Row {
    what: String,
    hts: f64,
    other: f64,
    hts_cpu: f64,
    other_cpu: f64,
    other_name: &'static str,
    floor: Option<(u64, f64)>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One cold run: a fresh working directory and cache folder. (wall and CPU seconds, stdout)
fn cold(python: &Path, side: &Side) -> Result<(f64, f64, String), String> {
    let cwd = fresh_dir("py")?;
    let cache = fresh_dir("py-cache")?;
    let mut env = side.env.clone();
    env.push(("XDG_CACHE_HOME".into(), Some(cache.display().to_string())));
    let args = side.command_line();
    let cpu = crate::bench_remote_runs::cpu_seconds(libc::RUSAGE_CHILDREN);
    let run = timed(python, &args, &cwd, &env);
    let cpu = crate::bench_remote_runs::cpu_seconds(libc::RUSAGE_CHILDREN) - cpu;
    for d in [&cwd, &cache] {
        let _ = std::fs::remove_dir_all(d);
    }
    let run = run?;
    Ok((
        run.wall,
        cpu,
        String::from_utf8_lossy(&run.stdout).trim().to_string(),
    ))
}

/// Both sides `runs` times in turn; the medians, after checking their outputs agree.
pub(crate) fn compare(
    python: &Path,
    what: String,
    hts: &Side,
    other: &Side,
    other_name: &'static str,
    runs: usize,
) -> Result<Row, String> {
    let (mut a, mut b, mut a_cpu, mut b_cpu) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (wall, cpu, out_a) = cold(python, hts)?;
        a.push(wall);
        a_cpu.push(cpu);
        let (wall, cpu, out_b) = cold(python, other)?;
        b.push(wall);
        b_cpu.push(cpu);
        if out_a != out_b {
            return Err(format!(
                "{what}: hts printed '{out_a}', {other_name} '{out_b}'"
            ));
        }
    }
    let row = Row {
        what,
        hts: median(a),
        other: median(b),
        hts_cpu: median(a_cpu),
        other_cpu: median(b_cpu),
        other_name,
        floor: None,
    };
    println!(
        "  {:<28} hts {:>7.3} s ({:.3} CPU)   {:<7} {:>7.3} s ({:.3} CPU)   {:>5.2}x",
        row.what,
        row.hts,
        row.hts_cpu,
        row.other_name,
        row.other,
        row.other_cpu,
        row.other / row.hts
    );
    Ok(row)
}

/// The peak resident memory in MiB of one cold run, under GNU time.
fn peak_mib(python: &Path, side: &Side) -> Result<f64, String> {
    let args = side.command_line();
    let kib = crate::bench_remote_runs::peak_rss(python, &args, &side.env)?;
    Ok(kib as f64 / 1024.0)
}

/// Where each side reads the benchmark BAM on one profile.
struct Place {
    hts: (String, String),
    other: (String, String),
    hts_env: Vec<EnvChange>,
    other_env: Vec<EnvChange>,
}

pub fn run(args: &[String]) -> Result<(), String> {
    if crate::flag_value(args, "--format") == Some("cram") {
        return crate::bench_python_cram::run(args);
    }
    let bam = crate::bench_data::existing_bam(args)?;
    let dir = bam.parent().ok_or("no folder")?.to_path_buf();
    let file = bam
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("bad file name")?
        .to_string();
    let runs = crate::flag_value(args, "--runs")
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let venv = venv_with_wheel(Build::Release)?;
    let python = venv.join("bin/python");
    testkit::tools::run_command(std::process::Command::new(venv.join("bin/pip")).args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        S3FS,
    ]))?;
    let cases = crate::bench_data::cases(Some("r1,r5,r10,chr22"))?;
    let mut minimum = crate::bench_minimum::Minimum::new(&bam)?;
    let load = crate::bench_local::load_average();
    println!("load average before: {load}");
    let started = std::time::Instant::now();
    let mut rows = Vec::new();
    let bai = format!("{file}.bai");
    let local = |name: &str| dir.join(name).display().to_string();
    let side =
        |script, lib, (url, index): &(String, String), env: &[EnvChange], rest: Vec<String>| Side {
            script,
            lib,
            url: url.clone(),
            index: index.clone(),
            args: rest,
            env: env.to_vec(),
        };
    for profile in ["ec2", "s3"] {
        let link = Link::profile(profile).ok_or("profile")?;
        let server;
        let stack;
        let place = if profile == "ec2" {
            server = Server::start_with(&dir, 0, link)?;
            let urls = (server.url(&file), server.url(&bai));
            Place {
                hts: urls.clone(),
                other: urls,
                hts_env: Vec::new(),
                other_env: Vec::new(),
            }
        } else {
            let objects = [&file, &bai]
                .iter()
                .map(|k| Object {
                    source: dir.join(k),
                    key: k.to_string(),
                })
                .collect();
            stack = S3Stack::start(&[("bench", objects)], link)?;
            Place {
                hts: (format!("s3://bench/{file}"), format!("s3://bench/{bai}")),
                other: (
                    format!("s3+http://bench/{file}"),
                    format!("s3+http://bench/{bai}"),
                ),
                hts_env: stack.env(s3::SECRET_KEY),
                other_env: stack.htslib_env(),
            }
        };
        for (case, regions) in &cases {
            let hts = side(QUERY, "hts", &place.hts, &place.hts_env, regions.clone());
            let pysam = side(
                QUERY,
                "pysam",
                &place.other,
                &place.other_env,
                regions.clone(),
            );
            let mut row = compare(
                &python,
                format!("{profile} {case}"),
                &hts,
                &pysam,
                "pysam",
                runs,
            )?;
            // The bytes the query needs at the link's bandwidth (all connections together).
            let needed = minimum.of(regions)?.bytes;
            row.floor = link.bandwidth.map(|rate| (needed, needed as f64 / rate));
            rows.push(row);
        }
        if profile == "s3" {
            let chr22 = vec!["22".to_string()];
            let hts = side(ARROW, "hts", &place.hts, &place.hts_env, chr22.clone());
            // s3fs takes the same s3:// names and the AWS_* variables of the stack.
            let oxbow = side(ARROW, "oxbow", &place.hts, &place.hts_env, chr22);
            rows.push(compare(
                &python,
                "s3 chr22 to Arrow".into(),
                &hts,
                &oxbow,
                "oxbow",
                runs,
            )?);
        }
    }
    let files = (local(&file), local(&bai));
    let chr22 = vec!["22".to_string()];
    let hts = side(QUERY, "hts", &files, &[], chr22.clone());
    let pysam = side(QUERY, "pysam", &files, &[], chr22.clone());
    rows.push(compare(
        &python,
        "local chr22 iterated".into(),
        &hts,
        &pysam,
        "pysam",
        runs,
    )?);
    let hts = side(ARROW, "hts", &files, &[], chr22.clone());
    let oxbow = side(ARROW, "oxbow", &files, &[], chr22);
    rows.push(compare(
        &python,
        "local chr22 to Arrow".into(),
        &hts,
        &oxbow,
        "oxbow",
        runs,
    )?);
    let (peak_hts, peak_oxbow) = (peak_mib(&python, &hts)?, peak_mib(&python, &oxbow)?);
    print_rows(&rows);
    println!(
        "\nPeak memory, local chr22 to Arrow (GNU time, whole process): hts {peak_hts:.0} MiB, \
         oxbow {peak_oxbow:.0} MiB."
    );
    println!(
        "(cargo xtask bench-remote {}, {runs} run(s) a cell, medians, cold, {:.0} s in all, {}; \
         load average before {load}, after {})",
        args.join(" "),
        started.elapsed().as_secs_f64(),
        bam.display(),
        crate::bench_local::load_average()
    );
    Ok(())
}

/// The table of rows: both sides' medians, the ratio, CPU, and a remote query's floor.
pub(crate) fn print_rows(rows: &[Row]) {
    println!(
        "\n| case | hts | other | other / hts | CPU: hts | other | needed bytes, at the link's rate |\n\
         |---|---:|---:|---:|---:|---:|---:|"
    );
    for r in rows {
        let floor = r.floor.map_or(String::new(), |(bytes, secs)| {
            format!("{:.1} MB, {secs:.3} s", bytes as f64 / 1e6)
        });
        println!(
            "| {} | {:.3} s | {} {:.3} s | {:.2}x | {:.3} s | {:.3} s | {floor} |",
            r.what,
            r.hts,
            r.other_name,
            r.other,
            r.other / r.hts,
            r.hts_cpu,
            r.other_cpu
        );
    }
}
