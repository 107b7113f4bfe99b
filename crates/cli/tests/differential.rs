//! Differential test of filter expressions: random expressions generated from htslib's grammar
//! are run by samtools 1.16.1 and by the `hts` built here (`view -e EXPR FILE [REGION]`, now and
//! then with other selection options beside) on the conformance data, and the outputs must be
//! byte-identical.
//!
//! Bounded: `HTS_DIFF_COUNT` expressions (default 150) or `HTS_DIFF_SECONDS` seconds (default
//! 60), whichever ends first; `HTS_DIFF_SEED` picks the sequence (default fixed). samtools must
//! be installed (`.ci/run` installs it): a missing samtools fails the test.

mod diff;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use testkit::Rng;

const NUMERIC: &[&str] = &[
    "pos",
    "endpos",
    "mapq",
    "flag",
    "flag.paired",
    "flag.proper_pair",
    "flag.unmap",
    "flag.munmap",
    "flag.reverse",
    "flag.mreverse",
    "flag.read1",
    "flag.read2",
    "flag.secondary",
    "flag.qcfail",
    "flag.dup",
    "flag.supplementary",
    "refid",
    "mrefid",
    "mpos",
    "pnext",
    "tlen",
    "ncigar",
    "qlen",
    "rlen",
    "sclen",
    "[NM]",
    "[AS]",
    "[XS]",
    "[XL]",
    "[XF]",
    "[MQ]",
    "[ZZ]",
];
/// `qual` is left out of comparisons and patterns: htslib copies it without a terminating NUL,
/// so `strcmp` and `regexec` read past it into uninitialised memory and samtools' answer varies
/// from run to run. It is used where only its length counts (`length`, `min`, `max`, `avg`).
const STRINGS: &[&str] = &[
    "rname", "mrname", "rnext", "qname", "seq", "cigar", "library", "[XZ]", "[XT]", "[RG]", "[XH]",
    "[ZZ]",
];
const NUMBERS: &[&str] = &[
    "0", "1", "2", "3", "5", "10", "20", "30", "60", "100", "1000", "50000", "0.5", "2.5", "1e3",
    "0x10", "-1", "-7",
];
const LITERALS: &[&str] = &[
    "\"chr1\"",
    "\"chr2\"",
    "\"*\"",
    "\"U\"",
    "\"grpA\"",
    "\"grpB\"",
    "\"libA\"",
    "\"\"",
    "\"alpha\"",
    "\"q0100\"",
    "\"r0\"",
    "\"100M\"",
];
const PATTERNS: &[&str] = &[
    "\"^q0[0-2]\"",
    "\"[13579]$\"",
    "\"^chr[12]\"",
    "\"M$\"",
    "\"[DIN]\"",
    "\"GATC\"",
    "\"^(grpA|grpB)$\"",
    "\"a\"",
    "\"^$\"",
    "\"[[:digit:]]{2}\"",
    "\"\\\\.\"",
    "\"S\"",
];
/// Right-hand sides of `%` that are never 0 < |x| < 1 nor -1 (samtools crashes on those).
const MODULI: &[&str] = &["2", "3", "7", "10", "mapq", "flag", "pos", "ncigar", "qlen"];

fn number(r: &mut Rng, depth: u32) -> String {
    if depth == 0 {
        return if r.below(2) == 0 {
            r.pick(NUMERIC).to_string()
        } else {
            r.pick(NUMBERS).to_string()
        };
    }
    match r.below(12) {
        0 => format!("({}+{})", number(r, depth - 1), number(r, depth - 1)),
        1 => format!("({}-{})", number(r, depth - 1), number(r, depth - 1)),
        2 => format!("{}*{}", number(r, depth - 1), number(r, depth - 1)),
        3 => format!(
            "{}/{}",
            number(r, depth - 1),
            r.pick(&["2", "4", "mapq", "[NM]"])
        ),
        4 => format!("{}%{}", number(r, depth - 1), r.pick(MODULI)),
        5 => format!(
            "({}{}{})",
            number(r, depth - 1),
            r.pick(&["&", "|", "^"]),
            number(r, depth - 1)
        ),
        6 => format!("-{}", r.pick(NUMERIC)),
        7 => format!("~{}", number(r, depth - 1)),
        8 => {
            let arg = if r.below(3) == 0 {
                "qual".to_string()
            } else {
                string(r)
            };
            format!("{}({arg})", r.pick(&["length", "min", "max", "avg"]))
        }
        9 => format!(
            "{}({})",
            r.pick(&["sqrt", "log", "exp", "exists"]),
            number(r, depth - 1)
        ),
        10 => format!(
            "pow({},{})",
            number(r, depth - 1),
            r.pick(&["2", "0.5", "[NM]"])
        ),
        _ => format!("default({},{})", r.pick(NUMERIC), number(r, depth - 1)),
    }
}

