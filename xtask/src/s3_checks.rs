//! The checks against a real S3 (s3s-fs, which verifies every signature): the conformance corpus
//! over `s3://`, the request log bounded to the planner's spans, a wrong secret, pre-signed URLs
//! made by boto3 (with and without `##idx##`, expired, altered), virtual-hosted addressing,
//! anonymous access, and the byte totals of `s3://`, pre-signed and plain HTTP side by side.

use std::path::Path;

use crate::conformance::EnvChange;
use crate::s3s::{self, S3Stack};
use crate::server::{Link, Server, Summary};
use crate::{corpus_dir, five_region_args, run_hts, run_hts_env, FIVE_REGIONS};

/// The bucket holding the conformance corpus (`data/...`, `malformed/...`).
const BUCKET: &str = "corpus";

/// Starts s3s-fs (installing it if needed) with the corpus bucket.
pub fn start_corpus_stack() -> Result<S3Stack, String> {
    let objects = s3s::corpus_objects(&corpus_dir())?;
    S3Stack::start(&[(BUCKET, objects)], Link::default())
}

/// Runs every S3 check, reporting each through `step`.
pub fn run_all(hts: &Path, step: &mut dyn FnMut(&str, Result<(), String>)) {
    let python = match s3s::boto3_python() {
        Ok(p) => Some(p),
        Err(e) => {
            step("s3 tools (boto3)", Err(e));
            None
        }
    };
    let stack = match start_corpus_stack() {
        Ok(s) => s,
        Err(e) => return step("s3 server (s3s-fs)", Err(e)),
    };
    let env = stack.env(s3s::SECRET_KEY);
    step(
        "conformance s3",
        crate::run_corpus_env(
            hts,
            Some(&format!("s3://{BUCKET}")),
            &env,
            &[],
            "s3:// on s3s-fs",
        ),
    );
    let counters = stack.proxy.counters.clone();
    let log = || {
        counters
            .entries()
            .into_iter()
            .map(|e| (e.connection, e.method, e.path, e.range.unwrap_or_default()))
            .collect()
    };
    let clear = || stack.proxy.counters.reset();
    step(
        "request log s3",
        crate::check_request_log_env("s3s-fs", hts, &format!("s3://{BUCKET}"), &env, &log, &clear),
    );
    step("s3 wrong secret", wrong_secret(hts, &stack));
    step("s3 anonymous", anonymous(hts, &stack));
    step("s3 virtual-hosted", virtual_hosted(hts, &stack));
    if let Some(python) = python {
        step("s3 pre-signed (boto3)", presigned(hts, &stack, &python));
        step(
            "s3 pre-signed refused",
            presigned_refused(hts, &stack, &python),
        );
        step(
            "s3 byte totals",
            byte_totals(hts, &stack, &python).map(|t| println!("{t}")),
        );
    }
}

fn local_args(extra: &[&str]) -> Vec<String> {
    let data = corpus_dir().join("data");
    let mut args = five_region_args(
        &data.join("rand.bam").display().to_string(),
        &data.join("rand.bam.bai").display().to_string(),
    );
    args.splice(1..1, extra.iter().map(|s| s.to_string()));
    args
}

/// Runs `hts` expecting failure: (stdout, stderr).
fn run_failing(
    hts: &Path,
    args: &[String],
    env: &[EnvChange],
) -> Result<(Vec<u8>, String), String> {
    let mut command = std::process::Command::new(hts);
    crate::conformance::apply_env(&mut command, env);
    let out = command
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", hts.display()))?;
    if out.status.success() {
        return Err(format!(
            "hts {} succeeded; it should have failed",
            args.join(" ")
        ));
    }
    Ok((out.stdout, String::from_utf8_lossy(&out.stderr).to_string()))
}

