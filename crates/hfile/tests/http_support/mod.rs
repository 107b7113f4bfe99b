//! The test server and helpers shared by `http.rs` and `http_faults.rs` (the HTTP backend's
//! tests): a folder holding `data.bin` (a pattern that shows a misplaced window) and
//! `empty.bin`, served on 127.0.0.1 with optional faults, and reads as BGZF makes them.
// Each test file uses only some of these.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hfile::{Backend, HttpBackend, OpenOptions};
use testkit::{Fault, Rule};

pub const SIZE: usize = 3 * 1024 * 1024 + 12345;

pub fn pattern(len: usize) -> Vec<u8> {
    // Not periodic on any power of two, so a misplaced window shows.
    (0..len as u64)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

/// The test server on a folder holding `data.bin` (SIZE bytes of a pattern) and `empty.bin`.
pub struct Server {
    pub inner: testkit::Server,
    pub data: Vec<u8>,
    dir: PathBuf,
}

impl Server {
    pub fn start() -> Server {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hfile-http-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let data = pattern(SIZE);
        std::fs::write(dir.join("data.bin"), &data).unwrap();
        std::fs::write(dir.join("empty.bin"), b"").unwrap();
        let inner = testkit::Server::start(&dir).unwrap();
        Server { inner, data, dir }
    }

    /// A server whose `/data.bin` has `fault` for the first `times` requests (`None`: all).
    pub fn with_fault(fault: Fault, times: Option<usize>) -> Server {
        let s = Server::start();
        s.inner.add_rule(Rule {
            path: "/data.bin".into(),
            fault,
            times,
        });
        s
    }

    pub fn url(&self, path: &str) -> String {
        self.inner.url(path)
    }

    pub fn log(&self) -> Vec<testkit::LogEntry> {
        self.inner.log()
    }

    pub fn ranges(&self, path: &str) -> Vec<Option<String>> {
        self.inner.ranges(path)
    }

    pub fn connections(&self) -> u64 {
        self.inner.connections()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn fast_options() -> OpenOptions {
    OpenOptions {
        retries: 3,
        retry_backoff: Duration::from_millis(10),
        retry_max_time: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(2),
        low_speed_time: Duration::from_secs(1),
        low_speed_limit: 1,
        verbosity: 1,
        ..OpenOptions::default()
    }
}

/// Reads `[start, limit)` with the limit set as BGZF would set it.
pub fn read_span(b: &mut dyn Backend, start: u64, limit: u64) -> hfile::Result<Vec<u8>> {
    b.seek(start)?;
    b.set_readahead_limit(Some(limit));
    let mut out = vec![0u8; (limit - start) as usize];
    let mut done = 0;
    while done < out.len() {
        let n = b.read(&mut out[done..])?;
        if n == 0 {
            break;
        }
        done += n;
    }
    out.truncate(done);
    Ok(out)
}

pub fn range(a: u64, b: u64) -> Option<String> {
    Some(format!("bytes={a}-{b}"))
}

/// Reads `[start, limit)` of `/data.bin` from a server with `fault` on its first `times`
/// requests.
pub fn fault_read(
    fault: Fault,
    times: Option<usize>,
    start: u64,
    limit: u64,
) -> (Server, hfile::Result<Vec<u8>>, Duration) {
    let s = Server::with_fault(fault, times);
    let t = Instant::now();
    let mut b = HttpBackend::open(&s.url("/data.bin"), &fast_options()).unwrap();
    let r = read_span(&mut b, start, limit);
    (s, r, t.elapsed())
}

pub fn bounds(range: &Option<String>) -> (u64, u64) {
    let (a, b) = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.split_once('-'))
        .unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}

pub fn retry_after_zero(status: u16) -> Fault {
    Fault::Status {
        status,
        body: "no".into(),
        headers: vec![("retry-after".into(), "0".into())],
    }
}
