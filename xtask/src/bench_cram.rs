//! `cargo xtask bench-data --cram`: the benchmark CRAM, the benchmark BAM's records as CRAM 3.0
//! by samtools 1.16 against the reference the reads were drawn from (`gen_bam.py --ref-fasta`),
//! both in the cache folder beside the BAM, as `shared/bench/README.md` makes them.

use std::path::{Path, PathBuf};

use crate::bench_data::{cache_dir, DEFAULT_PAIRS, SEED};

/// The generated reference (GRCh37 names and lengths, about 3.1 GB), with its `.fai`.
pub fn ref_path() -> PathBuf {
    cache_dir().join(format!("ref-{SEED}.fa"))
}

/// The benchmark CRAM of `pairs` (its `.crai` beside it).
pub fn cram_path(pairs: u64) -> PathBuf {
    cache_dir().join(format!("bench-{pairs}.cram"))
}

fn done_marker(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.done", file.display()))
}

/// Runs `script` in `dir` (its commands niced: the machine is shared and this takes long).
fn sh_in(dir: &Path, script: &str) -> Result<(), String> {
    crate::bench_data::sh(&format!("cd '{}' && {script}", dir.display()))
}

/// Makes the reference and the CRAM unless they are there (the BAM first, when missing). The
/// commands run in the cache folder with relative names: samtools writes the reference's
/// absolute path into each `@SQ UR` and its own command line into `@PG`, so the same folder
/// gives the same bytes (hence no temporary name for the CRAM: the `.done` marker, written
/// last, says it is whole).
pub fn run(root: &Path, pairs: u64) -> Result<PathBuf, String> {
    let bam = crate::bench_data::run(root, pairs)?;
    let dir = cache_dir();
    let fasta = ref_path();
    let fa = file_name(&fasta)?;
    if !done_marker(&fasta).exists() {
        let src = crate::bench_data::bench_source(root).join("gen_bam.py");
        sh_in(
            &dir,
            &format!(
                "nice -n 10 python3 '{}' --seed {SEED} --ref-fasta '{fa}.tmp' && mv '{fa}.tmp' '{fa}' \
                 && nice -n 10 samtools faidx '{fa}'",
                src.display()
            ),
        )?;
        std::fs::write(done_marker(&fasta), b"").map_err(|e| e.to_string())?;
    }
    let cram = cram_path(pairs);
    let c = file_name(&cram)?;
    if !done_marker(&cram).exists() {
        let b = file_name(&bam)?;
        sh_in(
            &dir,
            &format!(
                "nice -n 10 samtools view -@1 -C -T '{fa}' -o '{c}' '{b}' && nice -n 10 samtools index '{c}'"
            ),
        )?;
        std::fs::write(done_marker(&cram), b"").map_err(|e| e.to_string())?;
    }
    println!("{} and {} are ready", cram.display(), fasta.display());
    Ok(cram)
}

pub(crate) fn file_name(p: &Path) -> Result<String, String> {
    p.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| format!("bad file name {}", p.display()))
}

/// The benchmark CRAM and its reference, or an error saying how to make them.
pub fn existing(args: &[String]) -> Result<(PathBuf, PathBuf), String> {
    let pairs = crate::flag_value(args, "--pairs")
        .and_then(|p| p.parse().ok())
        .unwrap_or(DEFAULT_PAIRS);
    let cram = cram_path(pairs);
    let fasta = ref_path();
    if !done_marker(&cram).exists() || !done_marker(&fasta).exists() {
        return Err(format!(
            "{} or {} is missing: run `cargo xtask bench-data --cram{}` first",
            cram.display(),
            fasta.display(),
            if pairs == DEFAULT_PAIRS {
                String::new()
            } else {
                format!(" --pairs {pairs}")
            }
        ));
    }
    Ok((cram, fasta))
}
