//! `hts` against a real S3: s3s-fs (which verifies every SigV4 signature) behind the test server
//! in proxy mode, so each request is logged; boto3 makes pre-signed URLs as an independent signer.
//! Both are installed on first use by `testkit::s3` (never skipped). The bucket `corpus` holds
//! the conformance corpus (`data/...`, `malformed/...`).

use std::path::Path;
use std::time::Duration;

use testkit::corpus::{self, apply_env, EnvChange, Run};
use testkit::hts;
use testkit::s3::{self, S3Stack};
use testkit::FIVE_REGIONS;

const BUCKET: &str = "corpus";

fn stack() -> S3Stack {
    let objects = s3::corpus_objects(&testkit::corpus_dir()).expect("the corpus");
    S3Stack::start(&[(BUCKET, objects)], testkit::Link::default())
        .unwrap_or_else(|e| panic!("the S3 test bed: {e}"))
}

fn boto3() -> std::path::PathBuf {
    s3::boto3_python().unwrap_or_else(|e| panic!("boto3: {e}"))
}

/// `view -X BAM BAI REGIONS...`
fn query_args(bam: &str, bai: &str) -> Vec<String> {
    let mut args = vec!["view".to_string(), "-X".into(), bam.into(), bai.into()];
    args.extend(FIVE_REGIONS.iter().map(|r| r.to_string()));
    args
}

fn local(name: &str) -> String {
    testkit::corpus_dir()
        .join("data")
        .join(name)
        .display()
        .to_string()
}

fn s3_url(name: &str) -> String {
    format!("s3://{BUCKET}/data/{name}")
}

/// Runs `hts ARGS` with `env`: (success, stdout, stderr).
fn run(args: &[String], env: &[EnvChange]) -> (bool, Vec<u8>, String) {
    let mut command = testkit::command(hts());
    // These tests compare request patterns: every run cold.
    command.env("HTS_CACHE", "off");
    apply_env(&mut command, env);
    let out = command.args(args).output().expect("hts runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), out.stdout, err)
}

/// Runs `hts ARGS` that must succeed; its stdout.
fn ok(args: &[String], env: &[EnvChange]) -> Vec<u8> {
    let (success, out, err) = run(args, env);
    assert!(success, "hts {} failed: {err}", args.join(" "));
    out
}

/// Runs `hts ARGS` that must fail with one line on stderr containing `expect`, nothing on
/// stdout, and none of `secrets`; that line.
fn one_line_failure(args: &[String], env: &[EnvChange], expect: &str, secrets: &[&str]) -> String {
    let (success, out, err) = run(args, env);
    assert!(!success, "hts {} should have failed", args.join(" "));
    assert!(out.is_empty(), "{} bytes on stdout: {err}", out.len());
    let line = err.trim_end();
    assert_eq!(line.lines().count(), 1, "one line expected: {err}");
    assert!(line.contains(expect), "'{expect}' expected in: {line}");
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        assert!(
            !line.contains(secret),
            "a secret ({secret}) shows in: {line}"
        );
    }
    println!("{line}");
    line.to_string()
}

/// No AWS settings at all (for pre-signed URLs, which carry their own authority).
fn no_aws() -> Vec<EnvChange> {
    std::env::vars()
        .map(|(k, _)| k)
        .filter(|k| k.starts_with("AWS_") || k.starts_with("HTS_S3_"))
        .map(|k| (k, None))
        .chain([
            (
                "AWS_CONFIG_FILE".to_string(),
                Some("/nonexistent".to_string()),
            ),
            (
                "AWS_SHARED_CREDENTIALS_FILE".to_string(),
                Some("/nonexistent".to_string()),
            ),
        ])
        .collect()
}

/// boto3's pre-signed URLs for `rand.bam` and its index, valid for an hour.
fn presigned_pair(stack: &S3Stack, python: &Path) -> (String, String) {
    let keys = ["data/rand.bam", "data/rand.bam.bai"];
    let urls = s3::presign(python, &stack.endpoint(), BUCKET, &keys, 3600).unwrap();
    (urls[0].clone(), urls[1].clone())
}

fn signature_of(url: &str) -> &str {
    url.split("X-Amz-Signature=").nth(1).unwrap_or("")
}

