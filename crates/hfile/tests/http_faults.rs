//! The HTTP backend on a bad day: resets, stalls, short bodies, throttling, mismatched or
//! ignored ranges, deadlines, each from `testkit`'s faults on the test server, whose log
//! gives the assertions (see `http.rs` for the well-behaved cases).

mod http_support;

use std::time::{Duration, Instant};

use hfile::{Backend, Error, HttpBackend, RangeMode};
// The tests take turns (`serial`): global transfer statistics are process-wide.
use testkit::{serial, Fault};

use http_support::*;

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
