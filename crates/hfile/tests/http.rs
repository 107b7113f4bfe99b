//! The HTTP backend against the project's test server (tower-http's `ServeDir` on 127.0.0.1,
//! which implements Range and keep-alive itself), with faults from `testkit` for what real
//! servers do only on a bad day. The server logs every request, so the assertions come from the
//! server's own view.
//!
//! Longer than most files: one test file for the HTTP backend's behaviour, sharing its server
//! set-up; the fault matrix of whole queries is in `crates/cli/tests/fault_matrix.rs`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hfile::{Backend, Error, Hints, HttpBackend, OpenOptions, RangeMode};
// The tests take turns (`serial`): global transfer statistics are process-wide.
use testkit::{serial, Fault, Rule};

const SIZE: usize = 3 * 1024 * 1024 + 12345;

fn pattern(len: usize) -> Vec<u8> {
    // Not periodic on any power of two, so a misplaced window shows.
    (0..len as u64)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

/// The test server on a folder holding `data.bin` (SIZE bytes of a pattern) and `empty.bin`.
struct Server {
    inner: testkit::Server,
    data: Vec<u8>,
    dir: PathBuf,
}

impl Server {
    fn start() -> Server {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hfile-http-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let data = pattern(SIZE);
        std::fs::write(dir.join("data.bin"), &data).unwrap();
        std::fs::write(dir.join("empty.bin"), b"").unwrap();
        let inner = testkit::Server::start(&dir).unwrap();
        Server { inner, data, dir }
    }

    /// A server whose `/data.bin` has `fault` for the first `times` requests (`None`: all).
    fn with_fault(fault: Fault, times: Option<usize>) -> Server {
        let s = Server::start();
        s.inner.add_rule(Rule {
            path: "/data.bin".into(),
            fault,
            times,
        });
        s
    }

    fn url(&self, path: &str) -> String {
        self.inner.url(path)
    }

    fn log(&self) -> Vec<testkit::LogEntry> {
        self.inner.log()
    }

    fn ranges(&self, path: &str) -> Vec<Option<String>> {
        self.inner.ranges(path)
    }

    fn connections(&self) -> u64 {
        self.inner.connections()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn fast_options() -> OpenOptions {
    OpenOptions {
        retries: 3,
        retry_backoff: Duration::from_millis(10),
        retry_max_time: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(2),
        low_speed_time: Duration::from_secs(1),
        low_speed_limit: 1,
        verbosity: 1,
        ..OpenOptions::default()
    }
}

/// Reads `[start, limit)` with the limit set as BGZF would set it.
fn read_span(b: &mut dyn Backend, start: u64, limit: u64) -> hfile::Result<Vec<u8>> {
    b.seek(start)?;
    b.set_readahead_limit(Some(limit));
    let mut out = vec![0u8; (limit - start) as usize];
    let mut done = 0;
    while done < out.len() {
        let n = b.read(&mut out[done..])?;
        if n == 0 {
            break;
        }
        done += n;
    }
    out.truncate(done);
    Ok(out)
}

fn range(a: u64, b: u64) -> Option<String> {
    Some(format!("bytes={a}-{b}"))
}

#[test]
fn registered_for_http_and_https() {
    let _g = serial();
    let s = Server::start();
    let mut f = hfile::open(&s.url("/data.bin"), &OpenOptions::default()).unwrap();
    assert_eq!(f.size().unwrap(), SIZE as u64);
    // https is registered too: an unreachable port gives a transfer error, not "no backend".
    let mut options = fast_options();
    options.retries = 0;
    let mut g = hfile::open("https://127.0.0.1:1/x.bam", &options).unwrap();
    let e = g.read_full(&mut [0u8; 10]).unwrap_err();
    assert!(matches!(e, Error::Remote { .. }), "{e}");
    assert!(e.to_string().contains("https://127.0.0.1:1/x.bam"), "{e}");
}

#[test]
fn seeks_send_bounded_ranges_on_one_connection() {
    let _g = serial();
    let s = Server::start();
    hfile::reset_transfer_stats();
    let mut b = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    let spans = [
        (0u64, 1000u64),
        (500_000, 700_000),
        (2_000_000, 2_000_001),
        (100, 200),
        (SIZE as u64 - 50, SIZE as u64),
    ];
    for (start, limit) in spans {
        let got = read_span(&mut b, start, limit).unwrap();
        assert_eq!(
            got,
            &s.data[start as usize..limit as usize],
            "{start}-{limit}"
        );
    }
    let expected: Vec<_> = spans.iter().map(|&(a, l)| range(a, l - 1)).collect();
    assert_eq!(s.ranges("/data.bin"), expected);
    assert_eq!(s.connections(), 1);
    let stats = b.stats();
    assert_eq!(stats.requests, 5);
    assert_eq!(stats.new_connections, 1);
    assert_eq!(stats.reused_connections, 4);
    assert_eq!(stats.unbounded_requests, 0);
    assert_eq!(stats.retries, 0);
    let wanted: u64 = spans.iter().map(|&(a, l)| l - a).sum();
    assert_eq!(stats.bytes_received, wanted);
    assert_eq!(hfile::transfer_stats(), stats);
    hfile::reset_transfer_stats();
    assert_eq!(hfile::transfer_stats().requests, 0);
}

#[test]
fn reads_without_a_limit_are_split_into_bounded_requests() {
    let _g = serial();
    let s = Server::start();
    let mut options = fast_options();
    options.request_size = 1024 * 1024;
    let mut f = hfile::open(&s.url("/data.bin"), &options).unwrap();
    let all = f.read_to_end_vec().unwrap();
    assert!(all == *s.data, "whole object differs");
    let mib = 1024 * 1024u64;
    let size = SIZE as u64;
    // Windows after the first are fetched ahead, on their own connections, so they may
    // finish in any order; each is asked for once.
    let mut ranges = s.ranges("/data.bin");
    ranges.sort_by_key(|r| bounds(r).0);
    assert_eq!(
        ranges,
        vec![
            range(0, mib - 1),
            range(mib, 2 * mib - 1),
            range(2 * mib, 3 * mib - 1),
            range(3 * mib, size - 1),
        ]
    );
    assert!(s.connections() <= 3, "{} connections", s.connections());
}

#[test]
fn window_serves_forward_seeks_and_past_the_limit_costs_a_small_request() {
    let _g = serial();
    let s = Server::start();
    let mut b = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    b.set_readahead_limit(Some(500_000));
    let mut buf = [0u8; 10];
    assert_eq!(b.read(&mut buf).unwrap(), 10);
    assert_eq!(&buf, &s.data[..10]);
    b.seek(300_000).unwrap();
    assert_eq!(b.read(&mut buf).unwrap(), 10);
    assert_eq!(&buf, &s.data[300_000..300_010]);
    // Backward inside the window: still no request.
    b.seek(20).unwrap();
    assert_eq!(b.read(&mut buf).unwrap(), 10);
    assert_eq!(&buf, &s.data[20..30]);
    // The limit is a hint: reading on past it works, with a small bounded request each time.
    b.seek(499_995).unwrap();
    let mut big = vec![0u8; 100_000];
    let mut done = 0;
    while done < big.len() {
        done += b.read(&mut big[done..]).unwrap();
    }
    assert_eq!(&big[..], &s.data[499_995..599_995]);
    assert_eq!(
        s.ranges("/data.bin"),
        vec![
            range(0, 499_999),
            range(500_000, 500_000 + 65_535),
            range(565_536, 565_536 + 131_071)
        ]
    );
    assert_eq!(s.connections(), 1);
}

#[test]
fn size_comes_from_head_or_content_range() {
    let _g = serial();
    let s = Server::start();
    let mut b = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    assert_eq!(b.size().unwrap(), SIZE as u64);
    let log = s.log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].method, "HEAD");
    assert_eq!(log[0].range, None);
    // A GET after the HEAD is a GET again, on the same connection.
    assert_eq!(read_span(&mut b, 10, 20).unwrap(), &s.data[10..20]);
    assert_eq!(s.log()[1].method, "GET");
    assert_eq!(s.connections(), 1);

    // Learned from Content-Range: no HEAD.
    let mut c = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    read_span(&mut c, 5, 6).unwrap();
    assert_eq!(c.size().unwrap(), SIZE as u64);
    assert_eq!(s.log().len(), 3);
}

#[test]
fn size_falls_back_to_a_one_byte_get_when_head_is_refused() {
    let _g = serial();
    // HEAD refused, as a URL signed for GET only would be.
    let s = Server::with_fault(Fault::RefuseHead, None);
    let mut b = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    assert_eq!(b.size().unwrap(), SIZE as u64);
    let log = s.log();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].method, "HEAD");
    assert_eq!(log[1].range, range(0, 0));
}

