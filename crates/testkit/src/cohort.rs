//! A synthetic cohort for the Snakemake workflow `workflows/cohort`: sample BAMs (with BAI or
//! CSI) made by samtools from one exome-like BAM of `fixtures/bench/gen_bam.py`, a regions BED,
//! the manifest and config that point the workflow at a server of them, and a bounded run of
//! Snakemake.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

use crate::corpus::{apply_env, EnvChange};

/// What to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub samples: usize,
    /// Regions in the BED (the first is on a reference without reads).
    pub regions: usize,
    /// Read pairs of the generator over the whole genome; chromosomes 21 and 22 get about 3%
    /// of them, and each sample keeps 60% of those.
    pub pairs: u64,
    pub seed: u64,
}

/// The files made: `dir/NAME.bam` with `dir/NAME.bam.bai` (or `.csi` for every fifth sample),
/// and `dir/regions.bed`.
#[derive(Debug, Clone)]
pub struct Cohort {
    pub dir: PathBuf,
    pub samples: Vec<String>,
    pub bed: PathBuf,
    /// The BED's regions: reference, 0-based start, end, name.
    pub regions: Vec<(String, u64, u64, String)>,
}

impl Cohort {
    pub fn bam(&self, sample: &str) -> PathBuf {
        self.dir.join(format!("{sample}.bam"))
    }

    /// The index made for `sample`'s BAM.
    pub fn index(&self, sample: &str) -> PathBuf {
        let csi = self.dir.join(format!("{sample}.bam.csi"));
        if csi.exists() {
            csi
        } else {
            self.dir.join(format!("{sample}.bam.bai"))
        }
    }

    /// The regions as samtools takes them (1-based, inclusive), in BED order.
    pub fn region_specs(&self) -> Vec<String> {
        self.regions
            .iter()
            .map(|(chrom, beg, end, _)| format!("{chrom}:{}-{end}", beg + 1))
            .collect()
    }
}

fn samtools(args: &[&str]) -> Result<(), String> {
    let out = Command::new("samtools")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run samtools: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "samtools {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Makes the cohort in `root/cohort-S-P-SEED` (reused when a finished one is there).
pub fn make(root: &Path, spec: &Spec) -> Result<Cohort, String> {
    let dir = root.join(format!(
        "cohort-{}-{}-{}",
        spec.samples, spec.pairs, spec.seed
    ));
    let samples: Vec<String> = (1..=spec.samples).map(|i| format!("s{i:03}")).collect();
    let done = dir.join(".done");
    if !done.exists() {
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let base = dir.join("base.bam");
        generate(&base, &dir.join("targets.bed"), spec)?;
        let base = base.display().to_string();
        for (i, name) in samples.iter().enumerate() {
            let bam = dir.join(format!("{name}.bam")).display().to_string();
            // Seed i, 60% of the reads: every sample its own.
            samtools(&[
                "view",
                "-b",
                "-s",
                &format!("{}.6", i + 1),
                "-o",
                &bam,
                &base,
            ])?;
            let kind = if (i + 1) % 5 == 0 { "-c" } else { "-b" };
            samtools(&["index", kind, &bam])?;
        }
        let _ = fs::remove_file(&base);
        fs::write(&done, format!("{spec:?}\n")).map_err(|e| e.to_string())?;
    }
    let regions = pick_regions(&dir.join("targets.bed"), spec.regions)?;
    let bed = dir.join("regions.bed");
    let text: String = regions
        .iter()
        .map(|(c, b, e, n)| format!("{c}\t{b}\t{e}\t{n}\n"))
        .collect();
    fs::write(&bed, text).map_err(|e| e.to_string())?;
    Ok(Cohort {
        dir,
        samples,
        bed,
        regions,
    })
}

/// `gen_bam.py | samtools view -b`: chromosomes 21 and 22, coordinate-sorted.
fn generate(bam: &Path, targets: &Path, spec: &Spec) -> Result<(), String> {
    let script = crate::workspace_root().join("fixtures/bench/gen_bam.py");
    let mut gen = Command::new("python3")
        .arg(&script)
        .args(["--pairs", &spec.pairs.to_string()])
        .args(["--seed", &spec.seed.to_string()])
        .args(["--chroms", "21,22", "--bed"])
        .arg(targets)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run python3 {}: {e}", script.display()))?;
    let stdout = gen.stdout.take().ok_or("no generator output")?;
    let convert = Command::new("samtools")
        .args(["view", "-b", "-o"])
        .arg(bam)
        .arg("-")
        .stdin(stdout)
        .status()
        .map_err(|e| format!("cannot run samtools: {e}"))?;
    let generated = gen.wait().map_err(|e| e.to_string())?;
    if generated.success() && convert.success() {
        Ok(())
    } else {
        Err(format!(
            "making {} failed (gen_bam.py {generated}, samtools {convert})",
            bam.display()
        ))
    }
}

/// `n` regions: one on reference 1 (no reads there), then windows of 10 kb either side of exons
/// spread evenly over the generator's targets, sorted and apart.
fn pick_regions(targets: &Path, n: usize) -> Result<Vec<(String, u64, u64, String)>, String> {
    let text = fs::read_to_string(targets).map_err(|e| format!("{}: {e}", targets.display()))?;
    let exons: Vec<(String, u64, u64)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((
                f.next()?.to_string(),
                f.next()?.parse().ok()?,
                f.next()?.parse().ok()?,
            ))
        })
        .collect();
    let mut out = vec![("1".to_string(), 1_000_000, 1_010_000, "r01".to_string())];
    let want = n.saturating_sub(1);
    for k in 0..want {
        let (chrom, beg, end) = &exons[k * exons.len() / want.max(1)];
        let (beg, end) = (beg.saturating_sub(10_000), end + 10_000);
        let apart = out.last().is_none_or(|(c, _, e, _)| c != chrom || *e < beg);
        if apart {
            out.push((chrom.clone(), beg, end, format!("r{:02}", out.len() + 1)));
        }
    }
    if out.len() < n {
        return Err(format!("only {} regions could be picked", out.len()));
    }
    Ok(out)
}

