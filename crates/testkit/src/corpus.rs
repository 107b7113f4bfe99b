//! The conformance corpus runner: the rules of `conformance/run.sh` (the runner shipped with the
//! samtools-made corpus), in Rust, locally or with the data paths rewritten to URLs.
//!
//! For each case, `CMD view ARGS` runs in the corpus folder and:
//! - status `0`: the exit status must be 0 and stdout byte-identical to the golden;
//! - status `nonzero`: the exit status must be 1 to 123, stderr must not be empty, and stdout
//!   must be a byte prefix of the golden (what samtools printed before it failed).
//!
//! A panic (exit status 101 or "panicked at" on stderr), a signal or a timeout fails any case.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One row of `cases.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub id: String,
    /// The arguments after `view`, split on single spaces.
    pub args: Vec<String>,
    /// The golden file, relative to the corpus folder.
    pub expected: String,
    /// Status column `0` (else `nonzero`).
    pub should_succeed: bool,
    /// The optional fifth column (`fixtures/conformance-extra`'s check items), else empty.
    pub check: String,
}

/// Reads `dir/cases.tsv`.
pub fn read_cases(dir: &Path) -> Result<Vec<Case>, String> {
    let path = dir.join("cases.tsv");
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut cases = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 4 || !matches!(cols[3], "0" | "nonzero") {
            return Err(format!(
                "{}:{}: expected 4 tab-separated columns ending in 0 or nonzero",
                path.display(),
                n + 1
            ));
        }
        cases.push(Case {
            id: cols[0].to_string(),
            args: cols[1]
                .split(' ')
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect(),
            expected: cols[2].to_string(),
            should_succeed: cols[3] == "0",
            check: cols.get(4).unwrap_or(&"").to_string(),
        });
    }
    Ok(cases)
}

/// How a corpus is run.
#[derive(Debug, Clone)]
pub struct Run<'a> {
    /// The program (`hts`); it is run as `PROGRAM view ARGS`.
    pub program: &'a Path,
    /// The corpus folder (holding `cases.tsv`); the working directory of every case.
    pub dir: &'a Path,
    /// Rewrite arguments starting with `data/` or `malformed/` to `BASE/data/...`.
    pub base_url: Option<&'a str>,
    /// Substrings of case ids to select (any of them); empty: all.
    pub filter: &'a [String],
    /// The time limit of one case.
    pub timeout: Duration,
    /// Extra arguments put right after `view` (e.g. `--fetchers 8`).
    pub extra_args: &'a [String],
    /// Changes to each run's environment (credentials for `s3://`).
    pub env: &'a [EnvChange],
}

/// A change to a child's environment: set (`Some`) or remove (`None`).
pub type EnvChange = (String, Option<String>);

/// Applies `env` to a command.
pub fn apply_env(command: &mut Command, env: &[EnvChange]) {
    for (key, value) in env {
        match value {
            Some(v) => command.env(key, v),
            None => command.env_remove(key),
        };
    }
}

/// The outcome of a corpus run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub passed: usize,
    /// One line per failing case: `FAIL id [view args]: why`.
    pub failures: Vec<String>,
}

impl Report {
    /// `N passed, N failed`, as `run.sh` ends.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failures.len())
    }
}

/// Runs the selected cases.
pub fn run(r: &Run) -> Result<Report, String> {
    let cases = read_cases(r.dir)?;
    let mut report = Report::default();
    for case in &cases {
        if !r.filter.is_empty() && !r.filter.iter().any(|f| case.id.contains(f.as_str())) {
            continue;
        }
        let mut args: Vec<String> = r.extra_args.to_vec();
        args.extend(case.args.iter().map(|a| rewrite(a, r.base_url)));
        match check(r, case, &args) {
            Ok(()) => report.passed += 1,
            Err(why) => {
                report
                    .failures
                    .push(format!("FAIL {} [view {}]: {why}", case.id, args.join(" ")))
            }
        }
    }
    Ok(report)
}

/// `data/x.bam` -> `BASE/data/x.bam` (and `malformed/...`); anything else unchanged.
pub fn rewrite(arg: &str, base: Option<&str>) -> String {
    match base {
        Some(base) if arg.starts_with("data/") || arg.starts_with("malformed/") => {
            format!("{}/{}", base.trim_end_matches('/'), arg)
        }
        _ => arg.to_string(),
    }
}

fn check(r: &Run, case: &Case, args: &[String]) -> Result<(), String> {
    let expected = fs::read(r.dir.join(&case.expected))
        .map_err(|_| format!("golden file {} missing", case.expected))?;
    let mut full = vec!["view".to_string()];
    full.extend(args.iter().cloned());
    let outcome = run_with_timeout(r.program, r.dir, &full, r.env, r.timeout)?;
    judge(case, &expected, &outcome)
}

/// Judges one case's outcome by `run.sh`'s rules.
pub fn judge(case: &Case, expected: &[u8], outcome: &Outcome) -> Result<(), String> {
    let err_text = String::from_utf8_lossy(&outcome.stderr);
    let out = &outcome.stdout;
    let Some(code) = outcome.code else {
        return Err("killed by a signal".to_string());
    };
    if code == 101 || err_text.contains("panicked at") {
        let line = err_text
            .lines()
            .find(|l| l.contains("panicked at"))
            .unwrap_or("");
        return Err(format!("panicked (exit status {code}): {line}"));
    }
    if (124..=127).contains(&code) || code >= 128 {
        return Err(format!("exit status {code} (reserved or signal)"));
    }
    if case.should_succeed {
        if code != 0 {
            return Err(format!(
                "exit status {code}, expected 0; stderr: {}",
                first_chars(&err_text, 200)
            ));
        }
        if out != expected {
            return Err(format!(
                "stdout differs from {} ({} bytes vs {} expected){}",
                case.expected,
                out.len(),
                expected.len(),
                first_difference(expected, out)
            ));
        }
    } else {
        if code == 0 {
            return Err("exit status 0, expected failure".to_string());
        }
        if outcome.stderr.is_empty() {
            return Err(format!(
                "failed (exit {code}) without any message on stderr"
            ));
        }
        if out.len() > expected.len() || expected[..out.len()] != out[..] {
            return Err(format!(
                "stdout ({} bytes) is not a prefix of {}",
                out.len(),
                case.expected
            ));
        }
    }
    Ok(())
}