#[test]
fn end_of_object() {
    let _g = serial();
    let s = Server::start();
    // Past the end before the size is known: the server's 416 is the end, not an error.
    let mut b = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    b.seek(SIZE as u64 + 10).unwrap();
    assert_eq!(b.read(&mut [0u8; 10]).unwrap(), 0);
    assert_eq!(b.size().unwrap(), SIZE as u64);
    // Once the size is known, no request at all.
    assert_eq!(b.read(&mut [0u8; 10]).unwrap(), 0);
    assert_eq!(s.log().len(), 1);
    // A request running past the end is clamped by the server, and accepted.
    let mut c = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    let start = SIZE as u64 - 100;
    assert_eq!(
        read_span(&mut c, start, SIZE as u64 + 1000).unwrap(),
        &s.data[SIZE - 100..]
    );
    // An empty object.
    let mut e = HttpBackend::open(&s.url("/empty.bin"), &fast_options()).unwrap();
    assert_eq!(e.read(&mut [0u8; 10]).unwrap(), 0);
    assert_eq!(e.size().unwrap(), 0);
}

#[test]
fn missing_object_is_not_found() {
    let _g = serial();
    let s = Server::start();
    let mut b = HttpBackend::open(&s.url("/nope.bin"), &fast_options()).unwrap();
    let e = b.read(&mut [0u8; 10]).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert!(matches!(e, Error::Status { status: 404, .. }), "{e}");
    assert!(e.to_string().contains("/nope.bin"), "{e}");
    assert_eq!(s.log().len(), 1, "a 404 is not retried");
    let s = Server::with_fault(Fault::status(403), None);
    let e = HttpBackend::open(&s.url("/data.bin"), &fast_options())
        .unwrap()
        .read(&mut [0u8; 1])
        .unwrap_err();
    assert!(matches!(e, Error::Status { status: 403, .. }), "{e}");
}