/// How the workflow is pointed at the served cohort.
#[derive(Debug, Clone)]
pub struct Setup {
    pub hts: PathBuf,
    /// The server of the cohort folder, `http://127.0.0.1:PORT`.
    pub base_url: String,
    pub threads: u32,
    pub fetchers: u32,
    pub retries: u32,
    pub retry_delay: f64,
    pub region_file: bool,
    /// Samples per job (1: one job per sample; more: one `hts view --manifest` per batch).
    pub batch_size: usize,
}

impl Setup {
    /// The workflow's settings for tests: the `hts` under test, one thread and 4 requests in
    /// flight a job, one retry a second later, the BED's regions as arguments, one job a
    /// sample. Change what a test is about with struct update syntax.
    pub fn for_tests(base_url: String) -> Setup {
        Setup {
            hts: PathBuf::from(crate::hts()),
            base_url,
            threads: 1,
            fetchers: 4,
            retries: 1,
            retry_delay: 1.0,
            region_file: false,
            batch_size: 1,
        }
    }
}

/// A stand-in for a pre-signed URL's query string (the server ignores it; logs must not
/// show it).
pub const FAKE_SIGNATURE: &str = "X-Amz-Signature=cohort0secret0signature";

/// Writes `workdir/manifest.tsv` and `workdir/config.yaml` (outputs to `workdir/out`). The
/// manifest names indexes every way the workflow takes them: an index column, `##idx##`,
/// signed URLs with an index column, and none (hts finds it).
pub fn write_setup(workdir: &Path, cohort: &Cohort, setup: &Setup) -> Result<(), String> {
    fs::create_dir_all(workdir).map_err(|e| format!("{}: {e}", workdir.display()))?;
    let mut manifest = String::from("sample\tbam\tindex\n");
    for (i, s) in cohort.samples.iter().enumerate() {
        let index_name = cohort.index(s);
        let index_name = index_name
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let bam = format!("{}/{s}.bam", setup.base_url);
        let index = format!("{}/{index_name}", setup.base_url);
        let signed = |url: &str| format!("{url}?{FAKE_SIGNATURE}&X-Amz-Expires=3600");
        let line = match i % 4 {
            0 => format!("{s}\t{bam}\t{index}"),
            1 => format!("{s}\t{}##idx##{}\t", signed(&bam), signed(&index)),
            2 => format!("{s}\t{}\t{}", signed(&bam), signed(&index)),
            _ => format!("{s}\t{bam}\t"),
        };
        manifest.push_str(&line);
        manifest.push('\n');
    }
    fs::write(workdir.join("manifest.tsv"), manifest).map_err(|e| e.to_string())?;
    let config = format!(
        "manifest: manifest.tsv\nregions: {}\noutdir: out\nhts: {}\nthreads: {}\nfetchers: {}\n\
         retries: {}\nretry_delay: {}\nregion_file: {}\nbatch_size: {}\n",
        cohort.bed.display(),
        setup.hts.display(),
        setup.threads,
        setup.fetchers,
        setup.retries,
        setup.retry_delay,
        setup.region_file,
        setup.batch_size
    );
    fs::write(workdir.join("config.yaml"), config).map_err(|e| e.to_string())
}

