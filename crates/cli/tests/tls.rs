//! HTTPS for real: the test server behind a TLS front with a self-signed certificate. Trusted
//! through `CURL_CA_BUNDLE`, a query gives the local output; untrusted, or for a name the
//! certificate does not hold, it fails at once with one clear line.

use std::path::Path;
use std::time::{Duration, Instant};

use testkit::corpus::EnvChange;
use testkit::{hts, Server, TlsFront};

const REGION: &str = "chr1:10000-150600";

/// Runs `hts view ARGS` with only the given certificate settings (the machine's own removed).
fn view(args: &[String], bundle: Option<&Path>) -> (Option<i32>, Vec<u8>, String, Duration) {
    let mut env: Vec<EnvChange> = ["CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"]
        .iter()
        .map(|k| (k.to_string(), None))
        .collect();
    if let Some(b) = bundle {
        env.push(("CURL_CA_BUNDLE".into(), Some(b.display().to_string())));
    }
    let mut full = vec!["view".to_string(), "--no-cache".to_string()];
    full.extend(args.iter().cloned());
    let t = Instant::now();
    let out = testkit::corpus::run_with_timeout(
        hts(),
        &std::env::temp_dir(),
        &full,
        &env,
        Duration::from_secs(60),
    )
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.code, out.stdout, err, t.elapsed())
}

fn query(bam: &str, bai: &str) -> Vec<String> {
    vec!["-X".into(), bam.into(), bai.into(), REGION.into()]
}

/// A query through `front` trusting `bundle` fails at once with one line naming the URL and
/// holding `word`, and no request reaches the server.
fn refused(server: &Server, front: &TlsFront, bundle: Option<&Path>, word: &str) {
    let bam = front.url("data/rand.bam");
    let (code, out, err, took) = view(&query(&bam, &front.url("data/rand.bam.bai")), bundle);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.is_empty());
    let line = err.trim_end();
    assert_eq!(line.lines().count(), 1, "{err}");
    assert!(line.contains(&bam) && line.contains(word), "{line}");
    println!("refused: {line}");
    assert!(took < Duration::from_secs(5), "retried: {took:?}");
    assert!(server.log().is_empty(), "a request passed: {line}");
}

#[test]
fn https_with_a_trusted_self_signed_certificate() {
    let data = testkit::corpus_dir().join("data");
    let local = view(
        &query(
            data.join("rand.bam").to_str().unwrap(),
            data.join("rand.bam.bai").to_str().unwrap(),
        ),
        None,
    );
    assert_eq!(local.0, Some(0), "{}", local.2);
    let server = Server::start(&testkit::corpus_dir()).unwrap();
    let dir = std::env::temp_dir().join(format!("hts-tls-{}", std::process::id()));
    let front = TlsFront::start(server.addr(), &dir).unwrap();
    let bundle = front.cert_file();

    for (bam, bai) in [
        (front.url("data/rand.bam"), front.url("data/rand.bam.bai")),
        (
            front.url_by_name("data/rand.bam"),
            front.url_by_name("data/rand.bam.bai"),
        ),
    ] {
        let (code, out, err, _) = view(&query(&bam, &bai), Some(bundle));
        assert_eq!(code, Some(0), "{bam}: {err}");
        assert!(out == local.1, "{bam}: output differs from the local query");
    }
    // The requests went through the TLS front to the server, bounded as over plain HTTP.
    let summary = server.summary();
    assert!(summary.gets > 2, "{summary}");
    assert_eq!(summary.unbounded, 0, "{summary}");

    // Not trusted: one clear line, no retries, no output.
    server.reset();
    refused(&server, &front, None, "certificate");
    // Trusted, but made for another name than the one connected to.
    let other = TlsFront::start_for(server.addr(), &dir, &["localhost"]).unwrap();
    refused(&server, &other, Some(other.cert_file()), "name");
    let _ = std::fs::remove_dir_all(&dir);
}
