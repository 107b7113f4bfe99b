//! One [`Client`] for many readers: its bound on requests in flight and its byte budget hold
//! over all of them, and a client of defaults reads as a reader without one does.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hfile::{Client, ClientOptions, Hints, OpenOptions};
use testkit::{Link, LogEntry, Server};

static SERIAL: Mutex<()> = Mutex::new(());

const SIZE: usize = 3 << 20;

fn object() -> Vec<u8> {
    (0..SIZE).map(|i| (i * 13 + i / 251) as u8).collect()
}

/// `n` names for one object, behind a link with 30 ms per response, so that requests overlap.
fn serve(tag: &str, n: usize) -> (Server, PathBuf) {
    let dir = std::env::temp_dir().join(format!("hfile-client-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("obj0.bin"), object()).unwrap();
    for i in 1..n {
        std::fs::hard_link(dir.join("obj0.bin"), dir.join(format!("obj{i}.bin"))).unwrap();
    }
    let link = Link {
        latency: Duration::from_millis(30),
        ..Link::default()
    };
    (Server::start_with(&dir, 0, link).unwrap(), dir)
}

/// The most requests the server was answering at once (from arrival to the response's head).
fn most_at_once(log: &[LogEntry]) -> usize {
    let mut edges: Vec<(Instant, i32)> = log
        .iter()
        .flat_map(|e| [(e.arrived, 1), (e.answered, -1)])
        .collect();
    edges.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    most as usize
}

/// Readers `0..n` at once, each advising three spans of its object and reading them; the
/// client's held bytes are sampled while they run.
fn read_all(server: &Server, client: &Client, n: usize) -> u64 {
    let want = object();
    let spans = [
        (0u64, 600_000u64),
        (1_000_000, 1_700_000),
        (2_500_000, 3_000_000),
    ];
    let most_held = Mutex::new(0u64);
    std::thread::scope(|s| {
        for i in 0..n {
            let (want, most_held) = (&want, &most_held);
            s.spawn(move || {
                let mut f = client.open(&server.url(&format!("obj{i}.bin"))).unwrap();
                let ranges: Vec<_> = spans.iter().map(|&(a, b)| a..b).collect();
                f.advise(&ranges);
                for &(a, b) in &spans {
                    f.seek(SeekFrom::Start(a)).unwrap();
                    let mut got = vec![0u8; (b - a) as usize];
                    f.read_exact(&mut got).unwrap();
                    assert!(got == want[a as usize..b as usize], "object {i} differs");
                    let mut m = most_held.lock().unwrap();
                    *m = (*m).max(client.held_bytes());
                }
            });
        }
    });
    let most = *most_held.lock().unwrap();
    most
}

#[test]
fn one_bound_and_one_budget_over_all_readers() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let n = 12;
    let (server, dir) = serve("bound", n);
    let part = 256 * 1024;
    let client = Client::new(ClientOptions {
        max_in_flight: 4,
        byte_budget: 2 << 20,
        transport: OpenOptions {
            part_size: part,
            ..OpenOptions::default()
        },
        ..ClientOptions::default()
    });
    let held = read_all(&server, &client, n);
    let log = server.log();
    let at_once = most_at_once(&log);
    eprintln!(
        "{} requests, at most {at_once} at once, at most {held} bytes held",
        log.len()
    );
    // The bound, and the probes (a few bytes each) that may go beside it.
    assert!(at_once <= 4 + 2, "{at_once} requests at once");
    // Each reader may always have one request on its way (none is starved); beyond that the
    // budget holds over all of them.
    assert!(
        held <= (2 << 20) + n as u64 * part,
        "{held} bytes held for a budget of {}",
        2 << 20
    );
    assert_eq!(client.held_bytes(), 0, "readers gone, nothing held");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn readers_without_a_client_each_have_their_own_budget() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (server, dir) = serve("default", 2);
    // A client of defaults reads the object as a reader without a client does, request for
    // request.
    let plain = {
        let mut f = hfile::open(&server.url("obj0.bin"), &OpenOptions::default()).unwrap();
        f.advise(std::slice::from_ref(&(0..SIZE as u64)));
        let mut got = Vec::new();
        f.read_to_end(&mut got).unwrap();
        assert!(got == object());
        server.settled_summary()
    };
    server.reset();
    let client = Client::default();
    assert_eq!(client.max_in_flight(), OpenOptions::default().fetchers);
    assert_eq!(client.byte_budget(), OpenOptions::default().fetch_budget);
    let mut f = client.open(&server.url("obj1.bin")).unwrap();
    f.advise(std::slice::from_ref(&(0..SIZE as u64)));
    let mut got = Vec::new();
    f.read_to_end(&mut got).unwrap();
    assert!(got == object());
    let shared = server.settled_summary();
    assert_eq!(plain.requests, shared.requests);
    assert_eq!(plain.advertised, shared.advertised);
    std::fs::remove_dir_all(&dir).ok();
}
