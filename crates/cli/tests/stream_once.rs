//! `hts idxstats` and `hts quickcheck` on a stream (`<(cat x.bam)`, standard input) read it
//! once, as samtools does: idxstats, finding no index, counts the records of the stream it
//! opened (it reopened the path and found the stream drained), and quickcheck passes a stream
//! whose end it cannot look at first (htslib's "not seekable").

use std::path::{Path, PathBuf};
use std::process::Output;

fn bam() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance/data/rand.bam")
}

/// `program args... <(cat bam)` through bash, the way a user writes it.
fn through_pipe(program: &Path, args: &[&str]) -> Output {
    testkit::command(Path::new("bash"))
        .arg("-c")
        .arg(r#"exec "$0" "${@:2}" <(cat "$1")"#)
        .arg(program)
        .arg(bam())
        .args(args)
        .output()
        .unwrap()
}

/// `cat bam | program args... -`: the BAM on standard input, a pipe.
fn through_stdin(program: &Path, args: &[&str]) -> Output {
    testkit::command(Path::new("bash"))
        .arg("-c")
        .arg(r#"cat "$1" | exec "$0" "${@:2}" -"#)
        .arg(program)
        .arg(bam())
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn idxstats_counts_a_stream_it_reads_once() {
    let samtools = Path::new("samtools");
    let indexed = testkit::command(testkit::hts())
        .arg("idxstats")
        .arg(bam())
        .output()
        .unwrap();
    assert_eq!(indexed.status.code(), Some(0), "{}", text(&indexed.stderr));
    for (ours, theirs) in [
        (
            through_pipe(testkit::hts(), &["idxstats"]),
            through_pipe(samtools, &["idxstats"]),
        ),
        (
            through_stdin(testkit::hts(), &["idxstats"]),
            through_stdin(samtools, &["idxstats"]),
        ),
    ] {
        assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
        assert_eq!(theirs.status.code(), Some(0), "{}", text(&theirs.stderr));
        assert_eq!(text(&ours.stdout), text(&theirs.stdout));
        // The counts of the records read agree with the index's.
        assert_eq!(text(&ours.stdout), text(&indexed.stdout));
        assert!(
            text(&ours.stderr).contains("reverting to slow method"),
            "{}",
            text(&ours.stderr)
        );
    }
}

#[test]
fn quickcheck_passes_a_stream_it_cannot_seek() {
    let samtools = Path::new("samtools");
    for (ours, theirs) in [
        (
            through_pipe(testkit::hts(), &["quickcheck", "-vvv"]),
            through_pipe(samtools, &["quickcheck", "-vvv"]),
        ),
        (
            through_stdin(testkit::hts(), &["quickcheck", "-vvv"]),
            through_stdin(samtools, &["quickcheck", "-vvv"]),
        ),
    ] {
        assert_eq!(theirs.status.code(), Some(0), "{}", text(&theirs.stderr));
        assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
        assert_eq!(text(&ours.stdout), text(&theirs.stdout));
        let said = text(&ours.stderr);
        assert!(
            said.contains("cannot be checked for EOF block as it is not seekable."),
            "{said}"
        );
        assert!(!said.contains("error"), "{said}");
    }
}
