//! `-` reads standard input, BAM or CRAM told apart by its first bytes: through
//! `examples/count.rs`, which `cargo test` builds beside this test.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The example program, built into `examples/` beside the test binaries' `deps/`.
fn count_program() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().and_then(|d| d.parent()).unwrap();
    let program = debug.join("examples").join("count");
    assert!(program.exists(), "{} not built", program.display());
    program
}

fn count_stdin(fixture: &str, env: &[(&str, String)]) -> String {
    let path = testkit::workspace_root().join("fixtures").join(fixture);
    let out = Command::new(count_program())
        .arg("-")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::from(std::fs::File::open(path).unwrap()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{fixture}: {err}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn standard_input_is_read_as_bam_or_cram() {
    let golden = testkit::workspace_root().join("fixtures/conformance/expected/ce1000_all.out");
    let lines = std::fs::read_to_string(golden).unwrap().lines().count();
    assert_eq!(
        count_stdin("conformance/data/ce1000.bam", &[]),
        lines.to_string()
    );
    // The embedded reference needs none given.
    let cram = "cram/aligned-3.0-embed.cram";
    let golden = testkit::workspace_root().join("fixtures/cram/expected/aligned.out.gz");
    let text = std::fs::read(golden).unwrap();
    let mut sam = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&text[..]), &mut sam).unwrap();
    assert_eq!(count_stdin(cram, &[]), sam.lines().count().to_string());
}