fn string(r: &mut Rng) -> String {
    if r.below(4) == 0 {
        r.pick(LITERALS).to_string()
    } else {
        r.pick(STRINGS).to_string()
    }
}

fn condition(r: &mut Rng, depth: u32) -> String {
    let leaf = |r: &mut Rng| match r.below(7) {
        0 | 1 => format!(
            "{}{}{}",
            number(r, 1),
            r.pick(&["==", "!=", "<", "<=", ">", ">="]),
            number(r, 1)
        ),
        2 => format!(
            "{}{}{}",
            string(r),
            r.pick(&["==", "!=", "<", ">="]),
            string(r)
        ),
        3 => format!("{}{}{}", string(r), r.pick(&["=~", "!~"]), r.pick(PATTERNS)),
        4 => format!("{}{}{}", string(r), r.pick(&["==", "!="]), number(r, 0)),
        5 => r.pick(NUMERIC).to_string(),
        _ => format!("exists({})", string(r)),
    };
    if depth == 0 {
        return leaf(r);
    }
    match r.below(5) {
        0 => format!("!({})", condition(r, depth - 1)),
        1 | 2 => format!(
            "{}{}{}",
            condition(r, depth - 1),
            r.pick(&["&&", "||"]),
            condition(r, depth - 1)
        ),
        3 => format!("({})", condition(r, depth - 1)),
        _ => leaf(r),
    }
}

fn corpus() -> PathBuf {
    testkit::workspace_root().join("fixtures/conformance-extra")
}

/// Options that may go beside `-e` (each a list of arguments), or none.
const BESIDE: &[&[&str]] = &[
    &[],
    &[],
    &[],
    &["-c"],
    &["-q", "20"],
    &["-F", "0x10"],
    &["--rf", "READ1"],
    &["-G", "PAIRED,MUNMAP"],
    &["-m", "60"],
    &["-B"],
    &["-x", "NM"],
    &["--subsample", "0.6"],
    &["-s", "3.5"],
    &["-p"],
    &["--add-flags", "DUP"],
];

#[test]
fn random_expressions_match_samtools() {
    diff::require_samtools();
    let count = diff::env_u64("HTS_DIFF_COUNT", 150);
    let limit = Duration::from_secs(diff::env_u64("HTS_DIFF_SECONDS", 60));
    let seed = diff::env_u64("HTS_DIFF_SEED", 0x5eed_1234);
    let mut rng = Rng::new(seed);
    let files = [
        (corpus().join("data/extra.bam"), None),
        (
            testkit::corpus_dir().join("data/rand.bam"),
            Some("chr1:1-30000"),
        ),
    ];
    let start = Instant::now();
    let (mut run, mut crashed) = (0u64, 0u64);
    while run < count && start.elapsed() < limit {
        let expr = condition(&mut rng, 3);
        let (file, region) = &files[(run % 2) as usize];
        let mut args = vec!["view".to_string(), "--no-PG".to_string()];
        let beside = BESIDE[rng.below(BESIDE.len())];
        args.extend(beside.iter().map(|s| s.to_string()));
        args.extend(["-e".to_string(), expr.clone(), file.display().to_string()]);
        args.extend(region.iter().map(|r| r.to_string()));
        run += 1;
        if !diff::same_as_samtools(&args, &format!("seed {seed:#x}, case {run}")) {
            crashed += 1;
        }
    }
    eprintln!("{run} random expressions compared with samtools ({crashed} crashed samtools)");
    assert!(
        run >= count.min(20),
        "only {run} expressions ran within the time limit"
    );
}
