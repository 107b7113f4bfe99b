//! The HTTP backend against a real HTTP/1.1 server on 127.0.0.1 (axum + tower-http's `ServeDir`,
//! which implements Range and keep-alive itself), plus a fault handler for what real servers do
//! only on a bad day. The server logs every request's Range header and counts accepted
//! connections, so the assertions come from the server's own view.

mod common;

use std::time::{Duration, Instant};

use common::{fast_options, range, read_span, serial, Server, SIZE};
use hfile::{Backend, Error, HttpBackend, OpenOptions, RangeMode};
#[test]
fn registered_for_http_and_https() {
    let _g = serial();
    let s = Server::start();
    let mut f = hfile::open(&s.url("/data/data.bin"), &OpenOptions::default()).unwrap();
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
    let mut b = HttpBackend::open(&s.url("/data/data.bin"), &fast_options()).unwrap();
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
    assert_eq!(s.ranges("/data/data.bin"), expected);
    assert_eq!(s.connections(), 1);
    let stats = b.stats();
    assert_eq!(stats.requests, 5);
    assert_eq!(stats.new_connections, 1);
    assert_eq!(stats.reused_connections, 4);
    assert_eq!(stats.unbounded_requests, 0);
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
    let mut f = hfile::open(&s.url("/data/data.bin"), &options).unwrap();
    let all = f.read_to_end_vec().unwrap();
    assert!(all == *s.data, "whole object differs");
    let mib = 1024 * 1024u64;
    let size = SIZE as u64;
    assert_eq!(
        s.ranges("/data/data.bin"),
        vec![
            range(0, mib - 1),
            range(mib, 2 * mib - 1),
            range(2 * mib, 3 * mib - 1),
            range(3 * mib, size - 1),
        ]
    );
    assert_eq!(s.connections(), 1);
}

#[test]
fn window_serves_forward_seeks_and_past_the_limit_costs_a_small_request() {
    let _g = serial();
    let s = Server::start();
    let mut b = HttpBackend::open(&s.url("/data/data.bin"), &fast_options()).unwrap();
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
        s.ranges("/data/data.bin"),
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
    let mut b = HttpBackend::open(&s.url("/data/data.bin"), &fast_options()).unwrap();
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
    let mut c = HttpBackend::open(&s.url("/data/data.bin"), &fast_options()).unwrap();
    read_span(&mut c, 5, 6).unwrap();
    assert_eq!(c.size().unwrap(), SIZE as u64);
    assert_eq!(s.log().len(), 3);
}

#[test]
fn size_falls_back_to_a_one_byte_get_when_head_is_refused() {
    let _g = serial();
    let s = Server::start();
    // The fault handler refuses HEAD like a URL signed for GET only would (no Range: 400).
    let mut b = HttpBackend::open(&s.url("/fault/plain"), &fast_options()).unwrap();
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
    let mut b = HttpBackend::open(&s.url("/data/data.bin"), &fast_options()).unwrap();
    b.seek(SIZE as u64 + 10).unwrap();
    assert_eq!(b.read(&mut [0u8; 10]).unwrap(), 0);
    assert_eq!(b.size().unwrap(), SIZE as u64);
    // Once the size is known, no request at all.
    assert_eq!(b.read(&mut [0u8; 10]).unwrap(), 0);
    assert_eq!(s.log().len(), 1);
    // A request running past the end is clamped by the server, and accepted.
    let mut c = HttpBackend::open(&s.url("/data/data.bin"), &fast_options()).unwrap();
    let start = SIZE as u64 - 100;
    assert_eq!(
        read_span(&mut c, start, SIZE as u64 + 1000).unwrap(),
        &s.data[SIZE - 100..]
    );
    // An empty object.
    let mut e = HttpBackend::open(&s.url("/data/empty.bin"), &fast_options()).unwrap();
    assert_eq!(e.read(&mut [0u8; 10]).unwrap(), 0);
    assert_eq!(e.size().unwrap(), 0);
}

#[test]
fn missing_object_is_not_found() {
    let _g = serial();
    let s = Server::start();
    let mut b = HttpBackend::open(&s.url("/data/nope.bin"), &fast_options()).unwrap();
    let e = b.read(&mut [0u8; 10]).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert!(matches!(e, Error::Status { status: 404, .. }), "{e}");
    assert!(e.to_string().contains("/data/nope.bin"), "{e}");
    assert_eq!(s.log().len(), 1, "a 404 is not retried");
    let e = HttpBackend::open(&s.url("/fault/403"), &fast_options())
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
    let mut b = HttpBackend::open(&s.url(&format!("/data/data.bin?{query}")), &options).unwrap();
    assert_eq!(read_span(&mut b, 7, 77).unwrap(), &s.data[7..77]);
    let log = s.log();
    assert_eq!(log[0].query.as_deref(), Some(query));
    assert_eq!(log[0].x_test.as_deref(), Some("yes"));

    let mut r = HttpBackend::open(&s.url("/fault/redirect"), &options).unwrap();
    assert_eq!(read_span(&mut r, 1000, 2000).unwrap(), &s.data[1000..2000]);
    let log = s.log();
    let last = &log[log.len() - 1];
    assert_eq!(last.path, "/data/data.bin");
    assert_eq!(last.range, range(1000, 1999));
}

