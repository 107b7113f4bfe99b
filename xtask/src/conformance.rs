//! The conformance corpus runner: the rules of `../shared/conformance/run.sh`, in Rust, on the
//! project's own copy in `fixtures/conformance`, locally or with the data paths rewritten to URLs.

use std::fs;
use std::path::Path;
#[cfg(test)]
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One row of `cases.tsv`.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub args: Vec<String>,
    pub expected: String,
    pub should_succeed: bool,
}

pub fn read_cases(dir: &Path) -> Result<Vec<Case>, String> {
    let path = dir.join("cases.tsv");
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut cases = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 4 {
            return Err(format!(
                "{}:{}: expected 4 tab-separated columns",
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
        });
    }
    Ok(cases)
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

/// How the corpus is run.
pub struct Run<'a> {
    pub hts: &'a Path,
    pub dir: &'a Path,
    /// Rewrite `data/...` and `malformed/...` to `BASE/data/...`.
    pub base_url: Option<&'a str>,
    /// The environment of each `hts` run (credentials for `s3://`).
    pub env: &'a [EnvChange],
    /// Substrings of case ids to select (any of them); empty: all.
    pub filter: &'a [String],
    pub timeout: Duration,
}

/// Runs the cases; prints a FAIL line for each failure and the closing `N passed, N failed` line.
pub fn run(r: &Run) -> Result<(usize, usize), String> {
    let cases = read_cases(r.dir)?;
    let (mut pass, mut fail) = (0, 0);
    for case in &cases {
        if !r.filter.is_empty() && !r.filter.iter().any(|f| case.id.contains(f.as_str())) {
            continue;
        }
        let args: Vec<String> = case.args.iter().map(|a| rewrite(a, r.base_url)).collect();
        match check(r, case, &args) {
            Ok(()) => pass += 1,
            Err(why) => {
                fail += 1;
                println!("FAIL {} [view {}]: {why}", case.id, args.join(" "));
            }
        }
    }
    println!("{pass} passed, {fail} failed");
    Ok((pass, fail))
}

fn rewrite(arg: &str, base: Option<&str>) -> String {
    match base {
        Some(base) if arg.starts_with("data/") || arg.starts_with("malformed/") => {
            format!("{}/{}", base.trim_end_matches('/'), arg)
        }
        _ => arg.to_string(),
    }
}

fn check(r: &Run, case: &Case, args: &[String]) -> Result<(), String> {
    let expected_path = r.dir.join(&case.expected);
    let expected =
        fs::read(&expected_path).map_err(|_| format!("golden file {} missing", case.expected))?;
    let (code, out, err) = run_with_timeout(r.hts, r.dir, args, r.env, r.timeout)?;
    let err_text = String::from_utf8_lossy(&err);
    let Some(code) = code else {
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
                first_difference(&expected, &out)
            ));
        }
    } else {
        if code == 0 {
            return Err("exit status 0, expected failure".to_string());
        }
        if err.is_empty() {
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

/// Exit code (`None`: killed by a signal), stdout, stderr.
pub type Outcome = (Option<i32>, Vec<u8>, Vec<u8>);

/// Runs `hts view ARGS` in `dir`; `None` exit code: killed (by us, on timeout, or a signal).
pub fn run_with_timeout(
    hts: &Path,
    dir: &Path,
    args: &[String],
    env: &[EnvChange],
    timeout: Duration,
) -> Result<Outcome, String> {
    let tmp = std::env::temp_dir().join(format!("hts-conformance-{}", std::process::id()));
    fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let out_path = tmp.join("out");
    let err_path = tmp.join("err");
    let out_file = fs::File::create(&out_path).map_err(|e| e.to_string())?;
    let err_file = fs::File::create(&err_path).map_err(|e| e.to_string())?;
    let mut command = Command::new(hts);
    apply_env(&mut command, env);
    let mut child = command
        .arg("view")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(err_file)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", hts.display()))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {}s", timeout.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for hts: {e}")),
        }
    };
    let out = fs::read(&out_path).map_err(|e| e.to_string())?;
    let err = fs::read(&err_path).map_err(|e| e.to_string())?;
    Ok((status.code(), out, err))
}

#[cfg(test)]
/// The files of the corpus copy that must equal `../shared/conformance`.
pub fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![dir.join("cases.tsv")];
    for sub in ["data", "malformed", "expected"] {
        let mut entries: Vec<PathBuf> = fs::read_dir(dir.join(sub))
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        files.extend(entries);
    }
    files
}

#[cfg(test)]
/// Differences between our copy and the shared corpus (relative paths), empty when identical.
pub fn compare_with_shared(ours: &Path, shared: &Path) -> Vec<String> {
    let mut diffs = Vec::new();
    let rel = |root: &Path, p: &Path| {
        p.strip_prefix(root)
            .map(|r| r.to_path_buf())
            .unwrap_or_default()
    };
    let ours_files: Vec<PathBuf> = corpus_files(ours).iter().map(|p| rel(ours, p)).collect();
    let shared_files: Vec<PathBuf> = corpus_files(shared)
        .iter()
        .map(|p| rel(shared, p))
        .collect();
    for f in &shared_files {
        if !ours_files.contains(f) {
            diffs.push(format!("missing from our copy: {}", f.display()));
        } else if fs::read(shared.join(f)).ok() != fs::read(ours.join(f)).ok() {
            diffs.push(format!("differs: {}", f.display()));
        }
    }
    for f in &ours_files {
        if !shared_files.contains(f) {
            diffs.push(format!("not in the shared corpus: {}", f.display()));
        }
    }
    diffs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn corpus_copy_matches_shared_when_present() {
        let shared = root().join("../shared/conformance");
        let ours = root().join("fixtures/conformance");
        assert!(
            ours.join("cases.tsv").exists(),
            "fixtures/conformance/cases.tsv is missing"
        );
        if !shared.join("cases.tsv").exists() {
            eprintln!("../shared/conformance not present: nothing to compare");
            return;
        }
        let diffs = compare_with_shared(&ours, &shared);
        assert!(
            diffs.is_empty(),
            "fixtures/conformance differs from ../shared/conformance:\n{}",
            diffs.join("\n")
        );
    }

    #[test]
    fn cases_parse_and_rewrite() {
        let cases = read_cases(&root().join("fixtures/conformance")).unwrap();
        assert!(cases.len() >= 150, "{} cases", cases.len());
        let c = cases.iter().find(|c| c.id == "rand_idx_bai").unwrap();
        assert_eq!(c.args[0], "-X");
        assert_eq!(
            rewrite("data/rand.bam", Some("http://127.0.0.1:1/")),
            "http://127.0.0.1:1/data/rand.bam"
        );
        assert_eq!(rewrite("chr1:1-2", Some("http://x")), "chr1:1-2");
        assert_eq!(rewrite("data/rand.bam", None), "data/rand.bam");
    }
}
