//! The samtools-made conformance corpus (`fixtures/conformance`), run on the `hts` binary by
//! the rules of the corpus's `run.sh`: locally, and with every data path rewritten to a URL on
//! the test server (127.0.0.1), with several fetcher and thread settings.

use std::time::Duration;

use testkit::corpus::{self, Run};
use testkit::hts;

fn run_corpus(base_url: Option<&str>, extra_args: &[String], label: &str) {
    let dir = testkit::corpus_dir();
    let report = corpus::run(&Run {
        program: hts(),
        dir: &dir,
        base_url,
        filter: &[],
        timeout: Duration::from_secs(60),
        extra_args,
        env: &[],
    })
    .unwrap();
    // The count shows in `cargo test -- --nocapture` and in the failure message.
    println!("conformance ({label}): {}", report.summary());
    assert!(
        report.failures.is_empty(),
        "conformance ({label}): {}\n{}",
        report.summary(),
        report.failures.join("\n")
    );
    assert!(
        report.passed >= 150,
        "only {} cases ran ({label})",
        report.passed
    );
}

#[test]
fn corpus_locally() {
    run_corpus(None, &[], "local");
}

#[test]
fn corpus_over_http() {
    let server = testkit::Server::start(&testkit::corpus_dir()).unwrap();
    run_corpus(Some(&server.base()), &[], "HTTP");
    assert_eq!(server.summary().unbounded, 0, "every request was bounded");
}

#[test]
fn corpus_over_http_with_inflate_threads() {
    let server = testkit::Server::start(&testkit::corpus_dir()).unwrap();
    let args = ["-@".to_string(), "3".to_string()];
    run_corpus(Some(&server.base()), &args, "HTTP, -@ 3");
}

/// The copy in `fixtures/conformance` must equal the corpus it was copied from. The original
/// lives outside the repository (`../shared/conformance`), so a user's clone has only the copy:
/// there the comparison has nothing to compare with, and says so.
#[test]
fn corpus_copy_matches_the_shared_original() {
    let ours = testkit::corpus_dir();
    assert!(
        ours.join("cases.tsv").exists(),
        "fixtures/conformance/cases.tsv is missing"
    );
    let shared = testkit::workspace_root().join("../shared/conformance");
    if !shared.join("cases.tsv").exists() {
        println!("../shared/conformance is not here: the copy is the corpus");
        return;
    }
    let diffs = corpus::compare(&ours, &shared);
    assert!(
        diffs.is_empty(),
        "fixtures/conformance differs from ../shared/conformance:\n{}",
        diffs.join("\n")
    );
}
