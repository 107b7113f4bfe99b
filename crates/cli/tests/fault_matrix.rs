//! The fault matrix (issue 9): `hts view` over HTTP against the project's test server with one
//! misbehaviour injected at a time, each with the result a demanding user expects (the complete
//! output, identical to the local query, or one clear error naming the URL, with nothing passed
//! off as complete), asserted. Faults hyper cannot produce come from `testkit::RawServer`.
//!
//! The table of fault | expected | observed is printed (`--nocapture` shows it).
//!
//! Longer than most files: it is one table, a row per fault, each with its expectation; split,
//! the matrix would no longer read as one.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use testkit::{hts, Fault, RawFault, RawServer, Rule, Server};

const REGIONS: [&str; 5] = testkit::FIVE_REGIONS;
/// Starts of the spans the five regions read in rand.bam (tests/remote.rs, NEEDED).
const SECOND_SPAN: u64 = 101_138;
const SIZE: u64 = 389_340;
/// No case may run longer than this (a hang is a failure, not a wait).
const CASE_LIMIT: Duration = Duration::from_secs(60);

struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
    took: Duration,
}

/// Runs `hts view ARGS` with a private cache, killed after [`CASE_LIMIT`].
fn run(args: &[String], env: &[(&str, &str)]) -> Run {
    let start = Instant::now();
    let mut full = vec!["view".to_string(), "--no-cache".to_string()];
    full.extend(args.iter().cloned());
    let env: Vec<testkit::corpus::EnvChange> = env
        .iter()
        .map(|(k, v)| (k.to_string(), Some(v.to_string())))
        .collect();
    let out =
        testkit::corpus::run_with_timeout(hts(), &std::env::temp_dir(), &full, &env, CASE_LIMIT);
    match out {
        Ok(o) => Run {
            code: o.code,
            stdout: o.stdout,
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            took: start.elapsed(),
        },
        Err(e) => Run {
            code: None,
            stdout: Vec::new(),
            stderr: format!("did not finish: {e}"),
            took: start.elapsed(),
        },
    }
}

fn local(args: &[&str]) -> Vec<u8> {
    let data = testkit::corpus_dir().join("data");
    let mut full = vec!["view".to_string(), "--no-cache".to_string()];
    for a in args {
        full.push(a.replace("DATA", data.to_str().unwrap()));
    }
    let out = testkit::command(hts()).args(&full).output().unwrap();
    assert!(out.status.success(), "local {full:?}");
    out.stdout
}

/// What a case must give.
#[derive(Debug, Clone)]
enum Expect {
    /// Exit 0, output identical to the local query; stderr must hold each of these.
    Complete(&'static [&'static str]),
    /// Exit 1, each of these in the one error line(s), output a prefix of the local query's.
    Error(&'static [&'static str]),
}

struct Case {
    fault: &'static str,
    expect: Expect,
    run: Run,
    local: Vec<u8>,
}

impl Case {
    fn observed(&self) -> String {
        let last = self
            .run
            .stderr
            .lines()
            .rfind(|l| !l.starts_with("[hfile]"))
            .unwrap_or("")
            .to_string();
        let complete = self.run.code == Some(0) && self.run.stdout == self.local;
        match self.run.code {
            Some(0) if complete => format!(
                "complete output ({} bytes, {:.1} s){}",
                self.run.stdout.len(),
                self.run.took.as_secs_f64(),
                if last.is_empty() {
                    String::new()
                } else {
                    format!("; stderr: {last}")
                }
            ),
            Some(0) => format!(
                "EXIT 0 WITH DIFFERENT OUTPUT ({} of {} bytes)",
                self.run.stdout.len(),
                self.local.len()
            ),
            code => format!(
                "exit {code:?} after {:.1} s: {last}",
                self.run.took.as_secs_f64()
            ),
        }
    }

    fn check(&self) -> Result<(), String> {
        let r = &self.run;
        if r.stderr.contains("panicked") || r.code == Some(101) {
            return Err("panicked".into());
        }
        match &self.expect {
            Expect::Complete(needles) => {
                if r.code != Some(0) || r.stdout != self.local {
                    return Err("not the complete output".into());
                }
                if let Some(n) = needles.iter().find(|n| !r.stderr.contains(*n)) {
                    return Err(format!("stderr lacks '{n}'"));
                }
            }
            Expect::Error(needles) => {
                if r.code != Some(1) {
                    return Err(format!("exit {:?}, not 1", r.code));
                }
                if !self.local.starts_with(&r.stdout) {
                    return Err("output is not a prefix of the local output".into());
                }
                if let Some(n) = needles.iter().find(|n| !r.stderr.contains(*n)) {
                    return Err(format!("stderr lacks '{n}'"));
                }
                let errors: Vec<&str> = r
                    .stderr
                    .lines()
                    .filter(|l| l.starts_with("hts view:"))
                    .collect();
                if errors.len() != 1 {
                    return Err(format!("{} error lines", errors.len()));
                }
            }
        }
        Ok(())
    }
}

