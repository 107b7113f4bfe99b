//! `hts view --manifest`: a cohort of BAM and CRAM samples served by the test server (the
//! conformance and CRAM fixtures under several names), every sample's result compared with
//! `samtools view` (1.16.1) of the same local file and regions: counts in manifest order,
//! one output per sample, a broken and a missing sample among good ones, a server that
//! refuses requests above a rate, `-M` and `--region-file` (each sample as samtools reads its
//! file with them), and 2,500 samples in bounded time and memory. Needs samtools.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use testkit::corpus::{run_with_timeout, Outcome};
use testkit::peak::run_measured;
use testkit::{hts, RateLimit, Server};

/// Regions of both kinds: `rand.bam` has chr1..chrM, the CRAMs ref1..ref3; a sample skips the
/// names its header lacks, as samtools does.
const REGIONS: [&str; 5] = [
    "chr1:10000-20000",
    "chr2:5000-5400",
    "chrM:100-300",
    "ref1:300-400",
    "ref2:100-900",
];
const LIMIT: Duration = Duration::from_secs(120);

/// A served folder of samples: `bN.bam` (with `.bai`, or a `.csi` the manifest names) and
/// `cN.cram` (with `.crai`), all hard links to the fixtures, plus the CRAMs' reference.
struct Bed {
    dir: PathBuf,
    server: Server,
    /// Sample name, served file name, the local original.
    samples: Vec<(String, String, PathBuf)>,
}

fn fixture(path: &str) -> PathBuf {
    testkit::workspace_root().join("fixtures").join(path)
}

fn reference() -> String {
    fixture("cram/ref.fa").display().to_string()
}

fn link(from: &Path, to: &Path) {
    fs::hard_link(from, to)
        .or_else(|_| fs::copy(from, to).map(|_| ()))
        .unwrap();
}

