//! What the differential tests share: samtools 1.16.1 must be there, their bounds from the
//! environment, and one comparison of hts with samtools on the same arguments.

use std::process::{Command, Output};

/// Fails the test unless samtools 1.16.1 is installed (`.ci/run` installs it).
pub fn require_samtools() {
    let version = Command::new("samtools").arg("--version").output();
    let version = version.expect("samtools must be installed for the differential tests");
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("samtools 1.16.1"),
        "the differential tests need samtools 1.16.1"
    );
}

/// `key` from the environment as a number, else `default`.
pub fn env_u64(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn run_program(program: &std::path::Path, args: &[String]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

/// Runs samtools and hts with `args`; `false` when samtools crashed (nothing to compare).
/// hts must not panic, must fail exactly when samtools fails, and must print what samtools
/// printed.
pub fn same_as_samtools(args: &[String], what: &str) -> bool {
    let theirs = run_program("samtools".as_ref(), args);
    let Some(code) = theirs.status.code() else {
        return false;
    };
    let mine = run_program(testkit::hts(), args);
    let err = String::from_utf8_lossy(&mine.stderr);
    assert!(
        !err.contains("panicked"),
        "hts {args:?} panicked ({what}): {err}"
    );
    assert_eq!(
        mine.status.success(),
        code == 0,
        "hts {args:?} ({what}): exit {:?}, samtools {code}: {err}",
        mine.status.code()
    );
    assert!(
        mine.stdout == theirs.stdout,
        "hts {args:?} ({what}): {} bytes from samtools, {} from hts",
        theirs.stdout.len(),
        mine.stdout.len()
    );
    true
}
