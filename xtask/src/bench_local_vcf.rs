//! `cargo xtask bench-local --format vcf`: `hts tabix` against tabix 1.16 on local region
//! queries of the benchmark VCF, and `hts bgzip` against bgzip 1.16 compressing and
//! decompressing a fixed slice of it, as whole processes alternated in one run, each writing
//! into a pipe read by another process.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::bench_local::{
    load_average, median, output_differs, time_once, verify_once, Output, Sample, Sink,
};

/// The slice compressed and decompressed: the VCF's first lines up to this many bytes of text
/// (then to the end of the line).
const SLICE_BYTES: u64 = 200_000_000;

/// One comparison: hts's arguments against the other program's, whose output should be equal.
struct Pair {
    name: String,
    threads: usize,
    hts: Vec<String>,
    other: PathBuf,
    other_args: Vec<String>,
    /// Compression: the outputs are compared after decompression when the bytes differ
    /// (bgzip's blocks at the default level depend on the deflate library's version).
    compressed: bool,
}

/// The first [`SLICE_BYTES`] of the VCF's text as a file, and the same bgzipped by bgzip 1.16
/// (made once, beside the VCF).
fn slice(vcf: &Path) -> Result<(PathBuf, PathBuf), String> {
    let text = PathBuf::from(format!("{}.slice-200M.vcf", vcf.display()));
    let gz = PathBuf::from(format!("{}.gz", text.display()));
    let done = PathBuf::from(format!("{}.done", gz.display()));
    if done.exists() {
        return Ok((text, gz));
    }
    println!("==> {}: the first 200 MB of text", text.display());
    let mut bgzip = Command::new("bgzip")
        .arg("-dc")
        .arg(vcf)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run bgzip: {e}"))?;
    let mut from = bgzip.stdout.take().ok_or("no pipe from bgzip")?;
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(&text).map_err(|e| format!("{}: {e}", text.display()))?,
    );
    let mut buf = vec![0u8; 1 << 20];
    let mut written = 0u64;
    loop {
        let n = from.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        let mut chunk = &buf[..n];
        if written + n as u64 >= SLICE_BYTES {
            // Cut after the first newline at or past the limit.
            let from_at = SLICE_BYTES.saturating_sub(written) as usize;
            if let Some(nl) = chunk[from_at.min(n)..].iter().position(|&b| b == b'\n') {
                chunk = &chunk[..from_at + nl + 1];
                out.write_all(chunk).map_err(|e| e.to_string())?;
                break;
            }
        }
        out.write_all(chunk).map_err(|e| e.to_string())?;
        written += chunk.len() as u64;
    }
    out.flush().map_err(|e| e.to_string())?;
    drop(from);
    let _ = bgzip.kill();
    let _ = bgzip.wait();
    let gz_file = std::fs::File::create(&gz).map_err(|e| format!("{}: {e}", gz.display()))?;
    let ok = Command::new("bgzip")
        .args(["-@", "2", "-c"])
        .arg(&text)
        .stdout(gz_file)
        .status()
        .map_err(|e| format!("cannot run bgzip: {e}"))?;
    if !ok.success() {
        return Err(format!("bgzip -c {} failed ({ok})", text.display()));
    }
    std::fs::write(&done, b"").map_err(|e| e.to_string())?;
    Ok((text, gz))
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The cases: region queries at one thread (tabix has no threads), then bgzip at 1 and 2
/// threads (`-@ 1` is bgzip's one thread; `-@ 2` adds two workers to the main thread).
fn pairs(vcf: &Path, text: &Path, gz: &Path, tabix: &Path, bgzip: &Path) -> Vec<Pair> {
    let v = vcf.display().to_string();
    let mut out = Vec::new();
    for (name, regions) in crate::bench_vcf::cases(None) {
        let mut args = vec![v.clone()];
        args.extend(regions);
        out.push(Pair {
            name: format!("tabix {name}"),
            threads: 1,
            hts: [vec!["tabix".to_string()], args.clone()].concat(),
            other: tabix.to_path_buf(),
            other_args: args,
            compressed: false,
        });
    }
    for t in [1usize, 2] {
        let ts = t.to_string();
        let c = strings(&["-c", "-@", &ts, &text.display().to_string()]);
        out.push(Pair {
            name: "bgzip -c (200 MB slice)".to_string(),
            threads: t,
            hts: [vec!["bgzip".to_string()], c.clone()].concat(),
            other: bgzip.to_path_buf(),
            other_args: c,
            compressed: true,
        });
    }
    for t in [1usize, 2] {
        let ts = t.to_string();
        let d = strings(&["-d", "-c", "-@", &ts, &gz.display().to_string()]);
        out.push(Pair {
            name: "bgzip -d -c (200 MB slice)".to_string(),
            threads: t,
            hts: [vec!["bgzip".to_string()], d.clone()].concat(),
            other: bgzip.to_path_buf(),
            other_args: d,
            compressed: false,
        });
    }
    out
}

