//! The proxy on a paced link: a range's bytes arrive unchanged, and the proxy counts exactly
//! what it wrote to the client's socket, as the file server does on the same link (writes go out
//! vectored and cut to the link's allowance, so the count must follow the cut).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use testkit::{Link, Server};

const SIZE: usize = 1_000_000;

/// A folder with one file of `SIZE` bytes that differ from their neighbours.
fn served() -> (std::path::PathBuf, Vec<u8>) {
    let dir = std::env::temp_dir().join(format!("testkit-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data: Vec<u8> = (0..SIZE).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(dir.join("f"), &data).unwrap();
    (dir, data)
}

/// GETs bytes `a..=b` of `f` on a new connection: the whole response's length and its body.
fn get_range(server: &Server, a: usize, b: usize) -> (usize, Vec<u8>) {
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET /f HTTP/1.1\r\nHost: x\r\nRange: bytes={a}-{b}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let head = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(all.starts_with(b"HTTP/1.1 206"), "a partial answer");
    (all.len(), all[head..].to_vec())
}

#[test]
fn a_range_through_the_proxy_arrives_whole_and_is_counted_as_written() {
    let (dir, data) = served();
    // Both caps, small bursts: most writes are cut to what the buckets allow.
    let link = Link {
        bandwidth: Some(40e6),
        per_connection: Some(20e6),
        ..Link::default()
    };
    let direct = Server::start_with(&dir, 0, link).unwrap();
    let upstream = Server::start_with(&dir, 0, Link::default()).unwrap();
    let proxy = Server::start_proxy(upstream.addr(), 0, link).unwrap();
    let (a, b) = (1_234, 801_233);
    for server in [&direct, &proxy] {
        let (total, body) = get_range(server, a, b);
        assert!(body == data[a..=b], "the range's bytes, unchanged");
        // The client has read to the end, but the server's count may trail by a moment.
        let mut written = server.bytes_written();
        for _ in 0..50 {
            if written == total as u64 {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
            written = server.bytes_written();
        }
        assert_eq!(
            written, total as u64,
            "every byte the client read, counted once"
        );
        let log = server.log();
        assert_eq!(log.len(), 1);
        assert_eq!(log[0].content_length, (b - a + 1) as u64);
        assert_eq!(log[0].range.as_deref(), Some("bytes=1234-801233"));
    }
    assert_eq!(upstream.log().len(), 1, "the proxy asked its upstream once");
    let _ = std::fs::remove_dir_all(&dir);
}
