//! What the CRAM tests share: the fixtures' folder, the goldens samtools printed, and the
//! shape of an error (one line naming what went wrong).
#![allow(dead_code)]

use std::io::Read;
use std::path::PathBuf;
use std::process::Output;

pub fn dir() -> PathBuf {
    testkit::workspace_root().join("fixtures/cram")
}

/// What samtools printed for golden `name` (fixtures/cram/expected/NAME.out.gz).
pub fn golden(name: &str) -> Vec<u8> {
    let gz = std::fs::read(dir().join(format!("expected/{name}.out.gz"))).unwrap();
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// One line on stderr, naming `what`, exit status 1, and no panic.
pub fn one_error_line(out: &Output, what: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("hts view: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in what {
        assert!(err.contains(w), "{err} should name {w}");
    }
}
