//! The HTTP backend against the project's test server (tower-http's `ServeDir` on 127.0.0.1,
//! which implements Range and keep-alive itself): ranges, sizes, the end of an object,
//! headers and redirects. The server logs every request, so the assertions come from the
//! server's own view. Faults and retries are in `http_faults.rs`; the fault matrix of whole
//! queries is in `crates/cli/tests/fault_matrix.rs`.

mod http_support;

use hfile::{Backend, Error, Hints, HttpBackend, OpenOptions};
// The tests take turns (`serial`): global transfer statistics are process-wide.
use testkit::{serial, Fault, Rule};

use http_support::*;

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