fn describe(e: &Expect) -> String {
    match e {
        Expect::Complete([]) => "complete output".into(),
        Expect::Complete(n) => format!("complete output, warning '{}'", n.join("', '")),
        Expect::Error(n) => format!("error: '{}'", n.join("', '")),
    }
}

/// The arguments of the five-region query (`-X BAM BAI REGIONS`) on `base`.
fn query(base: &str, bam: &str) -> Vec<String> {
    let mut a = vec![
        "-X".to_string(),
        format!("{base}/data/{bam}"),
        format!("{base}/data/rand.bam.bai"),
    ];
    a.extend(REGIONS.iter().map(|s| s.to_string()));
    a
}

fn local_query() -> Vec<u8> {
    let mut a = vec!["-X", "DATA/rand.bam", "DATA/rand.bam.bai"];
    a.extend(REGIONS);
    local(&a)
}

fn whole(base: &str) -> Vec<String> {
    vec![format!("{base}/data/rand.bam")]
}

fn on_span(fault: Fault) -> Fault {
    Fault::OnRange {
        start: SECOND_SPAN,
        fault: Box::new(fault),
    }
}

/// A server on the corpus with `rules` on rand.bam.
fn server(rules: &[(Fault, Option<usize>)]) -> Server {
    let s = Server::start(&testkit::corpus_dir()).unwrap();
    for (fault, times) in rules {
        s.add_rule(Rule {
            path: "/data/rand.bam".into(),
            fault: fault.clone(),
            times: *times,
        });
    }
    s
}

fn xml(status: u16, code: &str, message: &str) -> Fault {
    Fault::Status {
        status,
        body: format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code>\
             <Message>{message}</Message><RequestId>1</RequestId></Error>"
        ),
        headers: vec![("content-type".into(), "application/xml".into())],
    }
}

/// A folder beside the corpus for files the server must serve changed.
fn scratch_corpus(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hts-faults-{}-{name}", std::process::id()));
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for f in ["rand.bam", "rand.bam.bai"] {
        std::fs::copy(testkit::corpus_dir().join("data").join(f), data.join(f)).unwrap();
    }
    dir
}

/// A BAI for rand.bam's five references whose one chunk (chr1, bin 4681) starts at compressed
/// offset 2^47.
fn far_chunk_bai() -> Vec<u8> {
    let mut b = b"BAI\x01".to_vec();
    b.extend(5i32.to_le_bytes());
    let start = (1u64 << 47) << 16;
    b.extend(1i32.to_le_bytes());
    b.extend(4681u32.to_le_bytes());
    b.extend(1i32.to_le_bytes());
    b.extend(start.to_le_bytes());
    b.extend((start + 100).to_le_bytes());
    b.extend(0i32.to_le_bytes());
    for _ in 0..4 {
        b.extend([0u8; 8]);
    }
    b
}

