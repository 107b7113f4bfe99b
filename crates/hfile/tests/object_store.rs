//! `s3://` and `gs://` through the HTTP transport, against the project's test server with
//! `testkit` faults for the answers only AWS gives (a region redirect): every attempt signed for
//! its own span, the redirect answered once, refusals turned into one clear line without secrets,
//! and the requester-pays and bearer-token headers on the wire. The same paths against a real S3
//! (s3s-fs, which verifies every signature) are in `crates/cli/tests/s3.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hfile::s3::profile::Env;
use hfile::{Error, HFile, Hints, OpenOptions, S3Backend};
// The tests take turns (`serial`): transfer statistics are process-wide.
use testkit::{serial, Fault, LogEntry, Rule};

/// The object's bytes; not periodic, so a misplaced window shows.
fn object() -> Vec<u8> {
    (0..300_000u64)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

/// The test server with `bkt/obj` (path-style `s3://bkt/obj`, or `gs://bkt/obj`).
struct Store {
    server: testkit::Server,
    dir: std::path::PathBuf,
}

impl Store {
    fn start() -> Store {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hfile-object-store-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(dir.join("bkt")).unwrap();
        std::fs::write(dir.join("bkt/obj"), object()).unwrap();
        let server = testkit::Server::start(&dir).unwrap();
        Store { server, dir }
    }

    fn fault(&self, fault: Fault, times: Option<usize>) {
        self.server.add_rule(Rule {
            path: "/bkt/obj".into(),
            fault,
            times,
        });
    }

    fn s3_env(&self) -> Env {
        Env::from_pairs([
            ("AWS_ACCESS_KEY_ID", "AKIDTEST".to_string()),
            ("AWS_SECRET_ACCESS_KEY", "secret-never-shown".to_string()),
            ("AWS_REGION", "us-east-1".to_string()),
            ("AWS_ENDPOINT_URL", self.server.base()),
            ("AWS_CONFIG_FILE", "/nonexistent".to_string()),
            ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent".to_string()),
        ])
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn options() -> OpenOptions {
    OpenOptions {
        retries: 3,
        retry_backoff: Duration::from_millis(10),
        connect_timeout: Duration::from_secs(2),
        ..OpenOptions::default()
    }
}

/// Bytes `[start, end)` read as BGZF reads a span: seek, limit, read.
fn span(file: &mut HFile, start: u64, end: u64) -> Vec<u8> {
    file.seek_to(start).unwrap();
    file.set_readahead_limit(Some(end));
    let mut out = vec![0u8; (end - start) as usize];
    file.read_full(&mut out).unwrap();
    out
}

fn xml_status(status: u16, headers: &[(&str, &str)], body: &str) -> Fault {
    Fault::Status {
        status,
        body: body.to_string(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn authorization(entry: &LogEntry) -> &str {
    entry.header("authorization").unwrap_or("")
}

#[test]
fn every_attempt_is_signed_with_its_range() {
    let _g = serial();
    let store = Store::start();
    store.fault(xml_status(503, &[("retry-after", "0")], ""), Some(2));
    let mut options = options();
    options.s3.requester_pays = true;
    let backend = S3Backend::open_in(&store.s3_env(), "s3://bkt/obj", &options).unwrap();
    let mut file = HFile::new(Box::new(backend));
    assert_eq!(span(&mut file, 100, 5000), &object()[100..5000]);
    let log = store.server.log();
    assert_eq!(log.len(), 3, "two refusals and one success: {log:?}");
    for entry in &log {
        assert_eq!(entry.path, "/bkt/obj");
        assert_eq!(entry.range.as_deref(), Some("bytes=100-4999"));
        let auth = authorization(entry);
        assert!(
            auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTEST/"),
            "{auth}"
        );
        assert!(
            auth.contains(
                "/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;\
                 x-amz-date;x-amz-request-payer,"
            ),
            "{auth}"
        );
        assert_eq!(entry.header("x-amz-request-payer"), Some("requester"));
        assert!(entry.header("x-amz-date").is_some());
    }
    assert_eq!(file.name(), "s3://bkt/obj");
}

#[test]
fn a_region_redirect_is_followed_once() {
    let _g = serial();
    let store = Store::start();
    let redirect = "<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting \
                    to access must be addressed using the specified endpoint.</Message>\
                    <Endpoint>bkt.s3.eu-west-1.amazonaws.com</Endpoint></Error>";
    store.fault(
        xml_status(301, &[("x-amz-bucket-region", "eu-west-1")], redirect),
        Some(1),
    );
    let backend = S3Backend::open_in(&store.s3_env(), "s3://bkt/obj", &options()).unwrap();
    let mut file = HFile::new(Box::new(backend));
    assert_eq!(span(&mut file, 10, 2000), &object()[10..2000]);
    // Later spans stay in the bucket's region.
    assert_eq!(
        span(&mut file, 200_000, 201_000),
        &object()[200_000..201_000]
    );
    let log = store.server.log();
    let scopes: Vec<&str> = log.iter().map(authorization).collect();
    assert_eq!(scopes.len(), 3, "{scopes:?}");
    assert!(scopes[0].contains("/us-east-1/s3/"), "{}", scopes[0]);
    assert!(scopes[1].contains("/eu-west-1/s3/"), "{}", scopes[1]);
    assert!(scopes[2].contains("/eu-west-1/s3/"), "{}", scopes[2]);
    assert_eq!(
        log[1].range, log[0].range,
        "the refused span is asked again"
    );
}

#[test]
fn refusals_are_one_line_naming_the_object_without_secrets() {
    let _g = serial();
    let store = Store::start();
    let denied = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch\
                  </Code><Message>The request signature we calculated does not match the \
                  signature you provided.</Message><StringToSign>AWS4-HMAC-SHA256 TOPSECRET\
                  </StringToSign><SignatureProvided>feedface</SignatureProvided></Error>";
    store.fault(xml_status(403, &[], denied), None);
    let mut backend = S3Backend::open_in(&store.s3_env(), "s3://bkt/obj", &options()).unwrap();
    let e = hfile::Backend::read(&mut backend, &mut [0u8; 10]).unwrap_err();
    assert!(matches!(e, Error::Status { status: 403, .. }), "{e}");
    let line = e.to_string();
    assert!(
        line.starts_with(
            "s3://bkt/obj: HTTP status 403 at byte 0: SignatureDoesNotMatch: The request \
             signature we calculated"
        ),
        "{line}"
    );
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
    // Not a redirect: nothing asked again.
    assert_eq!(store.server.log().len(), 1);
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
    let store = Store::start();
    let env = Env::from_pairs([
        ("HTS_GCS_HOST", store.server.base()),
        ("GCS_OAUTH_TOKEN", "ya29.token".to_string()),
        ("GCS_REQUESTER_PAYS_PROJECT", "my-project".to_string()),
    ]);
    let backend = hfile::gcs::open_gcs_in(&env, "gs://bkt/obj", &options()).unwrap();
    let mut file = HFile::new(backend);
    assert_eq!(span(&mut file, 0, 1000), &object()[..1000]);
    let log = store.server.log();
    assert_eq!(log[0].path, "/bkt/obj");
    assert_eq!(log[0].header("authorization"), Some("Bearer ya29.token"));
    assert_eq!(log[0].header("x-goog-user-project"), Some("my-project"));
    assert_eq!(file.name(), "gs://bkt/obj");
}