/// Whether hts's compressed output holds the same text as bgzip's: both decompressed by bgzip.
fn same_content(pair: &Pair, hts: &Path) -> Result<bool, String> {
    let quote = |a: &[String]| {
        a.iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let bash = PathBuf::from("bash");
    let via = |program: &Path, args: &[String]| -> Result<Output, String> {
        let script = format!(
            "set -o pipefail; '{}' {} | bgzip -dc",
            program.display(),
            quote(args)
        );
        Ok(verify_once(&bash, &["-c".to_string(), script])?.0)
    };
    Ok(via(hts, &pair.hts)? == via(&pair.other, &pair.other_args)?)
}

/// One table row: a case's medians of wall time and CPU (hts's samples, then the other
/// program's), their ratio, whether the outputs agreed, and both peak RSS (KiB).
pub(crate) fn pair_row(
    name: &str,
    threads: usize,
    output: &str,
    samples: &[Vec<Sample>; 2],
    rss_kib: [u64; 2],
) -> String {
    let wall = |v: &[Sample]| median(v.iter().map(|s| s.wall).collect());
    let cpu = |v: &[Sample]| median(v.iter().map(|s| s.cpu).collect());
    let mib = |kib: u64| kib as f64 / 1024.0;
    format!(
        "| {name} | {threads} | {:.3} s | {:.3} s | {:.2} | {output} | {:.2} / {:.2} s | {:.0} / {:.0} MiB |\n",
        wall(&samples[0]),
        wall(&samples[1]),
        wall(&samples[0]) / wall(&samples[1]),
        cpu(&samples[0]),
        cpu(&samples[1]),
        mib(rss_kib[0]),
        mib(rss_kib[1])
    )
}

/// Runs every case, checking outputs first, and returns the table (printed row by row).
pub fn run(hts: &Path, vcf: &Path, runs: usize, only: Option<&str>) -> Result<String, String> {
    let tabix = crate::bench_remote::which("tabix").ok_or("tabix is not on PATH")?;
    let bgzip = crate::bench_remote::which("bgzip").ok_or("bgzip is not on PATH")?;
    let (text, gz) = slice(vcf)?;
    let mut cases = pairs(vcf, &text, &gz, &tabix, &bgzip);
    if let Some(only) = only {
        let wanted: Vec<&str> = only.split(',').collect();
        cases.retain(|c| wanted.iter().any(|w| c.name.contains(w)));
    }
    println!("load average before: {}", load_average());
    let mut table = String::from(
        "| case | threads | hts | tabix / bgzip | hts / other | output | CPU hts / other \
         | peak RSS hts / other |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut mismatches = Vec::new();
    for pair in &cases {
        let (mine, rss_mine) = verify_once(hts, &pair.hts)?;
        let (theirs, rss_theirs) = verify_once(&pair.other, &pair.other_args)?;
        let output = if mine == theirs {
            "identical"
        } else if pair.compressed && same_content(pair, hts)? {
            "same text"
        } else {
            output_differs(&mut mismatches, &pair.name, pair.threads, &mine, &theirs)
        };
        let mut samples: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
        // Queries and decompression take well under a second: five times the rounds keep
        // their medians out of the noise of a shared machine.
        let rounds = if pair.compressed {
            runs.max(1)
        } else {
            5 * runs.max(1)
        };
        for _ in 0..rounds {
            samples[0].push(time_once(hts, &pair.hts, Sink::Pipe)?);
            samples[1].push(time_once(&pair.other, &pair.other_args, Sink::Pipe)?);
        }
        let row = pair_row(
            &pair.name,
            pair.threads,
            output,
            &samples,
            [rss_mine, rss_theirs],
        );
        print!("{row}");
        table += &row;
    }
    crate::bench_local::finish(table, &mismatches)
}