/// The five-region query against the test server with these rules on rand.bam.
type QueryCase = (&'static str, Vec<(Fault, Option<usize>)>, Expect);

fn query_cases() -> Vec<QueryCase> {
    let once = |f: Fault, n: usize| vec![(on_span(f), Some(n))];
    let always = |f: Fault| vec![(on_span(f), None)];
    vec![
        // Connection-level faults.
        (
            "reset before headers (once)",
            once(Fault::ResetBeforeHeaders, 1),
            Expect::Complete(&[]),
        ),
        (
            "reset before headers (always)",
            always(Fault::ResetBeforeHeaders),
            Expect::Error(&["rand.bam", "gave up after 6 attempts"]),
        ),
        (
            "reset mid-body (twice)",
            once(Fault::ResetMidBody { after: None }, 2),
            Expect::Complete(&[]),
        ),
        (
            // Every attempt brings half of what is left: each resumes where the last broke.
            "reset mid-body (every response, after half its bytes)",
            always(Fault::ResetMidBody { after: None }),
            Expect::Complete(&[]),
        ),
        (
            "short body (once)",
            once(Fault::ShortBody { after: None }, 1),
            Expect::Complete(&[]),
        ),
        // Responses that do not answer the request.
        (
            "wrong Content-Range start",
            always(Fault::ShiftedRange { shift: 100 }),
            Expect::Error(&["rand.bam", "does not start at the requested byte 101138"]),
        ),
        (
            "size change between requests",
            always(Fault::WrongTotal { total: SIZE + 5000 }),
            Expect::Error(&["rand.bam", "size changed from 389340 to 394340"]),
        ),
        (
            "200 instead of 206 at byte 0",
            vec![(
                Fault::OnRange {
                    start: 0,
                    fault: Box::new(Fault::IgnoreRange),
                },
                None,
            )],
            Expect::Complete(&[]),
        ),
        (
            "200 instead of 206 above byte 0 (one span)",
            always(Fault::IgnoreRange),
            Expect::Complete(&["ignores Range"]),
        ),
        (
            "200 instead of 206 everywhere (query)",
            vec![(Fault::IgnoreRange, None)],
            Expect::Complete(&["ignores Range"]),
        ),
        (
            "416 inside the size",
            always(Fault::RangeNotSatisfiable { total: None }),
            Expect::Error(&["rand.bam", "416", "inside the object"]),
        ),
        (
            "416 whose size contradicts the known one",
            always(Fault::RangeNotSatisfiable {
                total: Some(SIZE + 1),
            }),
            Expect::Error(&["rand.bam", "size changed"]),
        ),
        (
            "403 with an XML body",
            always(xml(403, "AccessDenied", "Access Denied")),
            Expect::Error(&["rand.bam", "403", "AccessDenied: Access Denied"]),
        ),
        (
            "404 with an XML body",
            vec![(
                xml(404, "NoSuchKey", "The specified key does not exist."),
                None,
            )],
            Expect::Error(&["rand.bam", "NoSuchKey"]),
        ),
        (
            "500 then 503 then success",
            vec![
                (on_span(Fault::status(500)), Some(1)),
                (on_span(Fault::status(503)), Some(1)),
            ],
            Expect::Complete(&[]),
        ),
        (
            "503 always",
            always(Fault::status(503)),
            Expect::Error(&["rand.bam", "503", "gave up after 6 attempts"]),
        ),
    ]
}

/// The five-region query against the raw server with this fault on rand.bam.
fn raw_cases() -> Vec<(&'static str, RawFault, Expect)> {
    vec![
        (
            "chunked encoding",
            RawFault::Chunked { chunk: 1000 },
            Expect::Complete(&[]),
        ),
        (
            "chunked body closed before its last chunk",
            RawFault::ChunkedNoLastChunk { chunk: 4096 },
            Expect::Complete(&[]),
        ),
        (
            "Content-Encoding gzip",
            RawFault::GzipEncoded,
            Expect::Error(&["rand.bam", "Content-Encoding gzip"]),
        ),
        (
            "huge Content-Length (all asked bytes sent)",
            RawFault::LongContentLength { extra: 1 << 40 },
            Expect::Complete(&[]),
        ),
        (
            "endless headers",
            RawFault::EndlessHeaders,
            Expect::Error(&["rand.bam", "headers"]),
        ),
    ]
}

/// Cases that wait out a default time limit (30 s), each on its own thread beside the others.
fn slow_cases() -> Vec<std::thread::JoinHandle<(&'static str, Expect, Run)>> {
    let one = |fault: &'static str, rule: Fault| {
        std::thread::spawn(move || {
            let s = server(&[(on_span(rule), Some(1))]);
            let r = run(&query(&s.base(), "rand.bam"), &[]);
            (fault, Expect::Complete(&[]), r)
        })
    };
    vec![
        one("stall (once), no --timeout", Fault::Stall { after: None }),
        one(
            "trickle at 2 bytes/s (once), no --timeout",
            Fault::Trickle { bytes_per_sec: 2 },
        ),
    ]
}

