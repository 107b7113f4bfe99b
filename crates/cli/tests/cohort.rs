//! The cohort workflow (`workflows/cohort`) end to end: Snakemake, installed from PyPI on first
//! use (`testkit::tools`), runs this hts over 20 BAMs served on 127.0.0.1 in batches of
//! [`BATCH`] (one `hts view --manifest` per job) while about one request in four gets a
//! transient fault, and one object stays unavailable longer than hts's own retries last (its
//! job runs that sample again, alone). Every per-sample BAM, decompressed, must equal what
//! samtools writes for the same regions from the local file, its index what `samtools index`
//! makes of it, and the table's counts `samtools view -c`; a rerun after deleting two outputs
//! must redo only the two batches holding them. Two samples are `s3://` objects of a real S3
//! (s3s-fs, as the S3 tests use it). With `region_file: true` the batches give hts the BED
//! with `--region-file`, each sample's output then samtools' `--region-file` one.
//! Needs samtools and python3 (3.11+, with venv), which CI installs.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use testkit::cohort::{self, Cohort, Setup, Spec, WorkflowRun};
use testkit::s3::{self, S3Stack};
use testkit::{Chaos, Fault, Rule, Server};

const SAMPLES: usize = 20;
/// Samples per job: 5 jobs, run 4 at a time.
const BATCH: usize = 4;
const REGIONS: usize = 12;
/// Unavailable for its first 12 requests: both opening requests of the first attempt exhaust
/// hts's 5 retries (each waits 0.1 to 1.6 s), so Snakemake must run the job again.
const DOWN: &str = "s006";
/// Its batch (s004 to s007).
const DOWN_BATCH: &str = "b001";
/// Deleted before the rerun: one from the first batch, one from the last.
const DELETED: [&str; 2] = ["s003", "s017"];
const DELETED_BATCHES: [&str; 2] = ["b000", "b004"];
/// Read from a real S3 (s3s-fs, which checks every signature) as `s3://` URLs, one with an
/// index column, one with `##idx##`.
const S3_SAMPLES: [&str; 2] = ["s009", "s010"];
const BUCKET: &str = "cohort";
/// Bound on each Snakemake run.
const LIMIT: Duration = Duration::from_secs(300);

fn scratch() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("cohort")
}

fn samtools(args: &[&str]) -> Vec<u8> {
    let out = Command::new("samtools")
        .args(args)
        .output()
        .expect("samtools runs (CI installs it)");
    assert!(
        out.status.success(),
        "samtools {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn inflate(path: &Path) -> Vec<u8> {
    let data = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(&data[..])
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("{}: not BGZF: {e}", path.display()));
    out
}

/// A decompressed BAM with the `@PG` line hts added taken out of its header text (there must be
/// one: it is the output's provenance).
fn without_hts_pg(bam: Vec<u8>, name: &str) -> Vec<u8> {
    assert_eq!(&bam[..4], b"BAM\x01", "{name}: not BAM");
    let l_text = u32::from_le_bytes([bam[4], bam[5], bam[6], bam[7]]) as usize;
    let text = String::from_utf8_lossy(&bam[8..8 + l_text]).into_owned();
    let kept: Vec<&str> = text
        .split_inclusive('\n')
        .filter(|l| !l.starts_with("@PG\tID:hts\t"))
        .collect();
    assert_eq!(
        text.split_inclusive('\n').count(),
        kept.len() + 1,
        "{name}: one @PG line of hts"
    );
    let kept = kept.concat();
    let mut out = b"BAM\x01".to_vec();
    out.extend_from_slice(&(kept.len() as u32).to_le_bytes());
    out.extend_from_slice(kept.as_bytes());
    out.extend_from_slice(&bam[8 + l_text..]);
    out
}

/// The sample's output against samtools on the local file: records and header, and the index.
/// A batch gives hts the BED's regions as arguments, merged where they overlap or touch; the
/// test's BED is sorted and its regions apart (checked here), so samtools gets them as they are,
/// as arguments too (without `-M`: each region in turn, as hts reads them).
fn check_sample(cohort: &Cohort, out: &Path, sample: &str) {
    for pair in cohort.regions.windows(2) {
        let ((c0, _, e0, _), (c1, b1, _, _)) = (&pair[0], &pair[1]);
        assert!(
            c0 != c1 || e0 < b1,
            "the BED's regions are sorted and apart"
        );
    }
    check_output(cohort, out, sample, &[], &cohort.region_specs());
}