fn first_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect::<String>().replace('\n', " ")
}

fn first_difference(expected: &[u8], actual: &[u8]) -> String {
    let exp = String::from_utf8_lossy(expected);
    let act = String::from_utf8_lossy(actual);
    for (i, (e, a)) in exp.lines().zip(act.lines()).enumerate() {
        if e != a {
            return format!(
                "\n    line {}:\n    < {}\n    > {}",
                i + 1,
                first_chars(e, 160),
                first_chars(a, 160)
            );
        }
    }
    String::new()
}

/// What a command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Exit status; `None`: killed by a signal.
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `program args` in `dir` with stdin closed; an error if it does not end within `timeout`
/// (it is then killed).
pub fn run_with_timeout(
    program: &Path,
    dir: &Path,
    args: &[String],
    env: &[EnvChange],
    timeout: Duration,
) -> Result<Outcome, String> {
    crate::peak::run_measured(program, dir, args, env, timeout).map(|m| m.outcome)
}

pub(crate) fn scratch_dir() -> Result<PathBuf, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "testkit-run-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// The files of a corpus that a copy must hold identically: `cases.tsv` and everything in
/// `data/`, `malformed/` and `expected/`.
pub fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("cases.tsv")];
    for sub in ["data", "malformed", "expected"] {
        let mut entries: Vec<PathBuf> = fs::read_dir(dir.join(sub))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| Path::new(sub).join(e.file_name()))
                    .collect()
            })
            .unwrap_or_default();
        entries.sort();
        files.extend(entries);
    }
    files
}

/// Differences between a copy of a corpus and its original (relative paths); empty when equal.
pub fn compare(copy: &Path, original: &Path) -> Vec<String> {
    let ours = corpus_files(copy);
    let theirs = corpus_files(original);
    let mut diffs = Vec::new();
    for f in &theirs {
        if !ours.contains(f) {
            diffs.push(format!("missing from the copy: {}", f.display()));
        } else if fs::read(original.join(f)).ok() != fs::read(copy.join(f)).ok() {
            diffs.push(format!("differs: {}", f.display()));
        }
    }
    for f in &ours {
        if !theirs.contains(f) {
            diffs.push(format!("not in the original: {}", f.display()));
        }
    }
    diffs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(ok: bool) -> Case {
        Case {
            id: "x".into(),
            args: vec![],
            expected: "expected/x.out".into(),
            should_succeed: ok,
            check: String::new(),
        }
    }

    fn outcome(code: Option<i32>, out: &[u8], err: &[u8]) -> Outcome {
        Outcome {
            code,
            stdout: out.to_vec(),
            stderr: err.to_vec(),
        }
    }

    #[test]
    fn success_cases_need_status_zero_and_identical_output() {
        assert!(judge(&case(true), b"a\n", &outcome(Some(0), b"a\n", b"warning")).is_ok());
        assert!(judge(&case(true), b"a\n", &outcome(Some(0), b"b\n", b"")).is_err());
        assert!(judge(&case(true), b"a\n", &outcome(Some(1), b"a\n", b"")).is_err());
    }

    #[test]
    fn failure_cases_need_a_message_and_a_prefix() {
        let c = case(false);
        assert!(judge(&c, b"abc", &outcome(Some(1), b"ab", b"bad")).is_ok());
        assert!(judge(&c, b"abc", &outcome(Some(1), b"", b"bad")).is_ok());
        assert!(judge(&c, b"abc", &outcome(Some(1), b"ab", b"")).is_err());
        assert!(judge(&c, b"abc", &outcome(Some(1), b"abx", b"bad")).is_err());
        assert!(judge(&c, b"abc", &outcome(Some(1), b"abcd", b"bad")).is_err());
        assert!(judge(&c, b"abc", &outcome(Some(0), b"", b"bad")).is_err());
        assert!(judge(&c, b"", &outcome(Some(124), b"", b"bad")).is_err());
        assert!(judge(&c, b"", &outcome(None, b"", b"bad")).is_err());
    }

    #[test]
    fn panics_fail_any_case() {
        let panicked = outcome(Some(101), b"", b"thread 'main' panicked at x.rs:1");
        assert!(judge(&case(false), b"", &panicked).is_err());
        let message = outcome(Some(1), b"", b"thread 'main' panicked at x.rs:1");
        assert!(judge(&case(false), b"", &message).is_err());
    }

    #[test]
    fn rewriting() {
        assert_eq!(
            rewrite("data/rand.bam", Some("http://127.0.0.1:1/")),
            "http://127.0.0.1:1/data/rand.bam"
        );
        assert_eq!(
            rewrite("malformed/x.bam", Some("http://h")),
            "http://h/malformed/x.bam"
        );
        assert_eq!(rewrite("chr1:1-2", Some("http://x")), "chr1:1-2");
        assert_eq!(rewrite("data/rand.bam", None), "data/rand.bam");
    }
}