#[test]
fn fault_matrix() {
    let slow = slow_cases();
    let q_local = local_query();
    let w_local = local(&["DATA/rand.bam"]);
    let mut cases: Vec<Case> = Vec::new();
    let mut add = |fault: &'static str, expect: Expect, run: Run, local: &Vec<u8>| {
        cases.push(Case {
            fault,
            expect,
            run,
            local: local.clone(),
        });
    };
    let no_env: &[(&str, &str)] = &[];
    // Checks beyond a case's outcome, reported with the table.
    let mut also: Vec<String> = Vec::new();

    // Connection-level faults.
    {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = free.local_addr().unwrap().port();
        drop(free);
        let base = format!("http://127.0.0.1:{port}");
        add(
            "connection refused",
            Expect::Error(&["rand.bam", "onnect"]),
            run(&query(&base, "rand.bam"), no_env),
            &q_local,
        );
    }
    for (fault, rules, expect) in query_cases() {
        let s = server(&rules);
        add(
            fault,
            expect,
            run(&query(&s.base(), "rand.bam"), no_env),
            &q_local,
        );
    }
    // The time limit of the whole query, from the environment and from the option.
    let s = server(&[(on_span(Fault::Stall { after: None }), None)]);
    add(
        "stall (always), HTS_TIMEOUT=4",
        Expect::Error(&["rand.bam", "time limit of 4 s"]),
        run(&query(&s.base(), "rand.bam"), &[("HTS_TIMEOUT", "4")]),
        &q_local,
    );
    let s = server(&[(on_span(Fault::Trickle { bytes_per_sec: 2 }), None)]);
    let mut args = vec!["--timeout".to_string(), "4".to_string()];
    args.extend(query(&s.base(), "rand.bam"));
    add(
        "trickle at 2 bytes/s, --timeout 4",
        Expect::Error(&["rand.bam", "time limit of 4 s"]),
        run(&args, no_env),
        &q_local,
    );
    let s = server(&[(Fault::IgnoreRange, None)]);
    add(
        "200 instead of 206 everywhere (whole file)",
        Expect::Complete(&[]),
        run(&whole(&s.base()), no_env),
        &w_local,
    );
    let slow_down = Fault::Status {
        status: 429,
        body: "<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>"
            .into(),
        headers: vec![("retry-after".into(), "1".into())],
    };
    let s = server(&[(on_span(slow_down), Some(2))]);
    let r = run(&query(&s.base(), "rand.bam"), no_env);
    if r.took < Duration::from_secs(2) {
        also.push(format!("Retry-After was not waited for: {:?}", r.took));
    }
    add(
        "429 with Retry-After: 1 (twice)",
        Expect::Complete(&[]),
        r,
        &q_local,
    );

    // Redirects.
    let other = Server::start(&testkit::corpus_dir()).unwrap();
    let elsewhere = format!("http://localhost:{}/data/rand.bam", other.addr().port());
    let s = server(&[(
        Fault::Redirect {
            location: elsewhere,
        },
        None,
    )]);
    let mut args = vec![
        "--header".to_string(),
        "Authorization: Bearer s3cr3t".to_string(),
    ];
    args.extend(query(&s.base(), "rand.bam"));
    add(
        "redirect to another host",
        Expect::Complete(&[]),
        run(&args, no_env),
        &q_local,
    );
    let leaked = other
        .log()
        .iter()
        .any(|e| e.header("authorization").is_some());
    if leaked {
        also.push("the Authorization header followed the redirect to another host".into());
    }
    if other.log().is_empty() {
        also.push("the redirect was not followed".into());
    }
    let s = server(&[(
        Fault::Redirect {
            location: "/data/rand.bam".into(),
        },
        None,
    )]);
    add(
        "redirect loop",
        Expect::Error(&["rand.bam", "redirect"]),
        run(&query(&s.base(), "rand.bam"), no_env),
        &q_local,
    );

    // Protocol faults from the raw server.
    let corpus = testkit::corpus_dir();
    let raw = |fault: RawFault, times: Option<usize>| {
        let r = RawServer::start(&corpus).unwrap();
        r.add_rule("/data/rand.bam", fault, times);
        r
    };
    for (fault, raw_fault, expect) in raw_cases() {
        let r = raw(raw_fault, None);
        add(
            fault,
            expect,
            run(&query(&r.base(), "rand.bam"), no_env),
            &q_local,
        );
    }
    // A size never told (`bytes A-B/*`, HEAD refused): the 416 to the first request at or past
    // the end is the end of the object, not an error.
    let r = raw(RawFault::UnknownTotal, None);
    let past_end = run(&whole(&r.base()), no_env);
    let saw_416 = r.log().iter().any(|e| {
        e.range
            .as_deref()
            .and_then(|v| v.strip_prefix("bytes="))
            .and_then(|v| v.split('-').next())
            .and_then(|a| a.parse::<u64>().ok())
            .is_some_and(|a| a >= SIZE)
    });
    if !saw_416 {
        also.push("416 past the size: no request reached the end of the object".into());
    }
    add(
        "416 past the size (size never told; whole file)",
        Expect::Complete(&[]),
        past_end,
        &w_local,
    );
    let r = raw(RawFault::UnknownTotal, None);
    r.add_rule("/data/rand.bam.bai", RawFault::UnknownTotal, None);
    add(
        "size never told (query: BAM and index)",
        Expect::Complete(&[]),
        run(&query(&r.base(), "rand.bam"), no_env),
        &q_local,
    );
    let r = raw(
        RawFault::LyingLength {
            claimed: SIZE + 1000,
        },
        None,
    );
    let run_lying = run(&whole(&r.base()), no_env);
    if run_lying.stderr.contains("EOF marker is absent") {
        also.push(format!(
            "a lying Content-Length gave a false EOF warning: {}",
            run_lying.stderr
        ));
    }
    add(
        "200 with a Content-Length larger than the object",
        Expect::Error(&["rand.bam", "at byte 389340", "partial file"]),
        run_lying,
        &w_local,
    );

    // Files on the server that do not fit.
    let dir = scratch_corpus("truncated");
    let bytes = std::fs::read(dir.join("data/rand.bam")).unwrap();
    std::fs::write(dir.join("data/rand.bam"), &bytes[..200_000]).unwrap();
    let s = Server::start(&dir).unwrap();
    add(
        "truncated BAM on the server (query)",
        Expect::Error(&["rand.bam", "past the end of the file (200000 bytes)"]),
        run(&query(&s.base(), "rand.bam"), no_env),
        &q_local,
    );
    add(
        "truncated BAM on the server (whole file)",
        Expect::Error(&[
            "rand.bam",
            "EOF marker is absent",
            "truncated block at offset",
        ]),
        run(&whole(&s.base()), no_env),
        &w_local,
    );
    // An index chunk at compressed offset 2^47 (an error locally; it was exit 0 over HTTP).
    let dir = scratch_corpus("far-chunk");
    std::fs::write(dir.join("data/rand.bam.bai"), far_chunk_bai()).unwrap();
    let s = Server::start(&dir).unwrap();
    add(
        "index chunk at compressed offset 2^47",
        Expect::Error(&["rand.bam", "virtual offset 140737488355328:0, past the end"]),
        run(&query(&s.base(), "rand.bam"), no_env),
        &q_local,
    );
    let _ = std::fs::remove_dir_all(&dir);
    let dir = scratch_corpus("newer-index");
    // The index of a rewritten BAM (other block boundaries) beside the old BAM.
    let newer = dir.join("data/newer.bam");
    let made = testkit::command(hts())
        .args(["view", "-b", "--no-PG", "-1", "--write-index", "-o"])
        .arg(&newer)
        .arg(dir.join("data/rand.bam"))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::rename(
        dir.join("data/newer.bam.csi"),
        dir.join("data/rand.bam.csi"),
    )
    .unwrap();
    std::fs::remove_file(dir.join("data/rand.bam.bai")).unwrap();
    let s = Server::start(&dir).unwrap();
    let mut args = vec![format!("{}/data/rand.bam", s.base())];
    args.extend(REGIONS.iter().map(|r| r.to_string()));
    add(
        "index newer than the BAM",
        Expect::Error(&["rand.bam", "at offset"]),
        run(&args, no_env),
        &q_local,
    );
    let _ = std::fs::remove_dir_all(
        dir.parent()
            .unwrap()
            .join(format!("hts-faults-{}-truncated", std::process::id())),
    );
    let _ = std::fs::remove_dir_all(&dir);

    for (fault, expect, r) in slow.into_iter().map(|t| t.join().unwrap()) {
        if r.took < Duration::from_secs(20) {
            also.push(format!(
                "{fault}: ended before the time limit: {:?}",
                r.took
            ));
        }
        add(fault, expect, r, &q_local);
    }

    println!("| fault | expected | observed |");
    println!("|---|---|---|");
    let mut failures = also;
    for c in &cases {
        let verdict = c.check();
        println!(
            "| {} | {} | {}{} |",
            c.fault,
            describe(&c.expect),
            c.observed().replace('|', "\\|"),
            match &verdict {
                Ok(()) => String::new(),
                Err(why) => format!(" **MISMATCH: {why}**"),
            }
        );
        if let Err(why) = verdict {
            failures.push(format!("{}: {why}\n{}", c.fault, c.run.stderr));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}