/// The sample's output against `samtools view -b SELECT LOCAL REGIONS...` (with the sample's
/// index) of its local file: records and header, and the index.
fn check_output(cohort: &Cohort, out: &Path, sample: &str, select: &[&str], regions: &[String]) {
    let bam = out.join(format!("bams/{sample}.bam"));
    let expected = out.join(format!("{sample}.samtools.bam"));
    let (local, index) = (cohort.bam(sample), cohort.index(sample));
    let mut args = vec!["view", "-b", "--no-PG", "-o"];
    let (expected_s, local_s, index_s) = (
        expected.display().to_string(),
        local.display().to_string(),
        index.display().to_string(),
    );
    args.push(expected_s.as_str());
    args.extend_from_slice(select);
    if regions.is_empty() {
        // -X wants a region after the index: the index beside the file is found without it.
        args.push(&local_s);
    } else {
        args.extend(["-X", &local_s, &index_s]);
        args.extend(regions.iter().map(String::as_str));
    }
    samtools(&args);
    let ours = without_hts_pg(inflate(&bam), sample);
    assert!(
        ours == inflate(&expected),
        "{sample}: decompressed output differs from samtools' ({} vs {} bytes)",
        ours.len(),
        inflate(&expected).len()
    );
    let made = out.join(format!("{sample}.samtools.csi"));
    let bam_s = bam.display().to_string();
    samtools(&["index", "-c", &bam_s, &made.display().to_string()]);
    assert!(
        inflate(&out.join(format!("bams/{sample}.bam.csi"))) == inflate(&made),
        "{sample}: the index differs from samtools index of the output"
    );
    let _ = fs::remove_file(&expected);
    let _ = fs::remove_file(&made);
}

/// summary.tsv as rows of named fields, checked against `samtools view -c` on the local files.
fn check_table(cohort: &Cohort, out: &Path) -> Vec<BTreeMap<String, String>> {
    let text = fs::read_to_string(out.join("summary.tsv")).expect("summary.tsv");
    let mut lines = text.lines();
    let names: Vec<&str> = lines.next().expect("a header").split('\t').collect();
    let rows: Vec<BTreeMap<String, String>> = lines
        .map(|l| {
            names
                .iter()
                .map(|n| n.to_string())
                .zip(l.split('\t').map(str::to_string))
                .collect()
        })
        .collect();
    let regions = cohort.regions.len();
    assert_eq!(
        rows.len(),
        cohort.samples.len() * regions,
        "one row per sample and region"
    );
    let specs = cohort.region_specs();
    for (i, row) in rows.iter().enumerate() {
        let (sample, k) = (&cohort.samples[i / regions], i % regions);
        assert_eq!(&row["sample"], sample);
        assert_eq!(row["region"], cohort.regions[k].3, "named as in the BED");
        let local = cohort.bam(sample).display().to_string();
        let count = String::from_utf8(samtools(&["view", "-c", &local, &specs[k]])).unwrap();
        assert_eq!(row["records"], count.trim(), "{sample} {}", specs[k]);
        for cost in ["bytes_fetched", "requests", "wall_s"] {
            let v: f64 = row[cost].parse().unwrap();
            assert!(v > 0.0, "{sample}: {cost} {v}");
        }
    }
    let records: u64 = rows
        .iter()
        .map(|r| r["records"].parse::<u64>().unwrap())
        .sum();
    println!("table: {} rows, {records} records", rows.len());
    assert!(records > 1000, "the regions hold records: {records}");
    assert!(rows.iter().any(|r| r["records"] == "0"), "an empty region");
    rows
}

/// No signature in what the workflow writes for people to read, nor in the BAMs.
fn check_no_secrets(work: &Path, run: &WorkflowRun) {
    let secrets = [cohort::FAKE_SIGNATURE, s3::SECRET_KEY];
    assert!(
        secrets.iter().all(|s| !run.output.contains(s)),
        "Snakemake's output"
    );
    let mut files = vec![work.join("out/summary.tsv")];
    for dir in ["out/logs", "out/stats"] {
        for e in fs::read_dir(work.join(dir)).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    for f in files {
        let text = fs::read_to_string(&f).unwrap();
        assert!(secrets.iter().all(|s| !text.contains(s)), "{}", f.display());
    }
    // Nor in the outputs' @PG command lines.
    for e in fs::read_dir(work.join("out/bams")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "bam") {
            let header = samtools(&["view", "-H", &path.display().to_string()]);
            let header = String::from_utf8_lossy(&header);
            assert!(header.contains("@PG\tID:hts\t"), "{}", path.display());
            assert!(
                !header.contains(cohort::FAKE_SIGNATURE),
                "{}",
                path.display()
            );
        }
    }
}

