//! `cargo xtask bench-targets`: a BED of many lines on the benchmark BAM over an emulated link,
//! hts against samtools: `-L BED` (samtools reads the whole file and filters; hts asks the
//! index, one plan for every line) and `--region-file BED` (both through the index: the
//! multi-region iterator).

use testkit::{Link, Rng, Server};

use crate::bench_remote::{fresh_dir, timed};
use crate::bench_table::{median_f, median_u};

pub const HELP: &str = "\
cargo xtask bench-targets [--lines N] [--profile ec2|home|loopback] [--runs N]
                          [--only L|region-file] [--seed N]
  Writes a BED of N lines (default 10000; intervals of 100 bp to 5 kb, references weighted by
  length, fixed seed) for the benchmark BAM (cargo xtask bench-data makes it), serves the BAM
  through the emulated link (default ec2: 35 MB/s, 20 ms) and runs `view -L BED` (samtools
  reads the whole file; hts plans the BED's lines through the index) and `view --region-file
  BED` (both through the index) with the release hts and with samtools (cold: fresh folder,
  so htslib downloads its index; fresh cache for hts), comparing outputs. The two programs'
  runs alternate; each run's wall time and bytes are printed, then the medians (of --runs,
  default 3), GETs and connections, the median of the runs' samtools/hts ratios and the load.";

/// `lines` intervals over the references (weighted by length), as BED text.
fn bed(refs: &[(String, u64)], lines: usize, seed: u64) -> String {
    let total: u64 = refs.iter().map(|r| r.1).sum();
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(lines * 24);
    for _ in 0..lines {
        let mut x = rng.next_u64() % total.max(1);
        let (name, len) = refs
            .iter()
            .find(|(_, l)| {
                if x < *l {
                    true
                } else {
                    x -= l;
                    false
                }
            })
            .unwrap_or(&refs[0]);
        let width = 100 + rng.next_u64() % 4900;
        let beg = rng.next_u64() % len.saturating_sub(width).max(1);
        out.push_str(&format!("{name}\t{beg}\t{}\n", beg + width));
    }
    out
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    let bam = crate::bench_data::existing_bam(args)?;
    let hts = crate::release_hts()?;
    let samtools = crate::bench_remote::which("samtools").ok_or("samtools is not on PATH")?;
    let lines: usize = crate::flag_value(args, "--lines")
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let runs: usize = crate::flag_value(args, "--runs")
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let seed: u64 = crate::flag_value(args, "--seed")
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let pname = crate::flag_value(args, "--profile").unwrap_or("ec2");
    let link = Link::profile(pname).ok_or_else(|| format!("unknown profile '{pname}'"))?;
    let refs = references(&bam)?;
    let work = fresh_dir("targets")?;
    let bed_path = work.join(format!("targets-{lines}.bed"));
    std::fs::write(&bed_path, bed(&refs, lines, seed)).map_err(|e| e.to_string())?;
    println!("BED: {} ({lines} lines)", bed_path.display());

    let dir = bam.parent().ok_or("benchmark BAM has no folder")?;
    let file = bam
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("bad benchmark file name")?;
    let server = Server::start_with(dir, 0, link)?;
    let url = server.url(file);
    let only = crate::flag_value(args, "--only");
    let cases: Vec<(&str, &str)> = [("L", "-L"), ("region-file", "--region-file")]
        .into_iter()
        .filter(|(name, _)| only.is_none_or(|o| o == *name))
        .collect();
    if cases.is_empty() {
        return Err(format!("--only takes L or region-file, not {only:?}"));
    }
    let modes = [("samtools", samtools.as_path()), ("hts", hts.as_path())];
    for (case, option) in cases {
        println!("load before {case}: {}", loadavg());
        let argv = vec![
            "view".to_string(),
            option.to_string(),
            bed_path.display().to_string(),
            url.clone(),
        ];
        let mut tallies: Vec<Tally> = modes.iter().map(|_| Tally::default()).collect();
        let mut reference: Option<Vec<u8>> = None;
        // Alternated (samtools, hts, samtools, hts, ...), so both see the same machine load.
        for round in 1..=runs {
            for ((mode, program), tally) in modes.iter().zip(tallies.iter_mut()) {
                if tally.failed.is_some() {
                    continue;
                }
                let label = format!("{pname:>8} {case:>13} {mode:>9} run {round}");
                one_run(&server, program, &argv, &label, tally, &mut reference)?;
            }
        }
        summarise(&format!("{pname:>8} {case:>13}"), &modes, &tallies);
        println!("load after {case}: {}", loadavg());
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The benchmark BAM's references and their lengths.
fn references(bam: &std::path::Path) -> Result<Vec<(String, u64)>, String> {
    let reader = bam::Reader::open(&bam.display().to_string(), &bam::OpenOptions::default())
        .map_err(|e| e.to_string())?;
    Ok(reader
        .header()
        .refs()
        .iter()
        .map(|r| {
            (
                String::from_utf8_lossy(&r.name).into_owned(),
                u64::from(r.len),
            )
        })
        .collect())
}

/// One cold run of `program`: a fresh working directory (samtools' index download) and cache
/// (ours); its output compared with the first run's, its time and the server's figures kept.
fn one_run(
    server: &Server,
    program: &std::path::Path,
    argv: &[String],
    label: &str,
    tally: &mut Tally,
    reference: &mut Option<Vec<u8>>,
) -> Result<(), String> {
    let cwd = fresh_dir("cold")?;
    let cache = fresh_dir("cache")?;
    let env = [(
        "XDG_CACHE_HOME".to_string(),
        Some(cache.display().to_string()),
    )];
    server.reset();
    let run = timed(program, argv, &cwd, &env);
    let _ = std::fs::remove_dir_all(&cwd);
    let _ = std::fs::remove_dir_all(&cache);
    // A failed run (htslib's multi-region iterator over HTTP can fail on a read it did not
    // expect) is reported, not timed.
    let run = match run {
        Ok(r) => r,
        Err(e) => {
            let why: String = e.lines().nth(1).unwrap_or(&e).chars().take(120).collect();
            println!("{label}: FAILED: {why}");
            tally.failed = Some(why);
            return Ok(());
        }
    };
    match reference {
        None => *reference = Some(run.stdout),
        Some(r) => tally.same &= *r == run.stdout,
    }
    let sum = server.summary();
    println!("{label}: {:>8.3} s {:>12} B sent", run.wall, sum.written);
    tally.walls.push(run.wall);
    tally.sums.push(sum);
    Ok(())
}

/// Each program's medians of one case, then samtools' time over ours.
fn summarise(label: &str, modes: &[(&str, &std::path::Path)], tallies: &[Tally]) {
    for ((mode, _), tally) in modes.iter().zip(tallies) {
        if let Some(why) = &tally.failed {
            println!("{label} {mode:>9}: FAILED: {why}");
            continue;
        }
        println!(
            "{label} {mode:>9}: {:>8.3} s {:>12} B sent {:>6} GETs {:>4} conns{}",
            median_f(tally.walls.clone()),
            median_u(tally.sums.iter().map(|s| s.written).collect()),
            median_u(tally.sums.iter().map(|s| s.gets as u64).collect()),
            median_u(tally.sums.iter().map(|s| s.connections).collect()),
            if tally.same { "" } else { "  OUTPUT DIFFERS" }
        );
    }
    if let [sam, ours] = tallies {
        if sam.failed.is_none() && ours.failed.is_none() {
            let ratios: Vec<f64> = sam
                .walls
                .iter()
                .zip(&ours.walls)
                .map(|(s, h)| s / h)
                .collect();
            let bytes = |t: &Tally| median_u(t.sums.iter().map(|s| s.written).collect()) as f64;
            println!(
                "{label}: samtools/hts wall {:.2}x (median of the runs' ratios), bytes {:.1}x",
                median_f(ratios),
                bytes(sam) / bytes(ours).max(1.0)
            );
        }
    }
}

/// One program's runs of one case.
struct Tally {
    walls: Vec<f64>,
    sums: Vec<testkit::Summary>,
    same: bool,
    failed: Option<String>,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            walls: Vec::new(),
            sums: Vec::new(),
            same: true,
            failed: None,
        }
    }
}

/// The machine's load averages (1, 5, 15 minutes): the machine may be shared.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

/// For tests: the BED generator's first line is stable.
#[cfg(test)]
mod tests {
    #[test]
    fn bed_is_deterministic() {
        let refs = vec![("a".to_string(), 10_000u64), ("b".to_string(), 50_000u64)];
        let one = super::bed(&refs, 100, 7);
        assert_eq!(one, super::bed(&refs, 100, 7));
        assert_eq!(one.lines().count(), 100);
        for l in one.lines() {
            let f: Vec<u64> = l.split('\t').skip(1).map(|x| x.parse().unwrap()).collect();
            assert!(f[0] < f[1]);
        }
    }
}
