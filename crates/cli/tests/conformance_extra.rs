//! The project's own conformance corpus, `fixtures/conformance-extra` (goldens from samtools
//! 1.16.1), run with the `hts` built here: on local files, and with every data path rewritten
//! to a URL on the test server (127.0.0.1). Checks that call samtools (`quickcheck`, `index`)
//! need it installed (CI installs it).
//!
//! `HTS_EXTRA_CASES=pg_` selects the cases whose id contains `pg_`.

mod corpus;

fn run_corpus(base: Option<&str>) {
    let dir = testkit::workspace_root().join("fixtures/conformance-extra");
    let hts = testkit::hts();
    let filter = std::env::var("HTS_EXTRA_CASES").ok();
    let cases = corpus::read_cases(&dir).expect("cases.tsv reads");
    assert!(cases.len() >= 70, "{} cases", cases.len());
    let (mut pass, mut fail) = (0, Vec::new());
    for case in &cases {
        if filter.as_deref().is_some_and(|f| !case.id.contains(f)) {
            continue;
        }
        let scratch = corpus::scratch_for(&case.id).expect("scratch folder");
        let result = corpus::run_hts(hts, &dir, case, &scratch, base)
            .and_then(|outcome| corpus::check(&dir, case, &outcome, &scratch, base));
        let _ = std::fs::remove_dir_all(&scratch);
        match result {
            Ok(()) => pass += 1,
            Err(why) => fail.push(format!("FAIL {} [{}]: {why}", case.id, case.args.join(" "))),
        }
    }
    let mode = base.unwrap_or("local files");
    println!(
        "conformance-extra ({mode}): {pass} passed, {} failed",
        fail.len()
    );
    assert!(fail.is_empty(), "\n{}", fail.join("\n"));
}

#[test]
fn extra_corpus_locally() {
    run_corpus(None);
}

#[test]
fn extra_corpus_over_http() {
    let server = testkit::Server::start(&testkit::workspace_root().join("fixtures")).unwrap();
    run_corpus(Some(&server.base()));
    assert_eq!(server.summary().unbounded, 0, "every request was bounded");
}
