//! Differential test of filter expressions: random expressions generated from htslib's grammar
//! are run by samtools 1.16.1 (`samtools view -e EXPR`) and by [`bam::filter`] on the
//! conformance data, and the outputs must be byte-identical.
//!
//! Bounded: `HTS_DIFF_COUNT` expressions (default 150) or `HTS_DIFF_SECONDS` seconds (default
//! 60), whichever ends first; `HTS_DIFF_SEED` picks the sequence (default fixed). samtools must
//! be installed (`.ci/run` installs it): a missing samtools fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use bam::filter::expr::Expression;
use bam::filter::Selection;
use bam::{OpenOptions, Reader};
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
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance-extra")
}

fn ours(expr: &str, file: &Path, region_end: Option<i32>) -> Vec<u8> {
    let mut out = Vec::new();
    let Ok(e) = Expression::parse(expr) else {
        return out;
    };
    let mut sel = Selection {
        expression: Some(e),
        ..Selection::default()
    };
    let mut reader = Reader::open(file.to_str().unwrap(), &OpenOptions::default()).unwrap();
    let header = reader.header().clone();
    while let Some(mut r) = reader.read_record().unwrap() {
        if region_end.is_some_and(|end| r.ref_id() != 0 || r.pos() >= end) {
            break;
        }
        if sel.select(&mut r, &header) {
            bam::write_sam(&r, &header, &mut out).unwrap();
        }
    }
    out
}

#[test]
fn random_expressions_match_samtools() {
    let version = Command::new("samtools").arg("--version").output();
    let version = version.expect("samtools must be installed for the differential test");
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("samtools 1.16.1"),
        "the differential test needs samtools 1.16.1"
    );
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let count = env("HTS_DIFF_COUNT", 150);
    let limit = Duration::from_secs(env("HTS_DIFF_SECONDS", 60));
    let seed = env("HTS_DIFF_SEED", 0x5eed_1234);
    let mut rng = Rng::new(seed);
    let files = [
        (corpus().join("data/extra.bam"), None, None),
        (
            testkit::corpus_dir().join("data/rand.bam"),
            Some("chr1:1-30000"),
            Some(30000),
        ),
    ];
    let start = Instant::now();
    let (mut run, mut crashed) = (0u64, 0u64);
    while run < count && start.elapsed() < limit {
        let expr = condition(&mut rng, 3);
        let (file, region, region_end) = &files[(run % 2) as usize];
        let mut cmd = Command::new("samtools");
        cmd.arg("view").arg("-e").arg(&expr).arg(file);
        // A region whose reads are the first ones of the file: the library reads from the start.
        cmd.args(region.iter());
        let theirs = cmd.output().expect("samtools runs");
        run += 1;
        if theirs.status.code().is_none() {
            crashed += 1;
            continue;
        }
        let mine = ours(&expr, file, *region_end);
        assert!(
            mine == theirs.stdout,
            "expression {expr:?} on {} (seed {seed:#x}, case {run}): {} bytes from samtools, {} from hts",
            file.display(),
            theirs.stdout.len(),
            mine.len()
        );
    }
    eprintln!("{run} random expressions compared with samtools ({crashed} crashed samtools)");
    assert!(
        run >= count.min(20),
        "only {run} expressions ran within the time limit"
    );
}
