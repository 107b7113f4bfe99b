//! The fault matrix (issue 9): `hts view` over HTTP against the project's test server with one
//! misbehaviour injected at a time, each with the result a demanding user expects (the complete
//! output, identical to the local query, or one clear error naming the URL, with nothing passed
//! off as complete), asserted. Faults hyper cannot produce come from `testkit::RawServer`.
//!
//! The table of fault | expected | observed is printed (`--nocapture` shows it). The faults
//! listed as tables are in `fault_matrix/faults.rs`, how a case is run and judged in
//! `fault_matrix/case.rs`; this file runs them all, with the cases that need more than a rule.

#[path = "fault_matrix/case.rs"]
mod case;
#[path = "fault_matrix/faults.rs"]
mod faults;

use std::time::Duration;

use testkit::{hts, Fault, RawFault, RawServer, Server};

use case::{describe, local, run, Case, Expect, Run};
use faults::{
    far_chunk_bai, local_query, on_span, query, query_cases, raw_cases, scratch_corpus, server,
    slow_cases, whole,
};

const REGIONS: [&str; 5] = testkit::FIVE_REGIONS;
/// Starts of the spans the five regions read in rand.bam (tests/remote.rs, NEEDED).
const SECOND_SPAN: u64 = 101_138;
const SIZE: u64 = 389_340;

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