/// A failure that is one clear line on stderr containing `expect`, nothing on stdout, and no
/// secret material.
fn one_line_failure(
    what: &str,
    hts: &Path,
    args: &[String],
    env: &[EnvChange],
    expect: &str,
    secrets: &[&str],
) -> Result<String, String> {
    let (out, err) = run_failing(hts, args, env)?;
    let line = err.trim_end();
    if !out.is_empty() {
        return Err(format!(
            "{what}: {} bytes on stdout, expected none",
            out.len()
        ));
    }
    if line.lines().count() != 1 || !line.contains(expect) {
        return Err(format!(
            "{what}: expected one line containing '{expect}', got: {err}"
        ));
    }
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        if line.contains(secret) {
            return Err(format!(
                "{what}: the message shows a secret ({secret}): {line}"
            ));
        }
    }
    println!("{what}: {line}");
    Ok(line.to_string())
}

fn wrong_secret(hts: &Path, stack: &S3Stack) -> Result<(), String> {
    let wrong = "not-the-secret-key-42";
    let args = five_region_args(
        &format!("s3://{BUCKET}/data/rand.bam"),
        &format!("s3://{BUCKET}/data/rand.bam.bai"),
    );
    one_line_failure(
        "wrong secret",
        hts,
        &args,
        &stack.env(wrong),
        "SignatureDoesNotMatch",
        &[wrong, "Signature="],
    )
    .map(|_| ())
}

fn anonymous(hts: &Path, stack: &S3Stack) -> Result<(), String> {
    let mut env = stack.env(s3s::SECRET_KEY);
    env.retain(|(k, _)| k != "AWS_ACCESS_KEY_ID" && k != "AWS_SECRET_ACCESS_KEY");
    env.push(("AWS_ACCESS_KEY_ID".into(), None));
    env.push(("AWS_SECRET_ACCESS_KEY".into(), None));
    let args = vec!["view".to_string(), format!("s3://{BUCKET}/data/rand.bam")];
    one_line_failure(
        "anonymous",
        hts,
        &args,
        &env,
        "no AWS credentials were found",
        &[],
    )
    .map(|_| ())
}

fn virtual_hosted(hts: &Path, stack: &S3Stack) -> Result<(), String> {
    let (expected, _) = run_hts(hts, &local_args(&[]))?;
    let mut env = stack.env(s3s::SECRET_KEY);
    // `*.localhost` resolves to the loopback address inside libcurl: no DNS needed.
    let endpoint = format!("http://localhost:{}", stack.proxy.addr.port());
    env.push(("AWS_ENDPOINT_URL".into(), Some(endpoint)));
    env.push(("AWS_S3_ADDRESSING_STYLE".into(), Some("virtual".into())));
    stack.proxy.counters.reset();
    let args = five_region_args(
        &format!("s3://{BUCKET}/data/rand.bam"),
        &format!("s3://{BUCKET}/data/rand.bam.bai"),
    );
    let (got, _) = run_hts_env(hts, &args, &env)?;
    if got != expected {
        return Err("virtual-hosted: output differs from the local query".into());
    }
    let paths: Vec<String> = stack
        .proxy
        .counters
        .entries()
        .into_iter()
        .map(|e| e.path)
        .collect();
    // Virtual-hosted: the bucket is in the host name, not the path.
    if paths.is_empty() || paths.iter().any(|p| p.starts_with(&format!("/{BUCKET}/"))) {
        return Err(format!(
            "virtual-hosted: unexpected request paths {paths:?}"
        ));
    }
    println!(
        "virtual-hosted: {} requests to {BUCKET}.localhost, output identical",
        paths.len()
    );
    Ok(())
}

