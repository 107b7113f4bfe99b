//! The project's own conformance corpus, `fixtures/conformance-extra` (goldens from samtools
//! 1.16.1): every case run with the `hts` built here.
//!
//! Local files by default. With `HTS_EXTRA_BASE_URL` set to the URL of a server of `fixtures/`
//! (as `cargo xtask test` does), the data paths become URLs under it, so the same cases run
//! over HTTP. Checks that call samtools (`quickcheck`, `index`) need it installed.

mod corpus;

use std::path::Path;

#[test]
fn conformance_extra() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance-extra");
    let hts = Path::new(env!("CARGO_BIN_EXE_hts"));
    let base = std::env::var("HTS_EXTRA_BASE_URL").ok();
    let filter = std::env::var("HTS_EXTRA_CASES").ok();
    let cases = corpus::read_cases(&dir).expect("cases.tsv reads");
    assert!(cases.len() >= 70, "{} cases", cases.len());
    let (mut pass, mut fail) = (0, Vec::new());
    for case in &cases {
        if filter.as_deref().is_some_and(|f| !case.id.contains(f)) {
            continue;
        }
        let scratch = corpus::scratch_for(&case.id).expect("scratch folder");
        let result = corpus::run_hts(hts, &dir, case, &scratch, base.as_deref())
            .and_then(|outcome| corpus::check(&dir, case, &outcome, &scratch, base.as_deref()));
        let _ = std::fs::remove_dir_all(&scratch);
        match result {
            Ok(()) => pass += 1,
            Err(why) => fail.push(format!("FAIL {} [{}]: {why}", case.id, case.args.join(" "))),
        }
    }
    let mode = base.as_deref().unwrap_or("local files");
    println!(
        "conformance-extra ({mode}): {pass} passed, {} failed",
        fail.len()
    );
    assert!(fail.is_empty(), "\n{}", fail.join("\n"));
}