/// The S3 test bed with [`S3_SAMPLES`] (BAM and index) in [`BUCKET`], and the manifest's lines
/// for them made `s3://` URLs.
fn s3_samples(cohort: &Cohort, work: &Path) -> S3Stack {
    let mut objects = Vec::new();
    for sample in S3_SAMPLES {
        for source in [cohort.bam(sample), cohort.index(sample)] {
            let key = source.file_name().unwrap().to_string_lossy().into_owned();
            objects.push(s3::Object { source, key });
        }
    }
    let stack = S3Stack::start(&[(BUCKET, objects)], testkit::Link::default())
        .unwrap_or_else(|e| panic!("the S3 test bed: {e}"));
    let manifest = work.join("manifest.tsv");
    let text = fs::read_to_string(&manifest).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let sample = line.split('\t').next().unwrap_or_default();
            if !S3_SAMPLES.contains(&sample) {
                return line.to_string();
            }
            let index = cohort.index(sample);
            let index = index.file_name().unwrap().to_string_lossy();
            let (bam, index) = (
                format!("s3://{BUCKET}/{sample}.bam"),
                format!("s3://{BUCKET}/{index}"),
            );
            if sample == S3_SAMPLES[0] {
                format!("{sample}\t{bam}\t{index}")
            } else {
                format!("{sample}\t{bam}##idx##{index}\t")
            }
        })
        .collect();
    fs::write(&manifest, lines.join("\n") + "\n").unwrap();
    stack
}

fn modified(out: &Path) -> BTreeMap<String, SystemTime> {
    fs::read_dir(out.join("bams"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, e.metadata().unwrap().modified().unwrap())
        })
        .collect()
}