fn presigned(hts: &Path, stack: &S3Stack, python: &Path) -> Result<(), String> {
    let urls = s3s::presign(
        python,
        &stack.endpoint(),
        BUCKET,
        &["data/rand.bam", "data/rand.bam.bai"],
        3600,
    )?;
    let (bam, bai) = (&urls[0], &urls[1]);
    let signature = |u: &str| u.split("X-Amz-Signature=").nth(1).unwrap_or("").to_string();
    let secrets = [signature(bam), signature(bai)];
    // No credentials at all: the URLs alone must do.
    let env = no_credentials();
    let (expected, _) = run_hts(hts, &local_args(&[]))?;
    let with_x = five_region_args(bam, bai);
    let joined = {
        let mut a = vec!["view".to_string(), format!("{bam}##idx##{bai}")];
        a.extend(FIVE_REGIONS.iter().map(|s| s.to_string()));
        a
    };
    for (what, args) in [("-X", with_x), ("##idx##", joined)] {
        stack.proxy.counters.reset();
        let (got, err) = run_hts_env(hts, &args, &env)?;
        if got != expected {
            return Err(format!(
                "pre-signed {what}: output differs from the local query"
            ));
        }
        if secrets.iter().any(|s| err.contains(s.as_str())) {
            return Err(format!("pre-signed {what}: stderr shows a signature"));
        }
        let summary = stack.proxy.counters.summary();
        if summary.unbounded > 0 || summary.gets == 0 {
            return Err(format!("pre-signed {what}: {summary}"));
        }
        println!("pre-signed {what}: output identical; {summary}");
    }
    // The whole file, no index.
    let data = corpus_dir().join("data/rand.bam");
    let (whole_local, _) = run_hts(hts, &["view".into(), data.display().to_string()])?;
    let (whole, _) = run_hts_env(hts, &["view".into(), bam.clone()], &env)?;
    if whole != whole_local {
        return Err("pre-signed whole file: output differs".into());
    }
    // A region without the index's URL: the name cannot be derived, and is not tried.
    stack.proxy.counters.reset();
    let args = vec!["view".to_string(), bam.clone(), FIVE_REGIONS[0].to_string()];
    let secret_refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
    one_line_failure(
        "pre-signed without index",
        hts,
        &args,
        &env,
        "cannot be derived",
        &secret_refs,
    )?;
    if stack
        .proxy
        .counters
        .entries()
        .iter()
        .any(|e| e.path.ends_with(".bai") || e.path.ends_with(".csi"))
    {
        return Err("pre-signed without index: an index name was derived and requested".into());
    }
    Ok(())
}

fn presigned_refused(hts: &Path, stack: &S3Stack, python: &Path) -> Result<(), String> {
    let env = no_credentials();
    let urls = s3s::presign(
        python,
        &stack.endpoint(),
        BUCKET,
        &["data/rand.bam", "data/rand.bam.bai"],
        3600,
    )?;
    let (bam, bai) = (&urls[0], &urls[1]);
    // One character of the signature changed.
    let altered = match bam.rfind("X-Amz-Signature=") {
        Some(i) => {
            let at = i + "X-Amz-Signature=".len();
            let old = bam.as_bytes()[at];
            let new = if old == b'0' { '1' } else { '0' };
            format!("{}{new}{}", &bam[..at], &bam[at + 1..])
        }
        None => {
            return Err(format!(
                "boto3 URL without X-Amz-Signature: {}",
                s3s_redact(bam)
            ))
        }
    };
    one_line_failure(
        "altered pre-signed URL",
        hts,
        &five_region_args(&altered, bai),
        &env,
        "SignatureDoesNotMatch",
        &["X-Amz-Signature"],
    )?;
    let short = s3s::presign(python, &stack.endpoint(), BUCKET, &["data/rand.bam"], 1)?;
    std::thread::sleep(std::time::Duration::from_millis(2500));
    one_line_failure(
        "expired pre-signed URL",
        hts,
        &five_region_args(&short[0], bai),
        &env,
        "expired",
        &["X-Amz-Signature"],
    )?;
    Ok(())
}

fn s3s_redact(url: &str) -> String {
    bam::hfile::redact_url(url)
}

