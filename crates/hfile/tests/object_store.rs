//! `s3://` and `gs://` through the HTTP transport against the test server: every attempt signed
//! for its own span, a region redirect answered once, refusals turned into one clear line, and the
//! headers of requester-pays and bearer tokens on the wire. (The same paths against a real S3,
//! s3s-fs, which verifies each signature, run in `cargo xtask test`.)

mod common;

use common::{fast_options, read_span, serial, Logged, Server};
use hfile::s3::profile::Env;
use hfile::{Backend, Error, OpenOptions, S3Backend};

fn s3_env(server: &Server) -> Env {
    Env::from_pairs([
        ("AWS_ACCESS_KEY_ID", "AKIDTEST".to_string()),
        ("AWS_SECRET_ACCESS_KEY", "secret-never-shown".to_string()),
        ("AWS_REGION", "us-east-1".to_string()),
        ("AWS_ENDPOINT_URL", server.url("")),
        ("AWS_CONFIG_FILE", "/nonexistent".to_string()),
        ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent".to_string()),
    ])
}

fn header<'a>(entry: &'a Logged, name: &str) -> Option<&'a str> {
    entry
        .headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn every_attempt_is_signed_with_its_range() {
    let _g = serial();
    let s = Server::start();
    let mut options = fast_options();
    options.s3.requester_pays = true;
    // Path-style on a custom endpoint: bucket `fault`, key `503_twice` (two 503s, then data).
    let mut b = S3Backend::open_in(&s3_env(&s), "s3://fault/503_twice", &options).unwrap();
    assert_eq!(read_span(&mut b, 100, 5000).unwrap(), &s.data[100..5000]);
    let log = s.log();
    assert_eq!(log.len(), 3, "two refusals and one success");
    for entry in &log {
        assert_eq!(entry.path, "/fault/503_twice");
        assert_eq!(entry.range.as_deref(), Some("bytes=100-4999"));
        let auth = header(entry, "authorization").expect("signed");
        assert!(
            auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTEST/"),
            "{auth}"
        );
        assert!(
            auth.contains("/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date;x-amz-request-payer,"),
            "{auth}"
        );
        assert_eq!(header(entry, "x-amz-request-payer"), Some("requester"));
        assert!(header(entry, "x-amz-date").is_some());
    }
    assert_eq!(b.name(), "s3://fault/503_twice");
}

#[test]
fn a_region_redirect_is_followed_once() {
    let _g = serial();
    let s = Server::start();
    let mut b = S3Backend::open_in(&s3_env(&s), "s3://fault/s3region", &fast_options()).unwrap();
    assert_eq!(read_span(&mut b, 10, 2000).unwrap(), &s.data[10..2000]);
    let scopes: Vec<String> = s
        .log()
        .iter()
        .map(|e| header(e, "authorization").unwrap_or("").to_string())
        .collect();
    assert_eq!(scopes.len(), 2, "{scopes:?}");
    assert!(scopes[0].contains("/us-east-1/s3/"), "{}", scopes[0]);
    assert!(scopes[1].contains("/eu-west-1/s3/"), "{}", scopes[1]);
    // Later reads stay in the bucket's region.
    assert_eq!(
        read_span(&mut b, 100_000, 101_000).unwrap(),
        &s.data[100_000..101_000]
    );
    assert_eq!(s.log().len(), 3);
}

#[test]
fn refusals_are_one_line_naming_the_object_without_secrets() {
    let _g = serial();
    let s = Server::start();
    let mut b = S3Backend::open_in(&s3_env(&s), "s3://fault/s3denied", &fast_options()).unwrap();
    let e = b.read(&mut [0u8; 10]).unwrap_err();
    assert!(matches!(e, Error::Status { status: 403, .. }), "{e}");
    let line = e.to_string();
    assert!(line.starts_with("s3://fault/s3denied: HTTP status 403 at byte 0: SignatureDoesNotMatch: The request signature we calculated"), "{line}");
    for secret in [
        "TOPSECRET",
        "feedface",
        "secret-never-shown",
        "Signature=",
        "\n",
    ] {
        assert!(!line.contains(secret), "{line}");
        assert!(!format!("{e:?}").contains(secret));
    }
    // Not a redirect: nothing retried.
    assert_eq!(s.log().len(), 1);
}

#[test]
fn settings_errors_name_the_location() {
    let env = Env::from_pairs([("AWS_ACCESS_KEY_ID", "only-half")]);
    let e = S3Backend::open_in(&env, "s3://b/k", &OpenOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "s3://b/k: cannot open: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
    );
    let e =
        S3Backend::open_in(&Env::default(), "s3://id:pw@b/k", &OpenOptions::default()).unwrap_err();
    assert!(e.to_string().contains("not accepted"), "{e}");
    assert!(!e.to_string().contains(":pw@"), "{e}");
}

#[test]
fn gs_sends_the_token_and_the_billing_project() {
    let _g = serial();
    let s = Server::start();
    let env = Env::from_pairs([
        ("HTS_GCS_HOST", s.url("")),
        ("GCS_OAUTH_TOKEN", "ya29.token".to_string()),
        ("GCS_REQUESTER_PAYS_PROJECT", "my-project".to_string()),
    ]);
    // gs://data/data.bin -> http://HOST/data/data.bin, the test server's file.
    let mut b = hfile::gcs::open_gcs_in(&env, "gs://data/data.bin", &fast_options()).unwrap();
    assert_eq!(read_span(b.as_mut(), 0, 1000).unwrap(), &s.data[..1000]);
    let log = s.log();
    assert_eq!(header(&log[0], "authorization"), Some("Bearer ya29.token"));
    assert_eq!(header(&log[0], "x-goog-user-project"), Some("my-project"));
    assert_eq!(b.name(), "gs://data/data.bin");
}
