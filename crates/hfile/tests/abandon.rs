//! Turning away from a remote object: dropping a handle lets a request with little left finish
//! (its connection is kept for the next request), while `abandon` stops it at once, however
//! little is left (an index name that lost to another is never read), also while it waits to
//! retry.

mod common;

use std::time::{Duration, Instant};

use hfile::{Backend, Hints, HttpBackend, OpenOptions};
// The tests take turns (`serial`): the connection threads are shared by the process, and
// each test has one fetcher, so that a thread held by a request shows.
use testkit::{serial, Fault, Rule};

fn one_fetcher() -> OpenOptions {
    OpenOptions {
        fetchers: 1,
        ..OpenOptions::default()
    }
}

/// Less than the 256 KiB a dropped handle lets finish.
const SIZE: usize = 100_000;
/// The whole object takes 2 s to arrive.
const RATE: u64 = 50_000;

/// Starts a request for the whole object, waits for its headers and turns away from it with
/// `leave`; then the bytes the server wrote for it within 3 s.
fn written_after(leave: impl FnOnce(HttpBackend)) -> u64 {
    let (server, dir) = common::serve(&[7u8; SIZE]);
    server.add_rule(Rule {
        path: "/data.bin".into(),
        fault: Fault::Trickle {
            bytes_per_sec: RATE,
        },
        times: None,
    });
    let mut b = HttpBackend::open(&server.url("data.bin"), &one_fetcher()).unwrap();
    b.advise(std::slice::from_ref(&(0..SIZE as u64)));
    assert_eq!(b.size().unwrap(), SIZE as u64);
    leave(b);
    std::thread::sleep(Duration::from_secs(3));
    let written = server.bytes_written();
    let _ = std::fs::remove_dir_all(&dir);
    written
}

#[test]
fn an_abandoned_request_stops_and_a_dropped_one_with_little_left_finishes() {
    let _serial = serial();
    let dropped = written_after(drop);
    assert!(
        dropped >= SIZE as u64,
        "a dropped handle's request with less than 256 KiB left finishes: {dropped} bytes"
    );
    let abandoned = written_after(|mut b| b.abandon());
    assert!(
        abandoned < SIZE as u64 / 4,
        "{abandoned} bytes written after abandon (the whole object is {SIZE})"
    );
}

#[test]
fn an_abandoned_request_waiting_to_retry_gives_its_fetcher_back_at_once() {
    let _serial = serial();
    let (server, dir) = common::serve(&[7u8; SIZE]);
    // A 500, not a 503: a throttle (503 without a body) would rightly hold every request to
    // the server for its Retry-After, `b`'s too.
    server.add_rule(Rule {
        path: "/data.bin".into(),
        fault: Fault::Status {
            status: 500,
            body: String::new(),
            headers: vec![("Retry-After".into(), "4".into())],
        },
        times: Some(1),
    });
    let url = server.url("data.bin");
    let mut a = HttpBackend::open(&url, &one_fetcher()).unwrap();
    a.advise(std::slice::from_ref(&(0..SIZE as u64)));
    let asked = Instant::now();
    while !server.log().iter().any(|e| e.status == 500) {
        assert!(asked.elapsed() < Duration::from_secs(5), "no 500 served");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    a.abandon();
    // The only fetcher was waiting 4 s to retry for `a`: `b` gets it at once.
    let started = Instant::now();
    let mut b = HttpBackend::open(&url, &one_fetcher()).unwrap();
    b.set_readahead_limit(Some(SIZE as u64));
    let mut buf = [0u8; 1000];
    assert!(b.read(&mut buf).unwrap() > 0);
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_millis(2000),
        "waited {waited:?} for the fetcher"
    );
    let retried = server.log().iter().filter(|e| e.status == 206).count();
    assert_eq!(
        retried,
        1,
        "the abandoned request was retried: {:#?}",
        server.log()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
