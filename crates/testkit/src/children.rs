//! Tests that need several processes at once (a cache shared between processes, a process's
//! own standard input): the test binary runs again as children, each running one test alone.

use std::ffi::OsString;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `count` children of this test binary, each running only the test `test` with the
/// environment `env(i)`, all started at once (each waits for a byte on its standard input,
/// written once all have started, if the test reads one). Fails the calling test unless every
/// child exits 0 having run its test ("1 passed"). Returns each child's standard output.
pub fn run_together(
    test: &str,
    count: usize,
    env: impl Fn(usize) -> Vec<(&'static str, OsString)>,
) -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<_> = (0..count)
        .map(|i| {
            Command::new(&exe)
                .args(["--exact", test, "--nocapture", "--test-threads=1"])
                .envs(env(i))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Start them all at once (a child that never reads its input does not mind).
    for c in &mut children {
        let _ = c.stdin.take().unwrap().write_all(b"g");
    }
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                out.status.success(),
                "child failed: {stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            // The child really ran its part (the harness reports one test passed).
            assert!(stdout.contains("1 passed"), "{stdout}");
            stdout
        })
        .collect()
}