/// An environment with no AWS settings at all.
fn no_credentials() -> Vec<EnvChange> {
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

/// `hts view -v 1 -X s3://.../rand.bam s3://.../rand.bam.bai REGION` with hts's own log and the
/// server's request log.
pub fn demo(hts: &Path, stack: &S3Stack, region: &str) -> Result<String, String> {
    let args: Vec<String> = [
        "view",
        "-v",
        "1",
        "-X",
        &format!("s3://{BUCKET}/data/rand.bam"),
        &format!("s3://{BUCKET}/data/rand.bam.bai"),
        region,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    stack.proxy.counters.reset();
    let (out, err) = run_hts_env(hts, &args, &stack.env(s3s::SECRET_KEY))?;
    let mut text = format!(
        "$ AWS_ENDPOINT_URL={} hts {}\n{err}({} records)\n\nserver request log (s3s-fs behind the logging proxy):\n",
        stack.endpoint(),
        args.join(" "),
        String::from_utf8_lossy(&out).lines().count()
    );
    for e in stack.proxy.counters.entries() {
        text += &format!(
            "  conn {} {} {} Range: {} -> {} ({} bytes)\n",
            e.connection,
            e.method,
            e.path,
            e.range.as_deref().unwrap_or("-"),
            e.status,
            e.content_length
        );
    }
    Ok(text)
}

/// The 5-region query over `s3://`, a pre-signed URL and plain HTTP: what each server sent.
/// Fails unless the outputs equal the local query's and the body bytes are the same for all.
pub fn byte_totals(hts: &Path, stack: &S3Stack, python: &Path) -> Result<String, String> {
    let (expected, _) = run_hts(hts, &local_args(&[]))?;
    let plain = Server::start(&corpus_dir(), 0)?;
    let urls = s3s::presign(
        python,
        &stack.endpoint(),
        BUCKET,
        &["data/rand.bam", "data/rand.bam.bai"],
        3600,
    )?;
    let s3_env = stack.env(s3s::SECRET_KEY);
    let none = no_credentials();
    let runs: Vec<(&str, Vec<String>, &[EnvChange], &Server)> = vec![
        (
            "s3://",
            five_region_args(
                &format!("s3://{BUCKET}/data/rand.bam"),
                &format!("s3://{BUCKET}/data/rand.bam.bai"),
            ),
            &s3_env,
            &stack.proxy,
        ),
        (
            "pre-signed",
            five_region_args(&urls[0], &urls[1]),
            &none,
            &stack.proxy,
        ),
        (
            "plain http",
            five_region_args(&plain.url("data/rand.bam"), &plain.url("data/rand.bam.bai")),
            &none,
            &plain,
        ),
    ];
    let mut rows: Vec<(&str, Summary)> = Vec::new();
    for (label, args, env, server) in runs {
        server.counters.reset();
        let (got, _) = run_hts_env(hts, &args, env)?;
        if got != expected {
            return Err(format!("{label}: output differs from the local query"));
        }
        rows.push((label, server.counters.summary()));
    }
    let mut table = format!(
        "5-region query ({}) on rand.bam: what the server sent\n\n| transport | requests | GETs | body bytes | bytes on the wire | connections | ranges |\n|---|---|---|---|---|---|---|\n",
        FIVE_REGIONS.join(" ")
    );
    for (label, s) in &rows {
        table += &format!(
            "| {label} | {} | {} | {} | {} | {} | {} |\n",
            s.requests,
            s.gets,
            s.advertised,
            s.written,
            s.connections,
            if s.unbounded == 0 {
                "all bounded".to_string()
            } else {
                format!("{} unbounded", s.unbounded)
            }
        );
    }
    let bodies: Vec<u64> = rows.iter().map(|(_, s)| s.advertised).collect();
    if bodies.windows(2).any(|w| w[0] != w[1]) || rows.iter().any(|(_, s)| s.unbounded > 0) {
        return Err(format!(
            "the transports moved different body bytes:\n{table}"
        ));
    }
    Ok(table)
}