#[test]
fn corpus_over_s3() {
    let stack = stack();
    let env = stack.env(s3::SECRET_KEY);
    let base = format!("s3://{BUCKET}");
    let report = corpus::run(&Run {
        program: hts(),
        dir: &testkit::corpus_dir(),
        base_url: Some(&base),
        filter: &[],
        timeout: Duration::from_secs(60),
        extra_args: &[],
        env: &env,
    })
    .unwrap();
    println!("conformance (s3:// on s3s-fs): {}", report.summary());
    assert!(
        report.failures.is_empty(),
        "{}\n{}",
        report.summary(),
        report.failures.join("\n")
    );
    assert!(report.passed >= 150, "only {} cases ran", report.passed);
    assert_eq!(stack.proxy.summary().unbounded, 0, "every request bounded");
}

/// The byte spans of the planner's plan for the 5-region query on `rand.bam`, and the header's
/// first block (which the reader asks for before any plan).
fn planned_spans() -> Vec<(u64, u64)> {
    let options = bam::OpenOptions::default();
    let mut reader = bam::Reader::open(&local("rand.bam"), &options).unwrap();
    reader.load_index(Some(&local("rand.bam.bai"))).unwrap();
    let targets: Vec<region::Region> = FIVE_REGIONS
        .iter()
        .map(|r| region::parse_region(r, reader.header()).unwrap())
        .collect();
    let size = std::fs::metadata(local("rand.bam")).unwrap().len();
    let query = reader.query(targets).unwrap();
    let mut spans = vec![(0, 65536.min(size))];
    spans.extend(query.plan().spans.iter().map(|s| (s.start, s.end)));
    spans
}