impl Bed {
    fn new(tag: &str, bams: usize, crams: usize) -> Bed {
        let dir = std::env::temp_dir().join(format!("hts-manifest-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let bam = fixture("conformance/data/rand.bam");
        let cram = fixture("cram/aligned-3.0.cram");
        let mut samples = Vec::new();
        for i in 0..bams.max(crams) {
            if i < bams {
                let name = format!("b{i:02}.bam");
                link(&bam, &dir.join(&name));
                link(
                    &fixture("conformance/data/rand.bam.bai"),
                    &dir.join(format!("{name}.bai")),
                );
                link(
                    &fixture("conformance/data/rand.bam.csi"),
                    &dir.join(format!("b{i:02}.csi")),
                );
                samples.push((format!("sb{i:02}"), name, bam.clone()));
            }
            if i < crams {
                let name = format!("c{i:02}.cram");
                link(&cram, &dir.join(&name));
                link(
                    &fixture("cram/aligned-3.0.cram.crai"),
                    &dir.join(format!("{name}.crai")),
                );
                samples.push((format!("sc{i:02}"), name, cram.clone()));
            }
        }
        let server = Server::start(&dir).unwrap();
        Bed {
            dir,
            server,
            samples,
        }
    }

    /// The manifest of every sample (odd BAMs name their CSI in the index column), written.
    fn manifest(&self, extra: &[(&str, &str)]) -> PathBuf {
        let mut text = String::from("sample\tfile\tindex\n");
        for (i, (sample, name, _)) in self.samples.iter().enumerate() {
            let url = self.server.url(name);
            let index = match name.strip_suffix(".bam") {
                Some(stem) if i % 4 == 2 => self.server.url(&format!("{stem}.csi")),
                _ => String::new(),
            };
            text.push_str(&format!("{sample}\t{url}\t{index}\n"));
        }
        for (sample, file) in extra {
            text.push_str(&format!("{sample}\t{file}\n"));
        }
        let path = self.dir.join("manifest.tsv");
        fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// `hts view --manifest MANIFEST ARGS... REGIONS...`, bounded in time.
fn cohort(manifest: &Path, args: &[&str]) -> Outcome {
    cohort_in(manifest, args, &REGIONS)
}

/// `hts view --manifest MANIFEST ARGS... REGIONS...` of other regions.
fn cohort_in(manifest: &Path, args: &[&str], regions: &[&str]) -> Outcome {
    let (mut argv, env) = cohort_command(manifest, args);
    argv.truncate(argv.len() - REGIONS.len());
    argv.extend(regions.iter().map(|r| r.to_string()));
    let dir = manifest.parent().unwrap();
    run_with_timeout(hts(), dir, &argv, &env, LIMIT).unwrap()
}

/// The arguments and environment of [`cohort`].
fn cohort_command(manifest: &Path, args: &[&str]) -> (Vec<String>, [(String, Option<String>); 2]) {
    let mut argv = vec![
        "view".to_string(),
        "--manifest".to_string(),
        manifest.display().to_string(),
        "-T".to_string(),
        reference(),
    ];
    argv.extend(args.iter().map(|a| a.to_string()));
    argv.extend(REGIONS.iter().map(|r| r.to_string()));
    let env = [
        (
            "XDG_CACHE_HOME".to_string(),
            Some(testkit::cache_home().display().to_string()),
        ),
        (
            "REF_PATH".to_string(),
            Some("/nonexistent/hts-test-ref-path".to_string()),
        ),
    ];
    (argv, env)
}

/// `samtools view ARGS FILE REGIONS` of a local file (a CRAM with its reference).
fn samtools(args: &[&str], file: &Path) -> Vec<u8> {
    samtools_in(args, file, &REGIONS)
}

/// `samtools view ARGS FILE REGIONS` of other regions.
fn samtools_in(args: &[&str], file: &Path, regions: &[&str]) -> Vec<u8> {
    let out = Command::new("samtools")
        .arg("view")
        .args(["-T", &reference()])
        .args(args)
        .arg(file)
        .args(regions)
        .output()
        .expect("samtools is installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The records of a BAM written by hts, as `samtools view` prints them.
fn records_of(written: &Path) -> Vec<u8> {
    let got = Command::new("samtools")
        .arg("view")
        .arg(written)
        .output()
        .expect("samtools is installed");
    assert!(
        got.status.success(),
        "{}: {}",
        written.display(),
        text(&got.stderr)
    );
    got.stdout
}

/// samtools' counts by local file, for `args`.
fn expected_counts(bed: &Bed, args: &[&str]) -> HashMap<PathBuf, String> {
    let mut counts = HashMap::new();
    for (_, _, local) in &bed.samples {
        counts.entry(local.clone()).or_insert_with(|| {
            let mut with_c = vec!["-c"];
            with_c.extend_from_slice(args);
            String::from_utf8(samtools(&with_c, local))
                .unwrap()
                .trim()
                .to_string()
        });
    }
    counts
}

/// samtools' counts as `view --manifest -c` prints them: `sample<TAB>count`, in manifest order.
fn samtools_table(bed: &Bed, args: &[&str]) -> String {
    let counts = expected_counts(bed, args);
    bed.samples
        .iter()
        .map(|(sample, _, local)| format!("{sample}\t{}\n", counts[local]))
        .collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

#[test]
fn counts_in_manifest_order_as_samtools_counts_them() {
    let bed = Bed::new("counts", 6, 4);
    let manifest = bed.manifest(&[]);
    for filters in [&[][..], &["-q", "20", "-F", "0x10"][..]] {
        let mut args = vec!["-c"];
        args.extend_from_slice(filters);
        let out = cohort(&manifest, &args);
        let err = text(&out.stderr);
        assert_eq!(out.code, Some(0), "{err}");
        let want = samtools_table(&bed, filters);
        assert_eq!(text(&out.stdout), want);
        let summary = err
            .lines()
            .find(|l| l.starts_with("[hts] cohort: "))
            .unwrap();
        assert!(
            summary.contains("samples=10 failed=0 requests="),
            "{summary}"
        );
    }
    // Both kinds held records in the regions: the comparison means something.
    assert!(expected_counts(&bed, &[]).values().all(|c| c != "0"));
}

#[test]
fn one_output_per_sample_as_samtools_writes_it() {
    let bed = Bed::new("outputs", 3, 2);
    let manifest = bed.manifest(&[]);
    let out_dir = bed.dir.join("out");
    fs::create_dir_all(&out_dir).unwrap();
    let template = out_dir.join("{sample}.bam").display().to_string();
    let out = cohort(&manifest, &["-o", &template, "--write-index"]);
    assert_eq!(out.code, Some(0), "{}", text(&out.stderr));
    let sam = out_dir.join("{sample}.sam").display().to_string();
    let out = cohort(&manifest, &["-o", &sam]);
    assert_eq!(out.code, Some(0), "{}", text(&out.stderr));
    for (sample, _, local) in &bed.samples {
        let want = samtools(&[], local);
        assert!(!want.is_empty());
        let written = out_dir.join(format!("{sample}.bam"));
        assert!(
            out_dir.join(format!("{sample}.bam.csi")).is_file(),
            "{sample}: no index"
        );
        let got = records_of(&written);
        assert!(
            got == want,
            "{sample}: the BAM's records differ from samtools'"
        );
        // SAM text as samtools prints it.
        let got = fs::read(out_dir.join(format!("{sample}.sam"))).unwrap();
        assert!(got == want, "{sample}: the SAM differs from samtools'");
    }
}

#[test]
fn a_missing_and_a_broken_sample_fail_alone() {
    let bed = Bed::new("broken", 4, 2);
    // Garbage under a BAM's name, and an object the server does not have.
    fs::write(bed.dir.join("junk.bam"), b"not a BAM at all, only words").unwrap();
    let junk = bed.server.url("junk.bam");
    let gone = bed.server.url("gone.bam");
    let manifest = bed.manifest(&[("junk", &junk), ("gone", &gone)]);
    let out = cohort(&manifest, &["-c"]);
    let err = text(&out.stderr);
    assert_eq!(out.code, Some(1), "{err}");
    let want = samtools_table(&bed, &[]);
    assert_eq!(text(&out.stdout), want, "the good samples, in order");
    let summary = err
        .lines()
        .position(|l| l.starts_with("[hts] cohort: "))
        .unwrap();
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[summary].contains("samples=8 failed=2 "), "{err}");
    assert_eq!(&lines[summary + 1..], ["junk", "gone"], "{err}");
    assert!(err.contains("hts view: sample junk: "), "{err}");
    assert!(err.contains("hts view: sample gone: "), "{err}");
}

#[test]
fn a_rate_limited_server_slows_the_cohort_down_and_every_sample_completes() {
    let bed = Bed::new("storm", 16, 8);
    let manifest = bed.manifest(&[]);
    bed.server.set_rate_limit(Some(RateLimit::slow_down(60.0)));
    let out = cohort(&manifest, &["-c", "--jobs", "24", "--no-cache"]);
    let err = text(&out.stderr);
    assert_eq!(out.code, Some(0), "{err}");
    let want = samtools_table(&bed, &[]);
    assert_eq!(text(&out.stdout), want);
    let log = bed.server.log();
    let refused = log.iter().filter(|e| e.status == 503).count();
    let served: Vec<_> = log.iter().filter(|e| e.status != 503).collect();
    let first = served.iter().map(|e| e.arrived).min().unwrap();
    let last = served.iter().map(|e| e.arrived).max().unwrap();
    let rate = served.len() as f64 / (last - first).as_secs_f64();
    eprintln!(
        "{refused} requests refused, {} served at {rate:.1}/s; {}",
        served.len(),
        err.lines().last().unwrap_or("")
    );
    assert!(
        refused > 0,
        "the limit was never reached: the test tests nothing"
    );
    // The rate settles near the limit: not above it (the server refuses that), not far below
    // it (the client recovers), and the client slowed down as a whole rather than meeting a
    // refusal for most requests.
    assert!(rate <= 60.0 * 1.25, "{rate:.1}/s");
    assert!(rate >= 60.0 * 0.5, "{rate:.1}/s: too slow");
    assert!(refused * 2 <= served.len(), "{refused} refused");
}

#[test]
fn usage_errors() {
    let bed = Bed::new("usage", 1, 0);
    let manifest = bed.manifest(&[]);
    let out = cohort(&manifest, &["-h"]);
    assert_eq!(out.code, Some(1));
    assert!(
        text(&out.stderr).contains("--manifest needs -c"),
        "{}",
        text(&out.stderr)
    );
    let out = cohort(&manifest, &["-o", "one.bam"]);
    assert_eq!(out.code, Some(1));
    assert!(text(&out.stderr).contains("-o needs {sample}"));
    let bad = bed.dir.join("bad.tsv");
    fs::write(&bad, "name\tpath\nx\ty\n").unwrap();
    let out = cohort(&bad, &["-c"]);
    assert_eq!(out.code, Some(1));
    assert!(text(&out.stderr).contains("the header must be"));
    // -P and -U would need more than one output per sample, or pairs across regions' ends.
    let unselected = bed.dir.join("{sample}.rest.bam").display().to_string();
    for (args, says) in [
        (&["-c", "-P"][..], "cannot be combined with -P"),
        (&["-c", "-U", &unselected][..], "cannot be combined with -U"),
    ] {
        let out = cohort(&manifest, args);
        assert_eq!(out.code, Some(1), "{args:?}");
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    // -M with nothing to query: said once, in samtools' words, no sample run.
    let out = cohort_in(&manifest, &["-c", "-M"], &[]);
    assert_eq!(out.code, Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("No regions or BED file have been provided") && !err.contains("[hts] cohort:"),
        "{err}"
    );
    // ... but a header asked for alone is printed first, as samtools prints it.
    let template = bed.dir.join("{sample}.header.sam").display().to_string();
    let out = cohort_in(&manifest, &["-H", "-M", "-o", &template], &[]);
    assert_eq!(out.code, Some(0), "{}", text(&out.stderr));
    for (sample, _, local) in &bed.samples {
        let path = template.replace("{sample}", sample);
        let ours = fs::read_to_string(&path).unwrap();
        let theirs = samtools_in(&["-H", "-M"], local, &[]);
        let strip_pg = |t: &str| -> String {
            t.lines()
                .filter(|l| !l.starts_with("@PG"))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        assert_eq!(strip_pg(&ours), strip_pg(&text(&theirs)));
    }
}

#[test]
fn a_cram_under_a_bam_name_is_read_as_cram() {
    // The cohort opens a remote `.bam` as BAM without sniffing it first: the name is a guess
    // the BAM reader's own check of the magic corrects.
    let bed = Bed::new("disguised", 1, 1);
    let cram = fixture("cram/aligned-3.0.cram");
    link(&cram, &bed.dir.join("disguised.bam"));
    link(
        &fixture("cram/aligned-3.0.cram.crai"),
        &bed.dir.join("disguised.crai"),
    );
    let line = format!(
        "{}\t{}",
        bed.server.url("disguised.bam"),
        bed.server.url("disguised.crai")
    );
    let manifest = bed.manifest(&[("disguised", &line)]);
    let out = cohort(&manifest, &["-c"]);
    assert_eq!(out.code, Some(0), "{}", text(&out.stderr));
    let counts = expected_counts(&bed, &[]);
    let mut want: String = bed
        .samples
        .iter()
        .map(|(sample, _, local)| format!("{sample}\t{}\n", counts[local]))
        .collect();
    want.push_str(&format!("disguised\t{}\n", counts[&cram]));
    assert_eq!(text(&out.stdout), want);
}

/// A cohort of 2,500 samples (BAM and CRAM, over HTTP) completes within the time limit, every
/// count samtools' in manifest order, and its peak memory is that of the files in flight: under
/// twice the peak of 250 samples (memory that grew with the samples, readers or results kept,
/// would grow tenfold). Measured (debug build, 64 files and 128 requests at once, two malloc
/// arenas): 4.5 s and 85 MiB, 55 MiB for 250.
#[test]
fn a_cohort_of_2500_samples_runs_in_bounded_time_and_memory() {
    let measured = |bed: &Bed| {
        let manifest = bed.manifest(&[]);
        let (argv, env) = cohort_command(&manifest, &["-c"]);
        let m = run_measured(hts(), &bed.dir, &argv, &env, LIMIT).unwrap();
        let err = text(&m.outcome.stderr);
        assert_eq!(m.outcome.code, Some(0), "{err}");
        let want = samtools_table(bed, &[]);
        assert!(
            text(&m.outcome.stdout) == want,
            "counts differ from samtools'"
        );
        let n = bed.samples.len();
        assert!(
            err.contains(&format!("samples={n} failed=0 ")),
            "{}",
            err.lines().last().unwrap_or("")
        );
        (m.peak_kib, m.took)
    };
    let small = Bed::new("n250", 125, 125);
    let (small_peak, _) = measured(&small);
    drop(small);
    let big = Bed::new("n2500", 1250, 1250);
    let (big_peak, took) = measured(&big);
    eprintln!(
        "2,500 samples: {:.1} s, peak {} MiB (250 samples: {} MiB)",
        took.as_secs_f64(),
        big_peak / 1024,
        small_peak / 1024
    );
    assert!(
        big_peak < 2 * small_peak,
        "peak {big_peak} KiB for 2,500 samples against {small_peak} KiB for 250"
    );
}

/// A BED of overlapping regions (and two that touch) on both kinds' references, unsorted, and
/// one on a reference no sample has, which samtools warns of and goes past.
const MULTI_BED: &str = "ref1\t350\t900\nchr1\t9999\t20000\nchr1\t15000\t25000\n\
                         chr2\t4999\t5400\nchr2\t5400\t6000\nref1\t299\t400\n\
                         ref2\t99\t900\nchrNone\t0\t100\n";
/// Regions for -M: overlapping, out of order, both kinds, and a name no sample has.
const MULTI_REGIONS: [&str; 7] = [
    "chr1:15000-25000",
    "ref2:100-900",
    "chr1:10000-20000",
    "chrM:100-300",
    "ref1:300-400",
    "ref1:350-900",
    "chrNone:1-100",
];

/// A BED alone names the references a remote BAM's first index request is sized for (one
/// piece a reference), as regions on the command line do: a BED over several references does
/// not wait a round trip for the rest of the index.
#[test]
fn a_bed_alone_sizes_the_first_index_request_for_its_references() {
    let bed = Bed::new("bedrefs", 1, 0);
    let manifest = bed.manifest(&[]);
    let bed_file = bed.dir.join("regions.bed");
    fs::write(&bed_file, MULTI_BED).unwrap();
    let bed_path = bed_file.display().to_string();
    let (mut argv, env) = cohort_command(&manifest, &["-c", "--region-file", &bed_path]);
    argv.truncate(argv.len() - REGIONS.len());
    let mut env = env.to_vec();
    // A small piece makes the small fixture index behave as a large one.
    env.push(("HTS_INDEX_FIRST_PIECE".into(), Some("1024".into())));
    env.push(("HTS_CACHE".into(), Some("off".into())));
    let out = run_with_timeout(hts(), &bed.dir, &argv, &env, LIMIT).unwrap();
    assert_eq!(out.code, Some(0), "{}", text(&out.stderr));
    // Five names in the BED (one of them no sample has): five pieces asked for at once.
    let log = bed.server.log();
    let first = log
        .iter()
        .find(|e| e.path == "/b00.bam.bai")
        .expect("the index was asked for");
    assert_eq!(first.range.as_deref(), Some("bytes=0-5119"));
}

/// With `-M` and `--region-file` (htslib's multi-region iterator: overlapping regions merged,
/// each record once, in file order), every sample's count and output is what samtools gives
/// for its local file with the same options: `-c`, `-o TEMPLATE` as BAM and as SAM.
#[test]
fn multi_region_counts_and_outputs_as_samtools_gives_them() {
    let bed = Bed::new("multi", 3, 2);
    let manifest = bed.manifest(&[]);
    let bed_file = bed.dir.join("regions.bed");
    fs::write(&bed_file, MULTI_BED).unwrap();
    let bed_path = bed_file.display().to_string();
    let out_dir = bed.dir.join("out");
    fs::create_dir_all(&out_dir).unwrap();
    let cases: [(&[&str], &[&str]); 4] = [
        (&["-M"], &MULTI_REGIONS),
        (&["--region-file", &bed_path], &[]),
        (&["-M", "--region-file", &bed_path], &MULTI_REGIONS[..3]),
        (&["-M", "-q", "20", "-F", "0x10"], &MULTI_REGIONS),
    ];
    for (i, (args, regions)) in cases.into_iter().enumerate() {
        let what = format!("{args:?} {regions:?}");
        // Counts, in manifest order, each samtools' for the sample's local file.
        let mut with_c = vec!["-c"];
        with_c.extend_from_slice(args);
        let out = cohort_in(&manifest, &with_c, regions);
        let err = text(&out.stderr);
        assert_eq!(out.code, Some(0), "{what}: {err}");
        let mut want = String::new();
        let mut counts = HashMap::new();
        for (sample, _, local) in &bed.samples {
            let count = counts.entry(local.clone()).or_insert_with(|| {
                text(&samtools_in(&with_c, local, regions))
                    .trim()
                    .to_string()
            });
            want.push_str(&format!("{sample}\t{count}\n"));
        }
        assert_eq!(text(&out.stdout), want, "{what}");
        // samtools' warnings, each naming its sample: the name no file has, and the CRAM
        // iterator's refusal of it.
        assert!(
            err.contains("[sc00] [W::hts_itr_regions] Region 'chrNone' specifies an unknown")
                || regions.len() == 3,
            "{what}: {err}"
        );
        assert!(
            err.contains("[sc01] [E::hts_itr_multi_cram] Query with tid=-1"),
            "{what}: {err}"
        );
        // One output per sample, as BAM and as SAM.
        let bam = out_dir
            .join(format!("{i}-{{sample}}.bam"))
            .display()
            .to_string();
        let sam = out_dir
            .join(format!("{i}-{{sample}}.sam"))
            .display()
            .to_string();
        for template in [&bam, &sam] {
            let mut with_o = vec!["-o", template.as_str()];
            with_o.extend_from_slice(args);
            let out = cohort_in(&manifest, &with_o, regions);
            assert_eq!(out.code, Some(0), "{what}: {}", text(&out.stderr));
        }
        for (sample, _, local) in &bed.samples {
            let want = samtools_in(args, local, regions);
            let got = records_of(&template_path(&bam, sample));
            assert!(got == want, "{what} {sample}: the BAM's records differ");
            let got = fs::read(template_path(&sam, sample)).unwrap();
            assert!(
                got == want,
                "{what} {sample}: the SAM differs from samtools'"
            );
        }
    }
    // The comparisons mean something: both kinds hold records in the regions, and the BAM
    // holds records that two regions share, which -M gives once.
    let bam = &bed.samples[0].2;
    let cram = &bed.samples[1].2;
    let count = |args: &[&str], file: &Path| text(&samtools_in(args, file, &MULTI_REGIONS));
    let (once, each) = (count(&["-c", "-M"], bam), count(&["-c"], bam));
    assert!(once.trim() != "0" && once != each, "{once} {each}");
    assert!(count(&["-c", "-M"], cram).trim() != "0");
}

fn template_path(template: &str, sample: &str) -> PathBuf {
    PathBuf::from(template.replace("{sample}", sample))
}
