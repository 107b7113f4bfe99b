//! What the proxy hop costs: the file server on the `s3` link, against the same file server
//! (unpaced) behind a proxy on that link, alternated in one run. Each pass fetches FILE as
//! its first 48 MiB as bounded ranges of PART KiB (1024), AT_ONCE (4) at a time (curl, so the client's CPU is not counted)
//! and reports the wall time, this process's CPU (both servers and the proxy) and the time to
//! each response head.
//!
//! `cargo run -p hts-testkit --example proxy_cost -- FILE [ROUNDS [PART [AT_ONCE]]]`

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use testkit::{Link, Server};

/// At most this much of FILE: about chr22's share of the benchmark BAM.
const LIMIT: u64 = 48 << 20;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = Path::new(args.first().ok_or("usage: proxy_cost FILE [ROUNDS]")?);
    let number =
        |i: usize, default: u64| args.get(i).and_then(|r| r.parse().ok()).unwrap_or(default);
    let rounds = number(1, 5) as usize;
    let part = number(2, 1024) << 10;
    let at_once = number(3, 4) as usize;
    let dir = file.parent().ok_or("FILE has no directory")?;
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("FILE has no name")?;
    let size = std::fs::metadata(file)
        .map_err(|e| e.to_string())?
        .len()
        .min(LIMIT);
    let link = Link::profile("s3").ok_or("no s3 profile")?;
    let direct = Server::start_with(dir, 0, link)?;
    let upstream = Server::start_with(dir, 0, Link::default())?;
    let proxy = Server::start_proxy(upstream.addr(), 0, link)?;
    let mut figures: [Vec<(f64, f64, f64)>; 2] = [Vec::new(), Vec::new()];
    for round in 0..=rounds {
        for (i, server) in [&direct, &proxy].into_iter().enumerate() {
            server.reset();
            let cpu = cpu_seconds();
            let start = Instant::now();
            fetch(&server.url(name), size, part, at_once)?;
            let wall = start.elapsed().as_secs_f64();
            let cpu = cpu_seconds() - cpu;
            let log = server.take_log();
            let head: Duration = log.iter().map(|e| e.answered - e.arrived).sum();
            let head = head.as_secs_f64() * 1e3 / log.len().max(1) as f64;
            // Round 0 warms both paths up (connections, the page cache).
            if round > 0 {
                figures[i].push((wall, cpu, head));
            }
        }
    }
    for (label, runs) in ["direct", "proxied"].iter().zip(&figures) {
        let med = |f: fn(&(f64, f64, f64)) -> f64| median(runs.iter().map(f).collect());
        println!(
            "{label:>8}: wall {:.3} s, server CPU {:.3} s, head {:.2} ms (medians of {rounds})",
            med(|r| r.0),
            med(|r| r.1),
            med(|r| r.2)
        );
    }
    // Each new upstream connection costs the proxied path a connect on top of the direct one's.
    println!(
        "upstream: {} connection(s) for {} requests",
        upstream.connections(),
        upstream.log().len()
    );
    Ok(())
}

/// Fetches `0..size` as bounded parts of `part` bytes, `at_once` at a time, each by its own
/// curl.
fn fetch(url: &str, size: u64, part: u64, at_once: usize) -> Result<(), String> {
    let starts: Vec<u64> = (0..size).step_by(part as usize).collect();
    for pair in starts.chunks(at_once) {
        let children: Vec<_> = pair
            .iter()
            .map(|&a| {
                let b = (a + part).min(size) - 1;
                Command::new("curl")
                    .args(["-sf", "-o", "/dev/null", "-r", &format!("{a}-{b}"), url])
                    .spawn()
                    .map_err(|e| format!("curl: {e}"))
            })
            .collect::<Result<_, _>>()?;
        for mut child in children {
            let status = child.wait().map_err(|e| e.to_string())?;
            if !status.success() {
                return Err(format!("curl {url}: {status}"));
            }
        }
    }
    Ok(())
}

/// User and system CPU seconds of this process so far.
fn cpu_seconds() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid rusage for getrusage to fill.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}
