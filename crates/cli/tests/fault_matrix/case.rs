//! Running one case of the fault matrix (`hts view` killed after a time limit) and judging
//! its outcome against what is expected of it.

use std::time::{Duration, Instant};

use testkit::hts;

/// No case may run longer than this (a hang is a failure, not a wait).
pub(super) const CASE_LIMIT: Duration = Duration::from_secs(60);

pub(super) struct Run {
    pub(super) code: Option<i32>,
    pub(super) stdout: Vec<u8>,
    pub(super) stderr: String,
    pub(super) took: Duration,
}

/// Runs `hts view ARGS` with a private cache, killed after [`CASE_LIMIT`].
pub(super) fn run(args: &[String], env: &[(&str, &str)]) -> Run {
    let start = Instant::now();
    let mut full = vec!["view".to_string(), "--no-cache".to_string()];
    full.extend(args.iter().cloned());
    let env: Vec<testkit::corpus::EnvChange> = env
        .iter()
        .map(|(k, v)| (k.to_string(), Some(v.to_string())))
        .collect();
    let out =
        testkit::corpus::run_with_timeout(hts(), &std::env::temp_dir(), &full, &env, CASE_LIMIT);
    match out {
        Ok(o) => Run {
            code: o.code,
            stdout: o.stdout,
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            took: start.elapsed(),
        },
        Err(e) => Run {
            code: None,
            stdout: Vec::new(),
            stderr: format!("did not finish: {e}"),
            took: start.elapsed(),
        },
    }
}

pub(super) fn local(args: &[&str]) -> Vec<u8> {
    let data = testkit::corpus_dir().join("data");
    let mut full = vec!["view".to_string(), "--no-cache".to_string()];
    for a in args {
        full.push(a.replace("DATA", data.to_str().unwrap()));
    }
    let out = testkit::command(hts()).args(&full).output().unwrap();
    assert!(out.status.success(), "local {full:?}");
    out.stdout
}

/// What a case must give.
#[derive(Debug, Clone)]
pub(super) enum Expect {
    /// Exit 0, output identical to the local query; stderr must hold each of these.
    Complete(&'static [&'static str]),
    /// Exit 1, each of these in the one error line(s), output a prefix of the local query's.
    Error(&'static [&'static str]),
}

pub(super) struct Case {
    pub(super) fault: &'static str,
    pub(super) expect: Expect,
    pub(super) run: Run,
    pub(super) local: Vec<u8>,
}

impl Case {
    pub(super) fn observed(&self) -> String {
        let last = self
            .run
            .stderr
            .lines()
            .rfind(|l| !l.starts_with("[hfile]"))
            .unwrap_or("")
            .to_string();
        let complete = self.run.code == Some(0) && self.run.stdout == self.local;
        match self.run.code {
            Some(0) if complete => format!(
                "complete output ({} bytes, {:.1} s){}",
                self.run.stdout.len(),
                self.run.took.as_secs_f64(),
                if last.is_empty() {
                    String::new()
                } else {
                    format!("; stderr: {last}")
                }
            ),
            Some(0) => format!(
                "EXIT 0 WITH DIFFERENT OUTPUT ({} of {} bytes)",
                self.run.stdout.len(),
                self.local.len()
            ),
            code => format!(
                "exit {code:?} after {:.1} s: {last}",
                self.run.took.as_secs_f64()
            ),
        }
    }

    pub(super) fn check(&self) -> Result<(), String> {
        let r = &self.run;
        if r.stderr.contains("panicked") || r.code == Some(101) {
            return Err("panicked".into());
        }
        match &self.expect {
            Expect::Complete(needles) => {
                if r.code != Some(0) || r.stdout != self.local {
                    return Err("not the complete output".into());
                }
                if let Some(n) = needles.iter().find(|n| !r.stderr.contains(*n)) {
                    return Err(format!("stderr lacks '{n}'"));
                }
            }
            Expect::Error(needles) => {
                if r.code != Some(1) {
                    return Err(format!("exit {:?}, not 1", r.code));
                }
                if !self.local.starts_with(&r.stdout) {
                    return Err("output is not a prefix of the local output".into());
                }
                if let Some(n) = needles.iter().find(|n| !r.stderr.contains(*n)) {
                    return Err(format!("stderr lacks '{n}'"));
                }
                let errors: Vec<&str> = r
                    .stderr
                    .lines()
                    .filter(|l| l.starts_with("hts view:"))
                    .collect();
                if errors.len() != 1 {
                    return Err(format!("{} error lines", errors.len()));
                }
            }
        }
        Ok(())
    }
}

pub(super) fn describe(e: &Expect) -> String {
    match e {
        Expect::Complete([]) => "complete output".into(),
        Expect::Complete(n) => format!("complete output, warning '{}'", n.join("', '")),
        Expect::Error(n) => format!("error: '{}'", n.join("', '")),
    }
}