#[test]
fn headers_and_presigned_query_go_out_verbatim_and_redirects_are_followed() {
    let _g = serial();
    let s = Server::start();
    let query = "X-Amz-Signature=ab%2Fc%3D%3D&X-Amz-Date=20260101T000000Z&a=%20b";
    let mut options = fast_options();
    options.headers = vec![("X-Test".into(), "yes".into())];
    let mut b = HttpBackend::open(&s.url(&format!("/data.bin?{query}")), &options).unwrap();
    assert_eq!(read_span(&mut b, 7, 77).unwrap(), &s.data[7..77]);
    let log = s.log();
    assert_eq!(log[0].query.as_deref(), Some(query));
    assert_eq!(log[0].header("x-test"), Some("yes"));

    s.inner.add_rule(Rule {
        path: "/moved.bin".into(),
        fault: Fault::Redirect {
            location: "/data.bin".into(),
        },
        times: None,
    });
    let mut r = HttpBackend::open(&s.url("/moved.bin"), &options).unwrap();
    assert_eq!(read_span(&mut r, 1000, 2000).unwrap(), &s.data[1000..2000]);
    let log = s.log();
    let last = &log[log.len() - 1];
    assert_eq!(last.path, "/data.bin");
    assert_eq!(last.range, range(1000, 1999));
}