#[test]
fn the_workflow_helpers_pass_their_tests() {
    let snakemake = testkit::tools::snakemake().expect("Snakemake installs from PyPI");
    let python = snakemake.with_file_name("python");
    let dir = testkit::workspace_root().join("workflows/cohort");
    let out = Command::new(python)
        .args(["-B", "-m", "unittest", "discover", "-s"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("OK"), "{text}");
}

#[test]
fn cohort_under_faults_equals_samtools_and_a_rerun_redoes_only_what_was_deleted() {
    let snakemake = testkit::tools::snakemake().expect("Snakemake installs from PyPI");
    let spec = Spec {
        samples: SAMPLES,
        regions: REGIONS,
        pairs: 1_000_000,
        seed: 11,
    };
    let cohort = cohort::make(&scratch(), &spec).expect("the cohort's BAMs are made");
    let server = Server::start(&cohort.dir).unwrap();
    let faults = || {
        server.add_chaos(Chaos::transient("/", 4, 2024));
        server.add_rule(Rule {
            path: format!("/{DOWN}.bam"),
            fault: Fault::status(503),
            times: Some(12),
        });
    };
    faults();
    let work = scratch().join(format!("work-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    let setup = Setup {
        retries: 3,
        batch_size: BATCH,
        ..Setup::for_tests(server.base())
    };
    cohort::write_setup(&work, &cohort, &setup).unwrap();
    let stack = s3_samples(&cohort, &work);
    stack.proxy.add_chaos(Chaos::transient("/", 4, 7));
    let env = stack.env(s3::SECRET_KEY);
    let run = cohort::run_workflow(&snakemake, &work, 4, LIMIT, &[], &env).unwrap();
    assert!(run.success, "{}", run.output);
    // The S3 samples came from the bucket, every request signed.
    let s3_log = stack.proxy.log();
    for sample in S3_SAMPLES {
        let signed = s3_log
            .iter()
            .filter(|e| e.path == format!("/{BUCKET}/{sample}.bam"))
            .filter(|e| e.header("authorization").is_some())
            .count();
        assert!(signed >= 2, "{sample}: {signed} signed requests");
    }
    println!(
        "S3: {} requests, {} faults served",
        s3_log.len(),
        stack.proxy.faults_served()
    );
    let served = server.faults_served();
    println!(
        "first run: {:.1} s, {} requests, {served} faults served",
        run.elapsed.as_secs_f64(),
        server.log().len()
    );
    assert!(served >= 20, "{served} faults");
    // The batch's job ran DOWN again, alone, and no other sample of its batch.
    let down_log = fs::read_to_string(work.join(format!("out/logs/{DOWN_BATCH}.log"))).unwrap();
    assert!(
        down_log.contains(&format!(
            "[cohort] {DOWN}: attempt 2 after 1 s ({DOWN_BATCH})"
        )),
        "{DOWN} was not run again:\n{down_log}"
    );
    assert_eq!(
        down_log.matches(": attempt 2 ").count(),
        1,
        "only {DOWN} again:\n{down_log}"
    );
    assert_eq!(down_log.matches("hts view --manifest").count(), 2);
    assert!(
        run.output
            .contains(&format!("sample {DOWN}: hts view failed (attempt 1)")),
        "{}",
        run.output
    );
    // One job per batch, each run once (the failed sample's retry is within its job).
    let mut batches = run.batches.clone();
    batches.sort();
    assert_eq!(batches, ["b000", "b001", "b002", "b003", "b004"]);
    assert!(run.extracted.is_empty(), "no per-sample jobs");
    let out = work.join("out");
    for sample in &cohort.samples {
        check_sample(&cohort, &out, sample);
    }
    let first = check_table(&cohort, &out);
    // Scattered faults are mostly hts's own to survive: its retries, counted in the table
    // (each sample's on each of its rows).
    let retries: u64 = first
        .iter()
        .step_by(REGIONS)
        .map(|r| r["retries"].parse::<u64>().unwrap())
        .sum();
    assert!(
        retries as usize >= served / 2,
        "{retries} retries, {served} faults"
    );
    check_no_secrets(&work, &run);

    let before = modified(&out);
    for s in DELETED {
        fs::remove_file(out.join(format!("bams/{s}.bam"))).unwrap();
    }
    server.clear_rules();
    server.reset();
    faults();
    let rerun = cohort::run_workflow(&snakemake, &work, 4, LIMIT, &[], &env).unwrap();
    assert!(rerun.success, "{}", rerun.output);
    println!("rerun: {:.1} s", rerun.elapsed.as_secs_f64());
    let mut redone = rerun.batches.clone();
    redone.sort();
    assert_eq!(redone, DELETED_BATCHES, "{}", rerun.output);
    // The two batches' samples, all of them, and nothing else.
    let redone: Vec<&String> = cohort
        .samples
        .chunks(BATCH)
        .enumerate()
        .filter(|(i, _)| *i == 0 || *i == SAMPLES / BATCH - 1)
        .flat_map(|(_, c)| c)
        .collect();
    let after = modified(&out);
    for (name, time) in &before {
        let again = redone.iter().any(|s| name.starts_with(&format!("{s}.")));
        assert_eq!(after[name] == *time, !again, "{name}");
    }
    for s in redone {
        check_sample(&cohort, &out, s);
    }
    let second = check_table(&cohort, &out);
    let counts = |rows: &[BTreeMap<String, String>]| -> Vec<String> {
        rows.iter().map(|r| r["records"].clone()).collect()
    };
    assert_eq!(counts(&first), counts(&second));
    check_no_secrets(&work, &rerun);
    let _ = fs::remove_dir_all(&work);
}

/// `region_file: true` with batches: each batch's one `hts view --manifest` gets the BED as
/// `--region-file` (overlapping regions, out of order), and every sample's output is what
/// `samtools view --region-file` writes from its local file (each record once, in file order),
/// as the one-sample job's is; the table's counts are samtools' for each region.
#[test]
fn batches_with_region_file_equal_samtools_region_file() {
    let snakemake = testkit::tools::snakemake().expect("Snakemake installs from PyPI");
    let spec = Spec {
        samples: 8,
        regions: 8,
        pairs: 1_000_000,
        seed: 12,
    };
    let mut cohort = cohort::make(&scratch(), &spec).expect("the cohort's BAMs are made");
    // Each region but the empty first one (reference 1) with another over its second half and
    // past its end, and the list reversed: the multi-region iterator merges and sorts them.
    let mut regions = Vec::new();
    for (i, (chrom, beg, end, name)) in cohort.regions.iter().enumerate() {
        regions.push((chrom.clone(), *beg, *end, name.clone()));
        if i > 0 {
            let half = beg + (end - beg) / 2;
            regions.push((chrom.clone(), half, end + 5_000, format!("{name}b")));
        }
    }
    regions.reverse();
    let bed = cohort
        .dir
        .join(format!("overlapping-{}.bed", std::process::id()));
    let text: String = regions
        .iter()
        .map(|(c, b, e, n)| format!("{c}\t{b}\t{e}\t{n}\n"))
        .collect();
    fs::write(&bed, text).unwrap();
    cohort.regions = regions;
    cohort.bed = bed.clone();
    let server = Server::start(&cohort.dir).unwrap();
    let work = scratch().join(format!("work-region-file-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    let setup = Setup {
        region_file: true,
        batch_size: 4,
        ..Setup::for_tests(server.base())
    };
    cohort::write_setup(&work, &cohort, &setup).unwrap();
    let run = cohort::run_workflow(&snakemake, &work, 2, LIMIT, &[], &[]).unwrap();
    assert!(run.success, "{}", run.output);
    let mut batches = run.batches.clone();
    batches.sort();
    assert_eq!(batches, ["b000", "b001"], "{}", run.output);
    assert!(run.extracted.is_empty(), "no per-sample jobs");
    let log = fs::read_to_string(work.join("out/logs/b000.log")).unwrap();
    assert!(
        log.contains(&format!("--region-file {}", bed.display())),
        "{log}"
    );
    let out = work.join("out");
    let bed_s = bed.display().to_string();
    for sample in &cohort.samples {
        check_output(&cohort, &out, sample, &["--region-file", &bed_s], &[]);
    }
    check_table(&cohort, &out);
    let _ = fs::remove_file(&bed);
    let _ = fs::remove_dir_all(&work);
}
