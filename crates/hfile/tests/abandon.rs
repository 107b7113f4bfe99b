//! Turning away from a remote object: dropping a handle lets a request with little left finish
//! (its connection is kept for the next request), while `abandon` stops it at once, however
//! little is left (an index name that lost to another is never read).

use std::time::{Duration, Instant};

use hfile::{Backend, HttpBackend, OpenOptions};
use testkit::{Fault, Rule, Server};

/// Less than the 256 KiB a dropped handle lets finish.
const SIZE: usize = 100_000;
/// The whole object takes 2 s to arrive.
const RATE: u64 = 50_000;

/// Starts a request for the whole object, waits for its headers and turns away from it with
/// `leave`; then the bytes the server wrote for it within 3 s.
fn written_after(leave: impl FnOnce(HttpBackend)) -> u64 {
    let dir = std::env::temp_dir().join(format!(
        "hfile-abandon-{}-{:?}",
        std::process::id(),
        Instant::now()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("data.bin"), vec![7u8; SIZE]).unwrap();
    let server = Server::start(&dir).unwrap();
    server.add_rule(Rule {
        path: "/data.bin".into(),
        fault: Fault::Trickle {
            bytes_per_sec: RATE,
        },
        times: None,
    });
    let mut b = HttpBackend::open(&server.url("data.bin"), &OpenOptions::default()).unwrap();
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
