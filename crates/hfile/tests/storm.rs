//! The storm: many objects read at once by one process through one [`Client`], from a server
//! that refuses requests above a rate (`503 SlowDown`, or `429` with `Retry-After`), as an
//! object store does. Every read completes and is right, the rate settles near the limit, and
//! the refusals stay few: the whole client slows down, not just the refused request.

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hfile::{Client, ClientOptions, OpenOptions};
use testkit::{LogEntry, RateLimit, Refusal, Server};

/// One storm at a time: they share the process's connections.
static SERIAL: Mutex<()> = Mutex::new(());

const OBJECT: usize = 40_000;

fn object() -> Vec<u8> {
    (0..OBJECT).map(|i| (i * 31 + i / 97) as u8).collect()
}

/// `n` names for the same bytes, served.
fn serve(tag: &str, n: usize) -> (Server, PathBuf) {
    let dir = std::env::temp_dir().join(format!("hfile-storm-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("obj0.bin"), object()).unwrap();
    for i in 1..n {
        std::fs::hard_link(dir.join("obj0.bin"), dir.join(format!("obj{i}.bin"))).unwrap();
    }
    (Server::start(&dir).unwrap(), dir)
}

/// Reads objects `0..n` with `threads` readers at once, each object whole and checked; the
/// time it took.
fn storm(server: &Server, client: &Client, n: usize, threads: usize) -> Duration {
    let next = AtomicUsize::new(0);
    let want = object();
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let url = server.url(&format!("obj{i}.bin"));
                let mut f = client.open(&url).unwrap();
                let mut got = Vec::new();
                f.read_to_end(&mut got)
                    .unwrap_or_else(|e| panic!("object {i}: {e}"));
                assert!(got == want, "object {i} differs");
                assert!(
                    started.elapsed() < Duration::from_secs(120),
                    "storm too long"
                );
            });
        }
    });
    started.elapsed()
}

fn client() -> Client {
    Client::new(ClientOptions {
        max_in_flight: 16,
        transport: OpenOptions {
            // A read of a whole object asks for it in one request.
            request_size: OBJECT as u64,
            ..OpenOptions::default()
        },
        ..ClientOptions::default()
    })
}

/// Answered requests per second over the busy part of the run: from the first request to the
/// last.
fn rate(entries: &[&LogEntry]) -> f64 {
    let first = entries.iter().map(|e| e.arrived).min().unwrap();
    let last = entries.iter().map(|e| e.arrived).max().unwrap();
    entries.len() as f64 / (last - first).as_secs_f64()
}

#[test]
fn slow_down_paces_the_whole_client_near_the_limit() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let n = 200;
    let (server, dir) = serve("503", n);
    let limit = RateLimit::slow_down(50.0);
    // The client alone, unlimited, for scale: many times the limit.
    let c = client();
    let fast = storm(&server, &c, 40, 16);
    let unlimited = 40.0 / fast.as_secs_f64();
    server.reset();
    server.set_rate_limit(Some(limit.clone()));
    let took = storm(&server, &c, n, 32);
    let log = server.log();
    let served: Vec<&LogEntry> = log.iter().filter(|e| e.fault.is_none()).collect();
    let refused = log.iter().filter(|e| e.status == 503).count();
    let got = rate(&served);
    eprintln!(
        "unlimited {unlimited:.0}/s; limited to {}/s: {n} objects in {took:?}, {} served \
         ({got:.1}/s), {refused} refused, {} throttles seen by the client",
        limit.per_second,
        served.len(),
        hfile::throttled()
    );
    assert!(
        unlimited > 3.0 * limit.per_second,
        "the client is not fast enough to test"
    );
    // Nothing lost (every read was checked) and nothing asked twice that was served.
    assert_eq!(served.len(), n, "{} served for {n} objects", served.len());
    // The rate settles near the limit: not above it (the server refuses that), and not far
    // below it (the client recovers after each cut).
    assert!(got <= limit.per_second * 1.25, "{got:.1}/s");
    assert!(got >= limit.per_second * 0.6, "{got:.1}/s: too slow");
    assert!(took >= testkit::least_time(&limit, n) - Duration::from_millis(200));
    // The whole client slowed down: a client that only retried the refused request would
    // meet a refusal for nearly every request it sent above the rate.
    assert!(refused * 2 <= n, "{refused} refusals for {n} objects");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn too_many_requests_with_retry_after_holds_every_request() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let n = 120;
    let (server, dir) = serve("429", n);
    let limit = RateLimit {
        per_second: 100.0,
        burst: 50.0,
        refusal: Refusal::TooManyRequests { retry_after: 1 },
    };
    server.set_rate_limit(Some(limit));
    let c = client();
    let took = storm(&server, &c, n, 16);
    let log = server.log();
    let served = log.iter().filter(|e| e.fault.is_none()).count();
    let refusals: Vec<&LogEntry> = log.iter().filter(|e| e.status == 429).collect();
    eprintln!(
        "{n} objects in {took:?}, {served} served, {} refused",
        refusals.len()
    );
    assert_eq!(served, n);
    assert!(!refusals.is_empty(), "the limit was never reached");
    // After each refusal, no request is sent for the second it asked (those already on their
    // way when it was answered arrive within moments; 200 ms allows for a busy machine).
    for r in &refusals {
        let quiet = log.iter().filter(|e| {
            e.arrived > r.answered + Duration::from_millis(200)
                && e.arrived < r.answered + Duration::from_millis(900)
        });
        assert_eq!(quiet.count(), 0, "requests sent during a Retry-After");
    }
    assert!(took < Duration::from_secs(30), "{took:?}");
    std::fs::remove_dir_all(&dir).ok();
}
