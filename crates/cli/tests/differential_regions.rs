//! Differential test of region files: random BED files (and now and then command-line regions)
//! through `view -M -L`, `--region-file`, `-P` and `-L` (`-c` too), on the conformance data,
//! by samtools 1.16.1 and by the `hts` built here: the same exit status (success or failure)
//! and byte-identical output. htslib's multi-region iterator and bedidx have quirks (an index
//! of the BED not rebuilt after merging, intervals passed over as records are read, empty
//! intervals refused) that only many random region sets reach.
//!
//! Bounded: `HTS_DIFF_COUNT` cases (default 90) or `HTS_DIFF_SECONDS` seconds (default 60),
//! whichever ends first; `HTS_DIFF_SEED` picks the sequence.

mod diff;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use testkit::Rng;

/// The references of a corpus file: (name, length).
fn references(path: &Path) -> Vec<(String, u64)> {
    let r = bam::Reader::open(&path.display().to_string(), &Default::default()).unwrap();
    r.header()
        .refs()
        .iter()
        .map(|r| {
            (
                String::from_utf8_lossy(&r.name).into_owned(),
                u64::from(r.len),
            )
        })
        .collect()
}

const OPTIONS: &[&[&str]] = &[
    &["-M", "-L"],
    &["--region-file"],
    &["-P", "--region-file"],
    &["-P", "-L"],
    &["-L"],
    &["-c", "-M", "-L"],
];

#[test]
fn random_region_files_match_samtools() {
    diff::require_samtools();
    let count = diff::env_u64("HTS_DIFF_COUNT", 90);
    let limit = Duration::from_secs(diff::env_u64("HTS_DIFF_SECONDS", 60));
    let seed = diff::env_u64("HTS_DIFF_SEED", 0xbed5);
    let mut rng = Rng::new(seed);
    let files: Vec<(PathBuf, Vec<(String, u64)>)> = [
        testkit::corpus_dir().join("data/rand.bam"),
        testkit::corpus_dir().join("data/ce1000.bam"),
        testkit::workspace_root().join("fixtures/conformance-extra/data/extra.bam"),
    ]
    .into_iter()
    .map(|p| {
        let refs = references(&p);
        (p, refs)
    })
    .collect();
    let bed = std::env::temp_dir().join(format!("hts-diff-regions-{}.bed", std::process::id()));
    let start = Instant::now();
    let mut run = 0u64;
    while run < count && start.elapsed() < limit {
        let (file, refs) = &files[(run % files.len() as u64) as usize];
        let pick = |rng: &mut Rng| {
            let (name, len) = &refs[rng.below(refs.len())];
            (name.clone(), (*len).min(300_000))
        };
        let mut text = String::new();
        for _ in 0..1 + rng.below(40) {
            let (name, len) = pick(&mut rng);
            let beg = rng.below(len.saturating_sub(10).max(1) as usize);
            let width = [1, 10, 100, 1000, 5000, 20000][rng.below(6)];
            text.push_str(&format!("{name}\t{beg}\t{}\n", beg + width));
        }
        std::fs::write(&bed, text).unwrap();
        let mut args = vec!["view".to_string(), "--no-PG".to_string()];
        args.extend(
            OPTIONS[rng.below(OPTIONS.len())]
                .iter()
                .map(|s| s.to_string()),
        );
        args.extend([bed.display().to_string(), file.display().to_string()]);
        for _ in 0..[0, 0, 1, 2, 3][rng.below(5)] {
            let (name, len) = pick(&mut rng);
            let beg = 1 + rng.below(len.saturating_sub(10).max(1) as usize);
            let width = [1, 100, 2000, 30000][rng.below(4)];
            args.push(if rng.below(4) == 0 {
                name
            } else {
                format!("{name}:{beg}-{}", beg + width)
            });
        }
        run += 1;
        diff::same_as_samtools(&args, &format!("seed {seed:#x}, case {run}"));
    }
    let _ = std::fs::remove_file(&bed);
    eprintln!("{run} random region files compared with samtools");
    assert!(
        run >= count.min(20),
        "only {run} cases ran within the time limit"
    );
}
