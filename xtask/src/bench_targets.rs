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
  so htslib downloads its index; fresh cache for hts), comparing outputs.
  Prints wall time (median of --runs, default 3), bytes sent by the server, GETs, connections.";

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
    let reader = bam::Reader::open(&bam.display().to_string(), &bam::OpenOptions::default())
        .map_err(|e| e.to_string())?;
    let refs: Vec<(String, u64)> = reader
        .header()
        .refs()
        .iter()
        .map(|r| {
            (
                String::from_utf8_lossy(&r.name).into_owned(),
                u64::from(r.len),
            )
        })
        .collect();
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
    for (case, option) in cases {
        let mut reference: Option<Vec<u8>> = None;
        for (mode, program) in [("samtools", samtools.as_path()), ("hts", hts.as_path())] {
            let mut walls = Vec::new();
            let mut sums = Vec::new();
            let mut same = true;
            let mut failed: Option<String> = None;
            for _ in 0..runs {
                // A fresh working directory (samtools' index download) and cache (ours).
                let cwd = fresh_dir("cold")?;
                let cache = fresh_dir("cache")?;
                let env = [(
                    "XDG_CACHE_HOME".to_string(),
                    Some(cache.display().to_string()),
                )];
                server.reset();
                let argv = vec![
                    "view".to_string(),
                    option.to_string(),
                    bed_path.display().to_string(),
                    url.clone(),
                ];
                let run = timed(program, &argv, &cwd, &env);
                let _ = std::fs::remove_dir_all(&cwd);
                let _ = std::fs::remove_dir_all(&cache);
                // A failed run (htslib's multi-region iterator over HTTP can fail on a read it
                // did not expect) is reported, not timed.
                let run = match run {
                    Ok(r) => r,
                    Err(e) => {
                        failed = Some(e.lines().nth(1).unwrap_or(&e).chars().take(120).collect());
                        break;
                    }
                };
                match &reference {
                    None => reference = Some(run.stdout),
                    Some(r) => same &= *r == run.stdout,
                }
                walls.push(run.wall);
                sums.push(server.summary());
            }
            if let Some(why) = failed {
                println!("{pname:>8} {case:>13} {mode:>9}: FAILED: {why}");
                continue;
            }
            println!(
                "{pname:>8} {case:>13} {mode:>9}: {:>8.3} s {:>12} B sent {:>6} GETs {:>4} conns{}",
                median_f(walls),
                median_u(sums.iter().map(|s| s.written).collect()),
                median_u(sums.iter().map(|s| s.gets as u64).collect()),
                median_u(sums.iter().map(|s| s.connections).collect()),
                if same { "" } else { "  OUTPUT DIFFERS" }
            );
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
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