#[test]
fn redirect_loop_fails_after_a_bounded_number_of_requests() {
    let _g = serial();
    let s = Server::start();
    s.inner.add_rule(Rule {
        path: "/loop.bin".into(),
        fault: Fault::Redirect {
            location: "/loop.bin".into(),
        },
        times: None,
    });
    let mut options = fast_options();
    options.max_redirects = 3;
    let mut b = HttpBackend::open(&s.url("/loop.bin"), &options).unwrap();
    let e = b.read(&mut [0u8; 10]).unwrap_err();
    assert!(e.to_string().contains("/loop.bin"), "{e}");
    assert_eq!(s.ranges("/loop.bin").len(), 4);
}

/// Reads `[start, limit)` of `/data.bin` from a server with `fault` on its first `times`
/// requests.
fn fault_read(
    fault: Fault,
    times: Option<usize>,
    start: u64,
    limit: u64,
) -> (Server, hfile::Result<Vec<u8>>, Duration) {
    let s = Server::with_fault(fault, times);
    let t = Instant::now();
    let mut b = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    let r = read_span(&mut b, start, limit);
    (s, r, t.elapsed())
}

fn bounds(range: &Option<String>) -> (u64, u64) {
    let (a, b) = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.split_once('-'))
        .unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}

fn retry_after_zero(status: u16) -> Fault {
    Fault::Status {
        status,
        body: "no".into(),
        headers: vec![("retry-after".into(), "0".into())],
    }
}

#[test]
fn reset_mid_body_resumes_where_it_broke() {
    let _g = serial();
    let (s, r, _) = fault_read(
        Fault::ResetMidBody { after: None },
        Some(1),
        1000,
        1_001_000,
    );
    assert!(
        r.unwrap() == s.data[1000..1_001_000],
        "resumed bytes differ"
    );
    let ranges = s.ranges("/data.bin");
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    assert_eq!(ranges[0], range(1000, 1_000_999));
    // The retry asks only for what had not arrived: it starts where the break was.
    let (a, b) = bounds(&ranges[1]);
    assert!(a > 1000 && a <= 1000 + 500_000, "{ranges:?}");
    assert_eq!(b, 1_000_999);
}

