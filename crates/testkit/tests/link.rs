//! The emulated link's caps, measured from a client over loopback: one connection cannot go
//! faster than its own cap, and several connections together get several times one.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use testkit::{Link, Server};

const SIZE: usize = 400_000;

/// A folder with one file of `SIZE` bytes.
fn served() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("testkit-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("f"), vec![7u8; SIZE]).unwrap();
    dir
}

/// GETs all of `f` on a new connection and returns the body's length.
fn get(server: &Server) -> usize {
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(s, "GET /f HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let head = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    all.len() - head
}

/// Seconds for `n` GETs of the file at once, each on its own connection.
fn parallel(server: &Server, n: usize) -> f64 {
    let start = Instant::now();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n).map(|_| s.spawn(|| get(server))).collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), SIZE, "a whole body arrived");
        }
    });
    start.elapsed().as_secs_f64()
}

#[test]
fn each_connection_is_held_to_its_own_cap_and_several_add_up() {
    let dir = served();
    // 1 MB/s a connection, 10 MB/s in all: 400 kB take about 0.33 s on one connection (its
    // first 64 KiB are a burst), and four connections at once take about as long.
    let link = Link {
        per_connection: Some(1e6),
        bandwidth: Some(10e6),
        ..Link::default()
    };
    let server = Server::start_with(&dir, 0, link).unwrap();
    let one = parallel(&server, 1);
    assert!(
        (0.3..3.0).contains(&one),
        "one connection held to 1 MB/s: {one:.3} s for {SIZE} bytes"
    );
    let four = parallel(&server, 4);
    assert!(
        four < one * 2.0,
        "four connections each got their own cap: {four:.3} s against {one:.3} s for one"
    );
    assert!(
        four >= 0.3,
        "each of the four still held to its cap: {four:.3} s"
    );
}

#[test]
fn the_shared_cap_still_binds_connections_together() {
    let dir = served();
    // 10 MB/s a connection, 1 MB/s in all: four 400 kB bodies take about 1.5 s together.
    let link = Link {
        per_connection: Some(10e6),
        bandwidth: Some(1e6),
        ..Link::default()
    };
    let server = Server::start_with(&dir, 0, link).unwrap();
    let four = parallel(&server, 4);
    assert!(
        (1.3..8.0).contains(&four),
        "1.6 MB through a 1 MB/s link: {four:.3} s"
    );
}
