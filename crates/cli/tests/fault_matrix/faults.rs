//! The faults of the matrix: the servers and files that misbehave, and the query each runs.

use std::path::PathBuf;

use testkit::{Fault, RawFault, Rule, Server};

use super::case::{local, run, Expect, Run};
use super::{REGIONS, SECOND_SPAN, SIZE};

/// The arguments of the five-region query (`-X BAM BAI REGIONS`) on `base`.
pub(super) fn query(base: &str, bam: &str) -> Vec<String> {
    let mut a = vec![
        "-X".to_string(),
        format!("{base}/data/{bam}"),
        format!("{base}/data/rand.bam.bai"),
    ];
    a.extend(REGIONS.iter().map(|s| s.to_string()));
    a
}

pub(super) fn local_query() -> Vec<u8> {
    let mut a = vec!["-X", "DATA/rand.bam", "DATA/rand.bam.bai"];
    a.extend(REGIONS);
    local(&a)
}

pub(super) fn whole(base: &str) -> Vec<String> {
    vec![format!("{base}/data/rand.bam")]
}

pub(super) fn on_span(fault: Fault) -> Fault {
    Fault::OnRange {
        start: SECOND_SPAN,
        fault: Box::new(fault),
    }
}

/// A server on the corpus with `rules` on rand.bam.
pub(super) fn server(rules: &[(Fault, Option<usize>)]) -> Server {
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

pub(super) fn xml(status: u16, code: &str, message: &str) -> Fault {
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
pub(super) fn scratch_corpus(name: &str) -> PathBuf {
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
pub(super) fn far_chunk_bai() -> Vec<u8> {
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
pub(super) type QueryCase = (&'static str, Vec<(Fault, Option<usize>)>, Expect);

pub(super) fn query_cases() -> Vec<QueryCase> {
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
pub(super) fn raw_cases() -> Vec<(&'static str, RawFault, Expect)> {
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
pub(super) fn slow_cases() -> Vec<std::thread::JoinHandle<(&'static str, Expect, Run)>> {
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
