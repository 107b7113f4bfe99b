//! What the S3 test bed shows: one query over `s3://` with hts's log and the server's, and the
//! byte totals of `s3://`, a pre-signed URL and plain HTTP side by side for the same query.

use std::path::Path;

use super::{presign, S3Stack, SECRET_KEY};
use crate::corpus::{apply_env, EnvChange};
use crate::{LogEntry, Server, Summary};

/// Runs `hts ARGS` with `env`: stdout and stderr, or an error naming the failure.
fn run(hts: &Path, args: &[String], env: &[EnvChange]) -> Result<(Vec<u8>, String), String> {
    let mut command = crate::command(hts);
    // Byte totals of cold runs: the index cache stays out of it.
    command.env("HTS_CACHE", "off");
    apply_env(&mut command, env);
    let out = command
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", hts.display()))?;
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok((out.stdout, err))
    } else {
        Err(format!(
            "hts {} failed ({}): {err}",
            args.join(" "),
            out.status
        ))
    }
}

fn query(bam: &str, bai: &str, regions: &[&str]) -> Vec<String> {
    let mut args = vec!["view".to_string(), "-X".into(), bam.into(), bai.into()];
    args.extend(regions.iter().map(|r| r.to_string()));
    args
}

fn log_line(e: &LogEntry) -> String {
    format!(
        "  conn {} {} {} Range: {} -> {} ({} bytes)",
        e.connection,
        e.method,
        e.path,
        e.range.as_deref().unwrap_or("-"),
        e.status,
        e.content_length
    )
}

/// `hts view -v 1 -X s3://BUCKET/data/rand.bam s3://BUCKET/data/rand.bam.bai REGION`: the
/// command, hts's request log, the record count, and the server's log of the same requests.
pub fn demo(hts: &Path, stack: &S3Stack, bucket: &str, region: &str) -> Result<String, String> {
    let mut args = query(
        &format!("s3://{bucket}/data/rand.bam"),
        &format!("s3://{bucket}/data/rand.bam.bai"),
        &[region],
    );
    args.splice(1..1, ["-v".to_string(), "1".to_string()]);
    stack.proxy.reset();
    let (out, err) = run(hts, &args, &stack.env(SECRET_KEY))?;
    let mut text = format!(
        "$ AWS_ENDPOINT_URL={} hts {}\n{err}({} records)\n\nthe server's log (s3s-fs behind the test server in proxy mode):\n",
        stack.endpoint(),
        args.join(" "),
        String::from_utf8_lossy(&out).lines().count()
    );
    stack.proxy.settled_summary();
    for entry in stack.proxy.log() {
        text += &log_line(&entry);
        text.push('\n');
    }
    Ok(text)
}

/// The query `regions` on `data/rand.bam` over `s3://`, a boto3 pre-signed URL and plain HTTP:
/// a table of what each server sent. An error unless every output equals the local query's and
/// all three moved the same body bytes in bounded requests.
pub fn byte_totals(
    hts: &Path,
    stack: &S3Stack,
    python: &Path,
    bucket: &str,
    regions: &[&str],
) -> Result<String, String> {
    let data = crate::corpus_dir().join("data");
    let local = |name: &str| data.join(name).display().to_string();
    let (expected, _) = run(
        hts,
        &query(&local("rand.bam"), &local("rand.bam.bai"), regions),
        &[],
    )?;
    let plain = Server::start(&crate::corpus_dir())?;
    let keys = ["data/rand.bam", "data/rand.bam.bai"];
    let urls = presign(python, &stack.endpoint(), bucket, &keys, 3600)?;
    let s3 = |key: &str| format!("s3://{bucket}/{key}");
    let runs: [(&str, Vec<String>, Vec<EnvChange>, &Server); 3] = [
        (
            "s3://",
            query(&s3(keys[0]), &s3(keys[1]), regions),
            stack.env(SECRET_KEY),
            &stack.proxy,
        ),
        (
            "pre-signed",
            query(&urls[0], &urls[1], regions),
            Vec::new(),
            &stack.proxy,
        ),
        (
            "plain http",
            query(&plain.url(keys[0]), &plain.url(keys[1]), regions),
            Vec::new(),
            &plain,
        ),
    ];
    let mut rows: Vec<(&str, Summary, u64)> = Vec::new();
    for (label, args, env, server) in &runs {
        server.reset();
        let (got, _) = run(hts, args, env)?;
        if got != expected {
            return Err(format!(
                "{label}: the output differs from the local query's"
            ));
        }
        // Requests still running when hts exits end with it: wait until the log is still.
        let summary = server.settled_summary();
        rows.push((label, summary, needed_bytes(&server.log())));
    }
    let mut table = format!(
        "{} on rand.bam: what each server sent\n\n| transport | requests | GETs | body bytes | needed body bytes | bytes on the wire | connections | ranges |\n|---|---|---|---|---|---|---|---|\n",
        regions.join(" ")
    );
    for (label, s, needed) in &rows {
        table += &format!(
            "| {label} | {} | {} | {} | {needed} | {} | {} | {} |\n",
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
    table += "\n(needed: the body bytes of the requests that no other request's range contains; \
              a span that an earlier window already holds may be asked for and cancelled, or \
              not, depending on timing)\n";
    let differ = rows.windows(2).any(|w| w[0].2 != w[1].2);
    if differ || rows.iter().any(|(_, s, _)| s.unbounded > 0) {
        return Err(format!("the transports moved different bytes:\n{table}"));
    }
    Ok(table)
}

/// The GETs whose range no other request for the same object contains (an identical earlier
/// one counts as containing): what the query needed, whatever requests for bytes already held
/// were made on the side (a span an earlier window holds may be asked for and cancelled, or not,
/// depending on timing).
pub fn needed_requests(log: &[LogEntry]) -> Vec<&LogEntry> {
    let gets: Vec<&LogEntry> = log.iter().filter(|e| e.method == "GET").collect();
    let contained = |i: usize, e: &LogEntry| {
        let Some((a, b)) = e.bounded_range() else {
            return false;
        };
        gets.iter().enumerate().any(|(j, o)| {
            j != i
                && o.path == e.path
                && o.bounded_range()
                    .is_some_and(|(c, d)| c <= a && b <= d && ((c, d) != (a, b) || j < i))
        })
    };
    gets.iter()
        .enumerate()
        .filter(|(i, e)| !contained(*i, e))
        .map(|(_, e)| *e)
        .collect()
}

/// The body bytes of [`needed_requests`].
pub fn needed_bytes(log: &[LogEntry]) -> u64 {
    needed_requests(log).iter().map(|e| e.content_length).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str, range: &str, len: u64) -> LogEntry {
        LogEntry {
            connection: 1,
            method: "GET".into(),
            path: path.into(),
            query: None,
            range: Some(range.into()),
            headers: Vec::new(),
            status: 206,
            content_length: len,
            fault: None,
            arrived: std::time::Instant::now(),
            answered: std::time::Instant::now(),
        }
    }

    #[test]
    fn requests_inside_others_are_not_needed() {
        let log = [
            get("/x.bam", "bytes=0-65535", 65536),
            get("/x.bam", "bytes=-28", 28),
            get("/x.bam", "bytes=233-25465", 25233),
            get("/x.bai", "bytes=0-100", 101),
            get("/x.bam", "bytes=100000-100099", 100),
            get("/x.bam", "bytes=100000-100099", 100),
        ];
        assert_eq!(needed_bytes(&log), 65536 + 28 + 101 + 100);
    }
}
