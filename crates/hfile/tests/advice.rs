//! Advice given again (a plan made from part of an index, then from all of it): requests on
//! their way for the same start are kept, whether the new advice asks for the same bytes, a
//! little less, or more (then only the rest is asked for), and reads get the right bytes.

mod common;

use std::ops::Range;
use std::time::{Duration, Instant};

use hfile::{Backend, Hints, HttpBackend, OpenOptions};
use testkit::Server;

const SIZE: usize = 400_000;

fn pattern() -> Vec<u8> {
    (0..SIZE as u64)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

/// Waits until the server has answered `n` requests.
fn answered(server: &Server, n: usize) {
    let start = Instant::now();
    while server.log().len() < n {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:#?}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn read(b: &mut HttpBackend, range: Range<u64>) -> Vec<u8> {
    b.seek(range.start).unwrap();
    b.set_readahead_limit(Some(range.end));
    let mut out = vec![0u8; (range.end - range.start) as usize];
    let mut done = 0;
    while done < out.len() {
        let n = b.read(&mut out[done..]).unwrap();
        assert!(n > 0, "end of object at {}", range.start + done as u64);
        done += n;
    }
    out
}

fn ranges(server: &Server) -> Vec<String> {
    let mut r: Vec<String> = server.log().into_iter().filter_map(|e| e.range).collect();
    r.sort();
    r
}

/// Advises `first`, waits for its answers, advises `again`, reads every range of `again` (each
/// must hold the object's bytes) and gives the ranges the server was asked for, sorted.
fn advised_twice(first: &[Range<u64>], again: &[Range<u64>]) -> Vec<String> {
    let (server, dir) = common::serve(&pattern());
    let data = pattern();
    let mut b = HttpBackend::open(&server.url("data.bin"), &OpenOptions::default()).unwrap();
    b.advise(first);
    answered(&server, first.len());
    b.advise(again);
    for r in again {
        let want = &data[r.start as usize..r.end as usize];
        assert!(read(&mut b, r.clone()) == want, "bytes of {r:?}");
    }
    let asked = ranges(&server);
    let _ = std::fs::remove_dir_all(&dir);
    asked
}

#[test]
fn advice_again_for_a_little_less_keeps_the_requests_on_their_way() {
    // The same second span; the first one 30 KB shorter (less than a block's worth).
    let asked = advised_twice(
        &[0..100_000, 200_000..300_000],
        &[0..70_000, 200_000..300_000],
    );
    assert_eq!(asked, ["bytes=0-99999", "bytes=200000-299999"]);
}

#[test]
fn advice_again_for_more_asks_only_for_the_rest() {
    let (first, again) = (0..100_000, 0..150_000);
    let asked = advised_twice(std::slice::from_ref(&first), std::slice::from_ref(&again));
    assert_eq!(asked, ["bytes=0-99999", "bytes=100000-149999"]);
}

#[test]
fn a_range_starting_inside_a_kept_request_asks_only_for_what_follows_it() {
    // The first span ends 40 KB earlier now, and the next one starts inside the request kept.
    let first = 0..100_000;
    let asked = advised_twice(std::slice::from_ref(&first), &[0..60_000, 80_000..200_000]);
    assert_eq!(asked, ["bytes=0-99999", "bytes=100000-199999"]);
}