#[test]
fn persistent_resets_fail_with_url_and_offset() {
    let _g = serial();
    let (s, r, _) = fault_read(Fault::ResetMidBody { after: None }, None, 0, 100_000);
    let e = r.unwrap_err();
    assert!(matches!(e, Error::Remote { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("/data.bin"), "{text}");
    assert!(text.contains("at byte"), "{text}");
    assert!(text.contains("gave up after 4 attempts"), "{text}");
    assert_eq!(s.ranges("/data.bin").len(), 4);
}

#[test]
fn stall_is_cut_by_the_low_speed_timeout_then_resumed() {
    let _g = serial();
    let (s, r, elapsed) = fault_read(Fault::Stall { after: None }, Some(1), 0, 200_000);
    assert!(r.unwrap() == s.data[..200_000]);
    assert!(elapsed < Duration::from_secs(8), "{elapsed:?}");
    assert_eq!(s.ranges("/data.bin").len(), 2);
}

#[test]
fn short_body_is_resumed() {
    let _g = serial();
    let (s, r, _) = fault_read(Fault::ShortBody { after: None }, Some(1), 10, 300_010);
    assert!(r.unwrap() == s.data[10..300_010]);
    let ranges = s.ranges("/data.bin");
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    let (a, b) = bounds(&ranges[1]);
    assert!(a > 10 && a <= 10 + 150_000, "{ranges:?}");
    assert_eq!(b, 300_009);
}

#[test]
fn throttling_and_unavailability_are_retried() {
    let _g = serial();
    hfile::reset_transfer_stats();
    let (s, r, _) = fault_read(retry_after_zero(503), Some(2), 100, 200);
    assert_eq!(r.unwrap(), &s.data[100..200]);
    assert_eq!(s.ranges("/data.bin"), vec![range(100, 199); 3]);
    let stats = hfile::settled_transfer_stats(Duration::from_secs(5));
    assert_eq!((stats.requests, stats.retries), (3, 2), "{stats:?}");
    let (s, r, _) = fault_read(retry_after_zero(429), Some(1), 100, 200);
    assert_eq!(r.unwrap(), &s.data[100..200]);
    assert_eq!(s.ranges("/data.bin").len(), 2);
    let (s, r, elapsed) = fault_read(retry_after_zero(503), None, 100, 200);
    let e = r.unwrap_err();
    assert!(e.to_string().contains("503"), "{e}");
    assert!(e.to_string().contains("byte 100"), "{e}");
    assert_eq!(s.ranges("/data.bin").len(), 4);
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[test]
fn mismatched_ranges_are_protocol_errors() {
    let _g = serial();
    for fault in [
        Fault::ShiftedRange { shift: 1 },
        Fault::WideRange { extra: 100 },
    ] {
        let (s, r, _) = fault_read(fault.clone(), None, 1000, 2000);
        let e = r.unwrap_err();
        assert!(
            matches!(e, Error::Protocol { offset: 1000, .. }),
            "{fault:?}: {e}"
        );
        assert!(e.to_string().contains("/data.bin"), "{e}");
        assert_eq!(s.ranges("/data.bin").len(), 1, "{fault:?}");
    }
}

#[test]
fn a_server_that_ignores_range_is_read_as_one_stream() {
    let _g = serial();
    let s = Server::with_fault(Fault::IgnoreRange, None);
    let mut b = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    assert_eq!(read_span(&mut b, 1000, 2000).unwrap(), &s.data[1000..2000]);
    // The ranged request showed it; the object then came as one stream, without Range.
    assert_eq!(s.ranges("/data.bin"), vec![range(1000, 1999), None]);
    // Forward: the same stream reads on.
    let far = SIZE as u64 - 5000;
    assert_eq!(
        read_span(&mut b, far, far + 100).unwrap(),
        &s.data[SIZE - 5000..SIZE - 4900]
    );
    assert_eq!(s.ranges("/data.bin").len(), 2);
    // Back before what the stream holds: read again from the start.
    assert_eq!(read_span(&mut b, 10, 20).unwrap(), &s.data[10..20]);
    assert_eq!(s.ranges("/data.bin"), vec![range(1000, 1999), None, None]);
    assert_eq!(b.size().unwrap(), SIZE as u64);
    // The last bytes alone cannot be had: a typed error, not data.
    let e = b.read_tail(28).unwrap_err();
    assert!(e.is_range_ignored(), "{e}");
    // At offset 0 a 200 is the answer itself, and only what was asked is kept.
    let s = Server::with_fault(Fault::IgnoreRange, None);
    let mut b = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    assert_eq!(read_span(&mut b, 0, 1000).unwrap(), &s.data[..1000]);
    assert_eq!(b.size().unwrap(), SIZE as u64);
    assert!(b.stats().bytes_received < SIZE as u64 / 2);
}

#[test]
fn unbounded_mode_reproduces_htslib() {
    let _g = serial();
    let s = Server::start();
    let mut options = fast_options();
    options.range_mode = RangeMode::Unbounded;
    let mut b = HttpBackend::open(&s.url("/data.bin"), &options).unwrap();
    let spans = [
        (0u64, 1000u64),
        (1_000_000, 1_050_000),
        (3_000_000, 3_000_100),
    ];
    for (start, limit) in spans {
        assert_eq!(
            read_span(&mut b, start, limit).unwrap(),
            &s.data[start as usize..limit as usize]
        );
    }
    let expected: Vec<_> = spans
        .iter()
        .map(|(a, _)| Some(format!("bytes={a}-")))
        .collect();
    assert_eq!(s.ranges("/data.bin"), expected);
    assert_eq!(s.connections(), 3);
    let stats = b.stats();
    assert_eq!(stats.unbounded_requests, 3);
    assert_eq!(stats.new_connections, 3);
    assert_eq!(stats.reused_connections, 0);
    // Each open-ended transfer was abandoned early, not read to the end of the object.
    assert!(stats.bytes_received < SIZE as u64 / 2, "{stats:?}");
    // Near the end, with the size not yet known: the body ends before the capture is full.
    let mut c = HttpBackend::open(&s.url("/data.bin"), &options).unwrap();
    let start = SIZE as u64 - 50;
    assert_eq!(
        read_span(&mut c, start, start + 1000).unwrap(),
        &s.data[SIZE - 50..]
    );
    assert_eq!(c.stats().requests, 1);
}

#[test]
fn retries_stop_at_the_time_limit() {
    let _g = serial();
    let s = Server::with_fault(retry_after_zero(503), None);
    let mut options = fast_options();
    options.retries = 1000;
    options.retry_backoff = Duration::from_millis(50);
    options.retry_max_time = Duration::from_millis(400);
    let t = Instant::now();
    let mut b = HttpBackend::open(&s.url("/data.bin"), &options).unwrap();
    let e = b.read(&mut [0u8; 10]).unwrap_err();
    assert!(e.to_string().contains("gave up"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    // 50 + 100 + 200 ms of backoff fit in 400 ms; the next 400 ms would not.
    assert_eq!(s.ranges("/data.bin").len(), 4);
}

#[test]
fn a_trickled_body_is_cut_by_the_request_deadline() {
    let _g = serial();
    // 2000 bytes/s keeps above the low-speed limit; 20000 bytes would take 10 s.
    let s = Server::with_fault(
        Fault::Trickle {
            bytes_per_sec: 2000,
        },
        None,
    );
    let mut options = fast_options();
    options.request_time = Duration::from_millis(500);
    options.min_rate = 10_000;
    options.retries = 1;
    let t = Instant::now();
    let mut b = HttpBackend::open(&s.url("/data.bin"), &options).unwrap();
    let e = read_span(&mut b, 0, 20_000).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("no complete answer within"), "{text}");
    assert!(text.contains("gave up after 2 attempts"), "{text}");
    // 0.5 s + 20000 bytes at 10 kB/s per attempt, twice, and a backoff.
    assert!(t.elapsed() < Duration::from_secs(7), "{:?}", t.elapsed());
    let ranges = s.ranges("/data.bin");
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    // The retry resumed after the bytes that had trickled in.
    assert!(bounds(&ranges[1]).0 > 0, "{ranges:?}");
}

#[test]
fn the_query_deadline_cuts_a_stall_and_stops_retries() {
    let _g = serial();
    let s = Server::with_fault(Fault::Stall { after: Some(10) }, None);
    let mut options = fast_options();
    options.low_speed_time = Duration::from_secs(30);
    options.deadline = Some(hfile::Deadline::after(Duration::from_millis(1500)));
    let t = Instant::now();
    let mut b = HttpBackend::open(&s.url("/data.bin"), &options).unwrap();
    let e = read_span(&mut b, 100, 1000).unwrap_err();
    assert!(
        e.to_string().contains("the time limit of 1.5 s ran out"),
        "{e}"
    );
    assert!(e.to_string().contains("at byte 110"), "{e}");
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_secs(3),
        "{took:?}"
    );
    // Past the deadline nothing more is sent.
    let sent = s.ranges("/data.bin").len();
    let mut again = HttpBackend::open(&s.url("/data.bin"), &options).unwrap();
    assert!(read_span(&mut again, 0, 10).is_err());
    assert_eq!(s.ranges("/data.bin").len(), sent);
}

#[test]
fn a_suffix_cut_short_is_asked_again_whole() {
    let _g = serial();
    for fault in [
        Fault::ShortBody { after: Some(14) },
        Fault::ResetMidBody { after: Some(10) },
    ] {
        let s = Server::with_fault(fault.clone(), Some(1));
        let mut b = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
        let tail = b.read_tail(28).unwrap();
        assert!(
            tail == s.data[SIZE - 28..],
            "{fault:?}: the tail is not the last 28 bytes"
        );
        assert_eq!(
            s.ranges("/data.bin"),
            vec![Some("bytes=-28".to_string()); 2]
        );
    }
}