#[test]
fn redirect_loop_fails_after_a_bounded_number_of_requests() {
    let _g = serial();
    let s = Server::start();
    let mut options = fast_options();
    options.max_redirects = 3;
    let mut b = HttpBackend::open(&s.url("/fault/loop"), &options).unwrap();
    let e = b.read(&mut [0u8; 10]).unwrap_err();
    assert!(e.to_string().contains("/fault/loop"), "{e}");
    assert_eq!(s.ranges("/fault/loop").len(), 4);
}

fn fault_read(kind: &str, start: u64, limit: u64) -> (Server, hfile::Result<Vec<u8>>, Duration) {
    let s = Server::start();
    let t = Instant::now();
    let mut b = HttpBackend::open(&s.url(&format!("/fault/{kind}")), &fast_options()).unwrap();
    let r = read_span(&mut b, start, limit);
    (s, r, t.elapsed())
}

#[test]
fn reset_mid_body_resumes_where_it_broke() {
    let _g = serial();
    let (s, r, _) = fault_read("reset_once", 1000, 1_001_000);
    assert!(
        r.unwrap() == s.data[1000..1_001_000],
        "resumed bytes differ"
    );
    let ranges = s.ranges("/fault/reset_once");
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    assert_eq!(ranges[0], range(1000, 1_000_999));
    assert_eq!(ranges[1], range(1000 + 500_000, 1_000_999));
}

#[test]
fn persistent_resets_fail_with_url_and_offset() {
    let _g = serial();
    let (s, r, _) = fault_read("reset_always", 0, 100_000);
    let e = r.unwrap_err();
    assert!(matches!(e, Error::Remote { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("/fault/reset_always"), "{text}");
    assert!(text.contains("at byte"), "{text}");
    assert!(text.contains("gave up after 4 attempts"), "{text}");
    assert_eq!(s.ranges("/fault/reset_always").len(), 4);
}

#[test]
fn stall_is_cut_by_the_low_speed_timeout_then_resumed() {
    let _g = serial();
    let (s, r, elapsed) = fault_read("stall_once", 0, 200_000);
    assert!(r.unwrap() == s.data[..200_000]);
    assert!(elapsed < Duration::from_secs(8), "{elapsed:?}");
    assert_eq!(s.ranges("/fault/stall_once").len(), 2);
}

#[test]
fn short_body_is_resumed() {
    let _g = serial();
    let (s, r, _) = fault_read("short_once", 10, 300_010);
    assert!(r.unwrap() == s.data[10..300_010]);
    let ranges = s.ranges("/fault/short_once");
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    assert_eq!(ranges[1], range(10 + 150_000, 300_009));
}

#[test]
fn throttling_and_unavailability_are_retried() {
    let _g = serial();
    let (s, r, _) = fault_read("503_twice", 100, 200);
    assert_eq!(r.unwrap(), &s.data[100..200]);
    assert_eq!(s.ranges("/fault/503_twice"), vec![range(100, 199); 3]);
    let (s, r, _) = fault_read("429_once", 100, 200);
    assert_eq!(r.unwrap(), &s.data[100..200]);
    assert_eq!(s.ranges("/fault/429_once").len(), 2);
    let (s, r, elapsed) = fault_read("503_always", 100, 200);
    let e = r.unwrap_err();
    assert!(e.to_string().contains("503"), "{e}");
    assert!(e.to_string().contains("byte 100"), "{e}");
    assert_eq!(s.ranges("/fault/503_always").len(), 4);
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[test]
fn mismatched_ranges_are_protocol_errors() {
    let _g = serial();
    for kind in ["bad_range", "wide_range"] {
        let (s, r, _) = fault_read(kind, 1000, 2000);
        let e = r.unwrap_err();
        assert!(
            matches!(e, Error::Protocol { offset: 1000, .. }),
            "{kind}: {e}"
        );
        assert!(e.to_string().contains(kind), "{e}");
        assert_eq!(s.ranges(&format!("/fault/{kind}")).len(), 1, "{kind}");
    }
}

#[test]
fn ignored_range_is_an_error_except_at_offset_zero() {
    let _g = serial();
    let (_s, r, _) = fault_read("ignore_range", 1000, 2000);
    let e = r.unwrap_err();
    assert!(e.to_string().contains("ignored the Range"), "{e}");
    let s = Server::start();
    let mut b = HttpBackend::open(&s.url("/fault/ignore_range"), &fast_options()).unwrap();
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
    let mut b = HttpBackend::open(&s.url("/data/data.bin"), &options).unwrap();
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
    assert_eq!(s.ranges("/data/data.bin"), expected);
    assert_eq!(s.connections(), 3);
    let stats = b.stats();
    assert_eq!(stats.unbounded_requests, 3);
    assert_eq!(stats.new_connections, 3);
    assert_eq!(stats.reused_connections, 0);
    // Each open-ended transfer was abandoned early, not read to the end of the object.
    assert!(stats.bytes_received < SIZE as u64 / 2, "{stats:?}");
    // Near the end, with the size not yet known: the body ends before the capture is full.
    let mut c = HttpBackend::open(&s.url("/data/data.bin"), &options).unwrap();
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
    let s = Server::start();
    let mut options = fast_options();
    options.retries = 1000;
    options.retry_backoff = Duration::from_millis(50);
    options.retry_max_time = Duration::from_millis(400);
    let t = Instant::now();
    let mut b = HttpBackend::open(&s.url("/fault/503_always"), &options).unwrap();
    let e = b.read(&mut [0u8; 10]).unwrap_err();
    assert!(e.to_string().contains("gave up"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    // 50 + 100 + 200 ms of backoff fit in 400 ms; the next 400 ms would not.
    assert_eq!(s.ranges("/fault/503_always").len(), 4);
}
