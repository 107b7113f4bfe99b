//! `cargo xtask bench-data`: the benchmark BAM, generated deterministically by `gen_bam.py` and
//! converted by samtools, with its BAI and CSI, in a cache folder outside the repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The seed's benchmark: 12.5 M pairs, seed 20240501 (about 2.2 GB).
pub const DEFAULT_PAIRS: u64 = 12_500_000;
pub const SEED: u64 = 20240501;

/// Where benchmark data lives: `$HTS_BENCH_DIR`, else `~/.cache/hts-bench`.
pub fn cache_dir() -> PathBuf {
    if let Ok(d) = std::env::var("HTS_BENCH_DIR") {
        return PathBuf::from(d);
    }
    let home = std::env::var("HOME").unwrap_or_else(|_| "/tmp".to_string());
    PathBuf::from(home).join(".cache/hts-bench")
}

/// The generator: `../shared/bench` when present (the source of truth), else our copy.
pub fn bench_source(root: &Path) -> PathBuf {
    let shared = root.join("../shared/bench");
    if shared.join("gen_bam.py").exists() {
        shared
    } else {
        root.join("fixtures/bench")
    }
}

pub fn bam_path(pairs: u64) -> PathBuf {
    cache_dir().join(format!("bench-{pairs}.bam"))
}

fn have(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Installs samtools (and tabix) with apt when missing and we may (root); otherwise says what
/// is needed.
pub fn ensure_samtools() -> Result<(), String> {
    crate::setup::ensure(&[crate::setup::SAMTOOLS, crate::setup::TABIX])
}

fn sh(script: &str) -> Result<(), String> {
    println!("$ {script}");
    let status = Command::new("bash")
        .args(["-o", "pipefail", "-c", script])
        .status()
        .map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("failed ({status}): {script}"))
    }
}

/// Builds the data unless it is already there.
pub fn run(root: &Path, pairs: u64) -> Result<PathBuf, String> {
    if !have("python3") {
        return Err("python3 is needed to generate the benchmark data".to_string());
    }
    ensure_samtools()?;
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let bam = bam_path(pairs);
    let done = PathBuf::from(format!("{}.done", bam.display()));
    if done.exists() {
        println!("{} is ready", bam.display());
        return Ok(bam);
    }
    let src = bench_source(root).join("gen_bam.py");
    let b = bam.display();
    sh(&format!(
        "python3 '{}' --pairs {pairs} --seed {SEED} --bed '{}/targets-{pairs}.bed' | samtools view -@1 -b -o '{b}.tmp' - && mv '{b}.tmp' '{b}'",
        src.display(),
        dir.display()
    ))?;
    sh(&format!(
        "samtools index -b -o '{b}.bai' '{b}' && samtools index -c -o '{b}.csi' '{b}'"
    ))?;
    std::fs::write(&done, b"").map_err(|e| e.to_string())?;
    println!("{} is ready", bam.display());
    Ok(bam)
}

pub const HELP: &str = "\
cargo xtask bench-data [--pairs N]
  Generates the benchmark BAM (default 12500000 pairs: 2.2 GB, 27 M records, GRCh37 names; about
  15 minutes on 2 cores) with its BAI and CSI into $HTS_BENCH_DIR or ~/.cache/hts-bench, from
  ../shared/bench/gen_bam.py (or the copy in fixtures/bench) and samtools (installed with apt
  when missing and running as root). Data already there is kept.";

pub fn cmd(args: &[String]) -> Result<(), String> {
    let pairs = match crate::flag_value(args, "--pairs") {
        Some(p) => p
            .parse()
            .map_err(|_| format!("--pairs '{p}' is not a number"))?,
        None => args
            .iter()
            .find_map(|a| a.strip_prefix("--pairs="))
            .map(|p| {
                p.parse()
                    .map_err(|_| format!("--pairs '{p}' is not a number"))
            })
            .transpose()?
            .unwrap_or(DEFAULT_PAIRS),
    };
    run(&crate::root(), pairs).map(|_| ())
}

/// The benchmark BAM for `--pairs N` (default the full one); an error saying how to make it
/// when it is missing.
pub fn existing_bam(args: &[String]) -> Result<PathBuf, String> {
    let pairs = crate::flag_value(args, "--pairs")
        .and_then(|p| p.parse().ok())
        .unwrap_or(DEFAULT_PAIRS);
    let bam = bam_path(pairs);
    if !PathBuf::from(format!("{}.done", bam.display())).exists() {
        return Err(format!(
            "{} is missing: run `cargo xtask bench-data{}` first",
            bam.display(),
            if pairs == DEFAULT_PAIRS {
                String::new()
            } else {
                format!(" --pairs {pairs}")
            }
        ));
    }
    Ok(bam)
}

/// Cases beside the shared `regions.txt` (which is read-only here), in its format: a large
/// region of one reference (7.6 MB of blocks), the object store's mid-sized case.
const EXTRA_CASES: &[&str] = &["chr22mid\t22:20000000-25000000"];

/// The query cases of `regions.txt` and [`EXTRA_CASES`] (name and regions), only those named in
/// `filter` if given.
pub fn cases(filter: Option<&str>) -> Result<Vec<(String, Vec<String>)>, String> {
    let path = bench_source(&crate::root()).join("regions.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let wanted: Option<Vec<&str>> = filter.map(|f| f.split(',').collect());
    let mut out = Vec::new();
    let lines = text.lines().chain(EXTRA_CASES.iter().copied());
    for line in lines {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let Some((name, regions)) = line.split_once('\t') else {
            continue;
        };
        if wanted.as_ref().is_some_and(|w| !w.contains(&name)) {
            continue;
        }
        out.push((
            name.to_string(),
            regions.split_whitespace().map(str::to_string).collect(),
        ));
    }
    Ok(out)
}