/// One run of Snakemake.
#[derive(Debug)]
pub struct WorkflowRun {
    pub success: bool,
    /// Snakemake's output (stdout and stderr).
    pub output: String,
    pub elapsed: Duration,
    /// The samples whose `extract` job ran, once per attempt.
    pub extracted: Vec<String>,
    /// The batches (`b000`, ...) whose `extract_BATCH` job ran, once per attempt.
    pub batches: Vec<String>,
}

/// Runs the cohort workflow in `workdir` (set up by [`write_setup`]) with `-j jobs`, `extra`
/// arguments and `env` (e.g. an S3 stack's); killed after `limit`. hts's cache (and
/// Snakemake's) is `workdir/.cache`: a new folder starts cold, a rerun in the same folder finds
/// what the first run kept.
pub fn run_workflow(
    snakemake: &Path,
    workdir: &Path,
    jobs: usize,
    limit: Duration,
    extra: &[&str],
    env: &[EnvChange],
) -> Result<WorkflowRun, String> {
    let snakefile = crate::workspace_root().join("workflows/cohort/Snakefile");
    let log_path = workdir.join("snakemake.out");
    let log = fs::File::create(&log_path).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut command = Command::new(snakemake);
    apply_env(&mut command, env);
    let mut child = command
        .arg("-s")
        .arg(&snakefile)
        .arg("-d")
        .arg(workdir)
        .arg("--configfile")
        .arg(workdir.join("config.yaml"))
        .args(["-j", &jobs.to_string(), "--nocolor"])
        .args(extra)
        .env("XDG_CACHE_HOME", workdir.join(".cache"))
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", snakemake.display()))?;
    let status = match child.wait_timeout(limit).map_err(|e| e.to_string())? {
        Some(status) => status,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("snakemake did not finish within {limit:?}"));
        }
    };
    let output = fs::read_to_string(&log_path).map_err(|e| e.to_string())?;
    let extracted = jobs_of(&output, "extract");
    let batches = batch_jobs(&output);
    Ok(WorkflowRun {
        success: status.success(),
        output,
        elapsed: started.elapsed(),
        extracted,
        batches,
    })
}

/// The batch of each `extract_BATCH` job in Snakemake's output (the workflow's rules made in a
/// loop, one per batch), in order.
pub fn batch_jobs(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| {
            let t = line.trim();
            let name = t
                .strip_prefix("rule ")
                .or_else(|| t.strip_prefix("localrule "))?;
            name.strip_suffix(':')?
                .strip_prefix("extract_")
                .map(str::to_string)
        })
        .collect()
}

/// The `sample` wildcard of each job of `rule` in Snakemake's output, in order.
pub fn jobs_of(output: &str, rule: &str) -> Vec<String> {
    let headers = [format!("rule {rule}:"), format!("localrule {rule}:")];
    let mut out = Vec::new();
    let mut inside = false;
    for line in output.lines() {
        let t = line.trim();
        if t.ends_with(':') && (t.starts_with("rule ") || t.starts_with("localrule ")) {
            inside = headers.iter().any(|h| h == t);
        } else if let Some(w) = t.strip_prefix("wildcards: ").filter(|_| inside) {
            out.extend(
                w.split(", ")
                    .filter_map(|kv| kv.strip_prefix("sample="))
                    .map(str::to_string),
            );
            inside = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn jobs_of_a_rule_from_snakemake_output() {
        let out = "\
[Thu Dec  3 08:15:32 2026]
rule extract:
    input: r.bed
    log: out/logs/s2.log
    jobid: 3
    wildcards: sample=s2
    threads: 2
localrule summary:
    input: out/stats/s1.tsv
localrule extract:
    wildcards: sample=s7
";
        assert_eq!(super::jobs_of(out, "extract"), ["s2", "s7"]);
        assert!(super::jobs_of(out, "summary").is_empty());
        assert!(super::batch_jobs(out).is_empty());
        let batched = "rule extract_b001:\n    log: out/logs/b001.log\nlocalrule summary:\n\
                       rule extract_b000:\n";
        assert_eq!(super::batch_jobs(batched), ["b001", "b000"]);
        assert!(super::jobs_of(batched, "extract").is_empty());
    }
}
