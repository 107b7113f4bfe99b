//! Secrets (issue 9, item 7): signatures and tokens in URLs, passwords in URLs, and credential
//! headers reach the server but never stderr (`-v 3`: libcurl's own trace included), an error
//! message, the `@PG` line, or a `Debug` dump.

use testkit::{hts, Fault, Rule, Server};

const SIGNATURE: &str = "SIGdeadbeef0123";
const CREDENTIAL: &str = "AKIAHIDDEN";
const TOKEN: &str = "TOKENsessionXYZ";
const BEARER: &str = "BEARERsecret42";
const COOKIE: &str = "COOKIEvalue77";
const PASSWORD: &str = "PASSW0RDhidden";

const SECRETS: [&str; 6] = [SIGNATURE, CREDENTIAL, TOKEN, BEARER, COOKIE, PASSWORD];

/// A pre-signed-looking URL of `path` on `server`, with a password in its authority.
fn signed(server: &Server, path: &str) -> String {
    let base = server
        .base()
        .replace("http://", &format!("http://user:{PASSWORD}@"));
    format!(
        "{base}/{path}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={CREDENTIAL}%2F20250101\
         &X-Amz-Security-Token={TOKEN}&X-Amz-Signature={SIGNATURE}"
    )
}

fn headers() -> Vec<String> {
    vec![
        "--header".into(),
        format!("Authorization: Bearer {BEARER}"),
        format!("--header=Cookie: session={COOKIE}"),
    ]
}

fn assert_clean(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} shows a secret ({s}):\n{text}");
    }
}

#[test]
fn verbose_logs_and_output_hide_every_secret() {
    let server = Server::start(&testkit::corpus_dir()).unwrap();
    let mut args = vec![
        "view".to_string(),
        "--no-cache".into(),
        "-v".into(),
        "3".into(),
        "-h".into(),
    ];
    args.extend(headers());
    args.extend([
        "-X".into(),
        signed(&server, "data/rand.bam"),
        signed(&server, "data/rand.bam.bai"),
        "chr1:10000-10500".into(),
    ]);
    let out = testkit::command(hts()).args(&args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The trace is there (requests, headers both ways), with the secrets taken out.
    assert!(err.contains("> GET /data/rand.bam?... HTTP/1.1"), "{err}");
    assert!(err.contains("Authorization: <redacted>"), "{err}");
    assert!(err.contains("Cookie: <redacted>"), "{err}");
    assert!(err.contains("< HTTP/1.1 206"), "{err}");
    assert_clean("stderr with -v 3", &err);
    // The @PG line holds the command line without them.
    let text = String::from_utf8_lossy(&out.stdout);
    let pg: Vec<&str> = text.lines().filter(|l| l.starts_with("@PG")).collect();
    assert_eq!(pg.len(), 1, "{text}");
    assert!(pg[0].contains("rand.bam?..."), "{}", pg[0]);
    assert_clean("the @PG line", pg[0]);
    // And yet they were sent: the server saw each of them.
    let log = server.log();
    let seen = |f: &dyn Fn(&testkit::LogEntry) -> bool| log.iter().any(f);
    assert!(seen(&|e| e
        .query
        .as_deref()
        .is_some_and(|q| q.contains(SIGNATURE))));
    assert!(seen(
        &|e| e.header("authorization") == Some(&format!("Bearer {BEARER}"))
    ));
    assert!(seen(&|e| e
        .header("cookie")
        .is_some_and(|c| c.contains(COOKIE))));
}

#[test]
fn errors_name_the_object_without_secrets() {
    let server = Server::start(&testkit::corpus_dir()).unwrap();
    for (status, body) in [
        (
            403,
            "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>",
        ),
        (404, ""),
        (500, "internal"),
    ] {
        server.clear_rules();
        server.add_rule(Rule {
            path: "/data/rand.bam".into(),
            fault: Fault::Status {
                status,
                body: body.into(),
                headers: Vec::new(),
            },
            times: None,
        });
        let mut args = vec![
            "view".to_string(),
            "--no-cache".into(),
            "-v".into(),
            "1".into(),
        ];
        args.extend(headers());
        args.push(signed(&server, "data/rand.bam"));
        let out = testkit::command(hts()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{status}: {err}");
        let last = err.lines().last().unwrap_or("");
        assert!(
            last.starts_with("hts view: http://user:***@127.0.0.1:")
                && last.contains("rand.bam?..."),
            "{status}: {last}"
        );
        assert_clean(&format!("the {status} error"), &err);
    }
}

#[test]
fn debug_dumps_hide_every_secret() {
    let url = format!(
        "https://user:{PASSWORD}@h/x.bam?X-Amz-Credential={CREDENTIAL}&X-Amz-Signature={SIGNATURE}"
    );
    let mut options = bam::OpenOptions {
        index: bam::IndexHint::At(url.clone()),
        ..Default::default()
    };
    options.transport.headers = vec![
        ("Authorization".into(), format!("Bearer {BEARER}")),
        ("x-amz-security-token".into(), TOKEN.into()),
    ];
    assert_clean("bam::OpenOptions", &format!("{options:?}"));
    let e = hfile::Error::Protocol {
        name: url.clone(),
        offset: 5,
        message: "x".into(),
    };
    assert_clean("hfile::Error", &format!("{e:?} {e}"));
    let e = bam::Error::Transport(e);
    assert_clean("bam::Error", &format!("{e:?} {e}"));
    let b = hfile::HttpBackend::open(&url, &options.transport).unwrap();
    assert_clean("HttpBackend", &format!("{b:?}"));
    let env = hfile::s3::profile::Env::from_pairs([
        ("AWS_SECRET_ACCESS_KEY", TOKEN),
        ("AWS_SESSION_TOKEN", SIGNATURE),
    ]);
    assert_clean("s3::Env", &format!("{env:?}"));
}
