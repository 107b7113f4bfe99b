//! `cargo xtask bench-cohort`: one process for a cohort (`hts view --manifest -c`) against a
//! loop of `hts view -c` processes 8 at a time and a loop of `samtools view -c` 8 at a time
//! (`xargs -P 8`), N objects behind the test server through a link profile, every run cold.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use testkit::cohort::{self, Spec};
use testkit::{Link, Server};

use crate::{flag_value, release_hts, root};

pub const HELP: &str = "\
cargo xtask bench-cohort [--samples N[,N...]] [--profile P] [--regions 1|40] [--pairs N]
                         [--jobs N] [--fetchers N] [--skip-samtools]
  Makes one synthetic sample BAM (the cohort demo's: gen_bam.py over chromosomes 21 and 22,
  --pairs default 2000000, with its BAI), serves it under N names (default 200) on 127.0.0.1
  through the link profile (s3 by default: 200 MB/s shared, 35 MB/s a connection, 20 ms per
  response; ec2, home, loopback), and counts the same regions of every object (--regions 1:
  one 80 kb region; 40: the demo's 40 regions) with the release hts: `hts view --manifest M
  -c` (--jobs and --fetchers passed on; hts's defaults 64 and 128), a loop of `hts view -c -X
  URL URL.bai` 8 at a time and a loop of `samtools view -c -X URL URL.bai` 8 at a time
  (xargs -P 8), each cold (a new cache folder, a new working folder). Every count is checked
  against samtools on the local file. Prints wall time, requests, connections, bytes sent,
  hts's peak memory, and the floor: the bytes the manifest run needed at the link's rate plus
  two round trips.";

/// One way of counting the cohort, as the server and the clock saw it.
struct Row {
    label: String,
    wall: f64,
    requests: usize,
    connections: u64,
    bytes: u64,
    peak_kib: Option<u64>,
}

fn number(args: &[String], name: &str, default: &str) -> Result<Vec<usize>, String> {
    flag_value(args, name)
        .unwrap_or(default)
        .split(',')
        .map(|v| {
            v.trim()
                .parse()
                .map_err(|_| format!("{name} needs numbers, got '{v}'"))
        })
        .collect()
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    let sizes = number(args, "--samples", "200")?;
    let regions_asked = number(args, "--regions", "1")?[0];
    let pairs = number(args, "--pairs", "2000000")?[0] as u64;
    let jobs = flag_value(args, "--jobs");
    let fetchers = flag_value(args, "--fetchers");
    let skip_samtools = args.iter().any(|a| a == "--skip-samtools");
    let profile = flag_value(args, "--profile").unwrap_or("s3");
    let link = Link::profile(profile).ok_or_else(|| format!("unknown profile '{profile}'"))?;
    let hts = release_hts()?;
    let work = root().join("target/bench-cohort");
    let spec = Spec {
        samples: 1,
        regions: 40,
        pairs,
        seed: 1,
    };
    println!("==> the sample BAM ({pairs} pairs) in {}", work.display());
    let made = cohort::make(&work, &spec)?;
    let sample = &made.samples[0];
    let regions = match regions_asked {
        1 => {
            // About 80 kb from the start of the second region (the first has no reads).
            let (chrom, beg, _, _) = &made.regions[1];
            vec![format!("{chrom}:{}-{}", beg + 1, beg + 80_000)]
        }
        _ => made.region_specs(),
    };
    let bam = made.bam(sample);
    let index = made.index(sample);
    let want = samtools_count(&bam, &index, &regions)?;
    let max = sizes.iter().copied().max().unwrap_or(0);
    let objects = work.join(format!("objects-{}", index_suffix(&index)));
    link_objects(&bam, &index, &objects, max)?;
    let server = Server::start_with(&objects, 0, link)?;
    let base = server.base();
    let suffix = index_suffix(&index);
    let mut table = String::new();
    for &n in &sizes {
        println!(
            "==> {n} objects x {} region(s), link {profile}, want {want} records each",
            regions.len()
        );
        let run_dir = work.join(format!("run-{n}"));
        let _ = fs::remove_dir_all(&run_dir);
        fs::create_dir_all(&run_dir).map_err(|e| e.to_string())?;
        let mut manifest = String::from("sample\tbam\tindex\n");
        let mut pairs_list = String::new();
        for i in 0..n {
            let url = format!("{base}/o{i:05}.bam");
            let _ = writeln!(manifest, "o{i:05}\t{url}\t{url}.{suffix}");
            let _ = writeln!(pairs_list, "{url} {url}.{suffix}");
        }
        let manifest_path = run_dir.join("manifest.tsv");
        fs::write(&manifest_path, manifest).map_err(|e| e.to_string())?;
        fs::write(run_dir.join("urls.txt"), pairs_list).map_err(|e| e.to_string())?;
        let mut rows = Vec::new();
        // One process.
        let mut argv: Vec<String> = ["view", "--manifest", "manifest.tsv", "-c"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if let Some(j) = jobs {
            argv.extend(["--jobs".to_string(), j.to_string()]);
        }
        if let Some(f) = fetchers {
            argv.extend(["--fetchers".to_string(), f.to_string()]);
        }
        argv.extend(regions.iter().cloned());
        let (row, out) = measure(
            &server,
            &format!("hts --manifest, --jobs {}", jobs.unwrap_or("default")),
            || run(&hts, &run_dir, &argv, "manifest"),
        )?;
        check(&out, n, &want, true)?;
        rows.push(row);
        // Loops of processes, 8 at a time.
        let region_words = regions.join(" ");
        let hts_loop = format!(
            "xargs -P 8 -n 2 sh -c 'XDG_CACHE_HOME=$PWD/cache-$$ exec {} view -c -X \"$0\" \"$1\" \
             {region_words}' < urls.txt",
            hts.display()
        );
        let (row, out) = measure(&server, "loop of hts, 8 at a time", || {
            run(
                Path::new("sh"),
                &run_dir,
                &["-c".into(), hts_loop.clone()],
                "hts-loop",
            )
        })?;
        check(&out, n, &want, false)?;
        rows.push(row);
        if !skip_samtools {
            // samtools saves a remote index in its working folder: each in a folder of its own.
            let samtools_loop = format!(
                "xargs -P 8 -n 2 sh -c 'mkdir -p st-$$ && cd st-$$ && exec samtools view -c -X \
                 \"$0\" \"$1\" {region_words}' < urls.txt"
            );
            let (row, out) = measure(&server, "loop of samtools, 8 at a time", || {
                run(
                    Path::new("sh"),
                    &run_dir,
                    &["-c".into(), samtools_loop.clone()],
                    "st-loop",
                )
            })?;
            check(&out, n, &want, false)?;
            rows.push(row);
        }
        table.push_str(&format_table(n, &regions, profile, &link, &rows));
    }
    println!("\n{table}");
    Ok(())
}

/// `.bai` or `.csi`: the index's extension.
fn index_suffix(index: &Path) -> &'static str {
    match index.extension().and_then(|e| e.to_str()) {
        Some("csi") => "csi",
        _ => "bai",
    }
}

/// `n` names for the same BAM and index (hard links; copies where links fail).
fn link_objects(bam: &Path, index: &Path, dir: &Path, n: usize) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let suffix = index_suffix(index);
    for i in 0..n {
        for (from, to) in [
            (bam, dir.join(format!("o{i:05}.bam"))),
            (index, dir.join(format!("o{i:05}.bam.{suffix}"))),
        ] {
            if !to.exists() {
                fs::hard_link(from, &to)
                    .or_else(|_| fs::copy(from, &to).map(|_| ()))
                    .map_err(|e| format!("{}: {e}", to.display()))?;
            }
        }
    }
    Ok(())
}

/// What samtools counts in the local file.
fn samtools_count(bam: &Path, index: &Path, regions: &[String]) -> Result<String, String> {
    let out = std::process::Command::new("samtools")
        .args(["view", "-c", "-X"])
        .arg(bam)
        .arg(index)
        .args(regions)
        .output()
        .map_err(|e| format!("cannot run samtools: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A program run to its end in `dir`, cold (a new cache folder), its standard output; its peak
/// memory.
fn run(program: &Path, dir: &Path, args: &[String], tag: &str) -> Result<(Vec<u8>, u64), String> {
    let cache: PathBuf = dir.join(format!("cache-{tag}"));
    let env = [(
        "XDG_CACHE_HOME".to_string(),
        Some(cache.display().to_string()),
    )];
    let m = testkit::peak::run_measured(program, dir, args, &env, Duration::from_secs(3600))?;
    if m.outcome.code != Some(0) {
        return Err(format!(
            "{} {tag} failed: {}",
            program.display(),
            String::from_utf8_lossy(&m.outcome.stderr)
        ));
    }
    Ok((m.outcome.stdout, m.peak_kib))
}

fn measure(
    server: &Server,
    label: &str,
    f: impl FnOnce() -> Result<(Vec<u8>, u64), String>,
) -> Result<(Row, Vec<u8>), String> {
    println!("    {label}");
    server.reset();
    let started = Instant::now();
    let (out, peak) = f()?;
    let wall = started.elapsed().as_secs_f64();
    let s = server.summary();
    let row = Row {
        label: label.to_string(),
        wall,
        requests: s.requests,
        connections: s.connections,
        bytes: s.written,
        // A loop's figure would be one process of many: the manifest run's only.
        peak_kib: label.contains("--manifest").then_some(peak),
    };
    Ok((row, out))
}

/// Every one of the `n` samples counted `want` (with sample names, in order, for a manifest).
fn check(out: &[u8], n: usize, want: &str, named: bool) -> Result<(), String> {
    let text = String::from_utf8_lossy(out);
    if !named {
        // Processes of a loop share one output and may interleave a count and its newline
        // ("112112\n\n"): all that can be checked is every count's digits and every newline.
        let digits: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let lines = text.matches('\n').count();
        if digits != want.repeat(n) || lines != n {
            return Err(format!(
                "the loop's counts are not {n} times {want}: {text}"
            ));
        }
        return Ok(());
    }
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() != n {
        return Err(format!("{} counts for {n} samples", lines.len()));
    }
    for (i, line) in lines.iter().enumerate() {
        let expected = format!("o{i:05}\t{want}");
        if *line != expected {
            return Err(format!("line {}: '{line}', expected '{expected}'", i + 1));
        }
    }
    Ok(())
}

/// The table of one cohort size, with the floor.
fn format_table(n: usize, regions: &[String], profile: &str, link: &Link, rows: &[Row]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{n} objects x {} region(s), link {profile} (cold; counts checked against samtools):",
        regions.len()
    );
    let _ = writeln!(
        t,
        "| | wall s | requests | connections | bytes sent | peak RSS |\n|---|---|---|---|---|---|"
    );
    for r in rows {
        let peak = r
            .peak_kib
            .map_or("-".to_string(), |k| format!("{:.0} MB", k as f64 / 1024.0));
        let _ = writeln!(
            t,
            "| {} | {:.2} | {} | {} | {} | {peak} |",
            r.label, r.wall, r.requests, r.connections, r.bytes
        );
    }
    if let (Some(first), Some(rate)) = (rows.first(), link.bandwidth) {
        let floor = first.bytes as f64 / rate + 2.0 * link.latency.as_secs_f64();
        let _ = writeln!(
            t,
            "floor (the manifest run's bytes at {:.0} MB/s + two round trips): {floor:.2} s",
            rate / 1e6
        );
    }
    t.push('\n');
    t
}