/// The requests a query needed ([`s3::needed_requests`]), by object name and range.
fn needed(log: &[testkit::LogEntry]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = s3::needed_requests(log)
        .into_iter()
        .map(|e| {
            let name = e.path.rsplit('/').next().unwrap_or("").to_string();
            (name, e.range.clone().unwrap_or_default())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn requests_are_the_planned_spans_as_over_http() {
    let stack = stack();
    let expected = ok(&query_args(&local("rand.bam"), &local("rand.bam.bai")), &[]);
    let got = ok(
        &query_args(&s3_url("rand.bam"), &s3_url("rand.bam.bai")),
        &stack.env(s3::SECRET_KEY),
    );
    assert_eq!(got, expected, "s3:// output equals the local query's");
    let summary = stack.proxy.settled_summary();
    assert_eq!(summary.unbounded, 0, "{summary}");
    let s3_log = stack.proxy.log();
    let spans = planned_spans();
    for entry in &s3_log {
        assert_eq!(entry.method, "GET", "{entry:?}");
        assert!(entry.is_bounded(), "{entry:?}");
        let Some((a, b)) = entry.bounded_range() else {
            // The EOF marker: the last 28 bytes.
            assert_eq!(entry.range.as_deref(), Some("bytes=-28"), "{entry:?}");
            continue;
        };
        if entry.path.ends_with("rand.bam") {
            assert!(
                spans.iter().any(|&(s, e)| s <= a && b < e),
                "bytes={a}-{b} is outside the planned spans {spans:?}"
            );
        } else {
            assert!(entry.path.ends_with("rand.bam.bai"), "{entry:?}");
            assert_eq!(a, 0, "the index is read from its start");
        }
    }
    // The same requests as plain HTTP makes for the same query.
    let plain = testkit::Server::start(&testkit::corpus_dir()).unwrap();
    ok(
        &query_args(&plain.url("data/rand.bam"), &plain.url("data/rand.bam.bai")),
        &[],
    );
    plain.settled_summary();
    assert_eq!(needed(&s3_log), needed(&plain.log()));
}

#[test]
fn a_wrong_secret_fails_with_a_signature_error_and_no_output() {
    let stack = stack();
    let wrong = "not-the-secret-key-42";
    one_line_failure(
        &query_args(&s3_url("rand.bam"), &s3_url("rand.bam.bai")),
        &stack.env(wrong),
        "SignatureDoesNotMatch",
        &[wrong, "Signature="],
    );
}

#[test]
fn no_credentials_means_unsigned_and_says_so() {
    let stack = stack();
    let mut env = stack.env(s3::SECRET_KEY);
    env.retain(|(k, _)| k != "AWS_ACCESS_KEY_ID" && k != "AWS_SECRET_ACCESS_KEY");
    let args = vec!["view".to_string(), s3_url("rand.bam")];
    one_line_failure(&args, &env, "no AWS credentials were found", &[]);
    stack.proxy.settled_summary();
    let log = stack.proxy.log();
    assert!(log.iter().all(|e| e.header("authorization").is_none()));
}

#[test]
fn virtual_hosted_addressing() {
    let stack = stack();
    let expected = ok(&query_args(&local("rand.bam"), &local("rand.bam.bai")), &[]);
    let mut env = stack.env(s3::SECRET_KEY);
    // `*.localhost` resolves to the loopback address inside libcurl: no DNS needed.
    let endpoint = format!("http://localhost:{}", stack.proxy.addr().port());
    env.push(("AWS_ENDPOINT_URL".into(), Some(endpoint)));
    env.push(("AWS_S3_ADDRESSING_STYLE".into(), Some("virtual".into())));
    let got = ok(
        &query_args(&s3_url("rand.bam"), &s3_url("rand.bam.bai")),
        &env,
    );
    assert_eq!(got, expected);
    stack.proxy.settled_summary();
    let log = stack.proxy.log();
    assert!(!log.is_empty());
    for entry in &log {
        assert!(entry.path.starts_with("/data/"), "{entry:?}");
        let host = entry.header("host").unwrap_or("");
        assert!(host.starts_with("corpus.localhost:"), "{host}");
    }
}

#[test]
fn presigned_urls_from_boto3_with_and_without_idx() {
    let stack = stack();
    let python = boto3();
    let (bam, bai) = &presigned_pair(&stack, &python);
    let secrets = [signature_of(bam), signature_of(bai)];
    let env = no_aws();
    let expected = ok(&query_args(&local("rand.bam"), &local("rand.bam.bai")), &[]);
    let mut joined = vec!["view".to_string(), format!("{bam}##idx##{bai}")];
    joined.extend(FIVE_REGIONS.iter().map(|r| r.to_string()));
    for (what, args) in [("-X", query_args(bam, bai)), ("##idx##", joined)] {
        stack.proxy.reset();
        let (success, got, err) = run(&args, &env);
        assert!(success, "pre-signed {what}: {err}");
        assert_eq!(got, expected, "pre-signed {what}: output");
        assert!(!secrets.iter().any(|s| err.contains(s)));
        stack.proxy.settled_summary();
        let log = stack.proxy.log();
        assert!(!log.is_empty());
        for entry in &log {
            assert_eq!(
                entry.method, "GET",
                "a pre-signed GET refuses HEAD: {entry:?}"
            );
            assert!(entry.is_bounded(), "{entry:?}");
            // Used verbatim: the signed query arrived as boto3 made it.
            let query = entry.query.as_deref().unwrap_or("");
            assert!(bam.ends_with(query) || bai.ends_with(query), "{query}");
        }
    }
    let whole = ok(&["view".to_string(), local("rand.bam")], &[]);
    assert_eq!(ok(&["view".to_string(), bam.clone()], &env), whole);
    // A region without the index's URL: a pre-signed URL's index name cannot be derived.
    stack.proxy.reset();
    let args = vec!["view".to_string(), bam.clone(), FIVE_REGIONS[0].to_string()];
    one_line_failure(&args, &env, "cannot be derived", &secrets);
    assert!(stack
        .proxy
        .log()
        .iter()
        .all(|e| !e.path.ends_with(".bai") && !e.path.ends_with(".csi")));
}

#[test]
fn altered_or_expired_presigned_urls_give_one_clear_line() {
    let stack = stack();
    let python = boto3();
    let env = no_aws();
    let (bam, bai) = &presigned_pair(&stack, &python);
    let at = bam.rfind("X-Amz-Signature=").expect("a SigV4 URL") + "X-Amz-Signature=".len();
    let flipped = if bam.as_bytes()[at] == b'0' { '1' } else { '0' };
    let altered = format!("{}{flipped}{}", &bam[..at], &bam[at + 1..]);
    one_line_failure(
        &query_args(&altered, bai),
        &env,
        "SignatureDoesNotMatch",
        &["X-Amz-Signature", signature_of(bam)],
    );
    let short = s3::presign(&python, &stack.endpoint(), BUCKET, &["data/rand.bam"], 1).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    one_line_failure(
        &query_args(&short[0], bai),
        &env,
        "expired",
        &["X-Amz-Signature", signature_of(&short[0])],
    );
}

#[test]
fn s3_presigned_and_plain_http_move_the_same_bytes() {
    let stack = stack();
    let python = boto3();
    let table = s3::byte_totals(hts(), &stack, &python, BUCKET, &FIVE_REGIONS).unwrap();
    println!("{table}");
}
