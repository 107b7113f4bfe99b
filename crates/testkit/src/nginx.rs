//! nginx on 127.0.0.1 serving a folder, with a generated config and an access log that records
//! `$connection` and `$http_range` for each request, so tests can check what the client asked.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Nginx {
    child: Child,
    pub port: u16,
    dir: PathBuf,
}

/// One access-log line.
#[derive(Debug, Clone)]
pub struct Access {
    pub connection: u64,
    pub method: String,
    pub uri: String,
    pub range: String,
}

pub fn available() -> bool {
    Command::new("nginx")
        .arg("-v")
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

impl Nginx {
    /// Starts nginx over `root` for a corpus test; nginx is part of the test bed (README,
    /// .ci/run), so its absence fails the test rather than skipping it.
    pub fn start_required(root: &Path) -> Nginx {
        assert!(
            available(),
            "nginx is needed on PATH (apt-get install nginx-light)"
        );
        Nginx::start(root).unwrap_or_else(|e| panic!("nginx: {e}"))
    }

    pub fn start(root: &Path) -> Result<Nginx, String> {
        let port = free_port()?;
        let dir = std::env::temp_dir().join(format!("hts-nginx-{}-{port}", std::process::id()));
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let root = root
            .canonicalize()
            .map_err(|e| format!("{}: {e}", root.display()))?;
        let d = dir.display();
        let user = if is_root() { "user root;" } else { "" };
        let conf = format!(
            "{user}
worker_processes 1;
daemon off;
# One process: killing the child then ends nginx, where a killed master leaves its
# worker serving (and holding inherited descriptors) after the run.
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
    log_format ranges '$connection $request_method $uri \"$http_range\" $status $bytes_sent';
    access_log {d}/access.log ranges;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    keepalive_requests 100000;
    keepalive_timeout 60s;
    sendfile on;
    types {{ }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {root};
    }}
}}
",
            root = root.display()
        );
        let conf_path = dir.join("nginx.conf");
        fs::write(&conf_path, conf).map_err(|e| e.to_string())?;
        let child = Command::new("nginx")
            .arg("-c")
            .arg(&conf_path)
            .arg("-p")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start nginx: {e}"))?;
        let mut n = Nginx { child, port, dir };
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = n.child.try_wait() {
                let log = fs::read_to_string(n.dir.join("error.log")).unwrap_or_default();
                return Err(format!("nginx exited ({status}): {log}"));
            }
            if start.elapsed() > Duration::from_secs(10) {
                return Err("nginx did not start listening within 10 s".to_string());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // The probe connection above is one access-less connection; clear the log anyway.
        n.clear_log();
        Ok(n)
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn clear_log(&self) {
        let _ = fs::write(self.dir.join("access.log"), b"");
    }

    /// Parsed access log. nginx writes a line when a request completes.
    pub fn log(&self) -> Vec<Access> {
        let text = fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        text.lines().filter_map(parse_line).collect()
    }

    /// An error naming the first GET whose Range was missing or open-ended.
    pub fn check_bounded(&self) -> Result<(), String> {
        let log = self.log();
        if log.is_empty() {
            return Err("nginx logged no request".to_string());
        }
        let gets = log.iter().filter(|a| a.method == "GET").count();
        match log
            .iter()
            .find(|a| a.method == "GET" && !is_bounded(&a.range))
        {
            Some(a) => Err(format!(
                "nginx saw an unbounded request: GET {} Range '{}'",
                a.uri, a.range
            )),
            None => {
                let mut conns: Vec<u64> = log.iter().map(|a| a.connection).collect();
                conns.sort_unstable();
                conns.dedup();
                println!(
                    "nginx: {gets} GETs over {} connection(s), every Range bounded",
                    conns.len()
                );
                Ok(())
            }
        }
    }
}

/// `bytes=A-B` with both ends.
/// `bytes=A-B`, or a suffix `bytes=-N` (the last N bytes: the EOF probe), names its end.
fn is_bounded(range: &str) -> bool {
    range
        .strip_prefix("bytes=")
        .and_then(|r| r.split_once('-'))
        .is_some_and(|(a, b)| {
            (a.is_empty() || a.parse::<u64>().is_ok()) && b.parse::<u64>().is_ok()
        })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0"))
        .unwrap_or(false)
}

fn parse_line(line: &str) -> Option<Access> {
    let (head, rest) = line.split_once(" \"")?;
    let (range, tail) = rest.split_once("\" ")?;
    let mut h = head.split(' ');
    let connection = h.next()?.parse().ok()?;
    let method = h.next()?.to_string();
    let uri = h.next()?.to_string();
    // The status and byte count follow; checked for shape only.
    let mut t = tail.split(' ');
    t.next()?.parse::<u16>().ok()?;
    t.next()?.parse::<u64>().ok()?;
    Some(Access {
        connection,
        method,
        uri,
        range: if range == "-" {
            String::new()
        } else {
            range.to_string()
        },
    })
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_access_lines() {
        let a = super::parse_line("7 GET /data/x.bam \"bytes=0-65535\" 206 65800").unwrap();
        assert_eq!(a.connection, 7);
        assert_eq!(a.range, "bytes=0-65535");
        let b = super::parse_line("8 HEAD /y \"-\" 200 120").unwrap();
        assert_eq!(b.range, "");
        assert!(super::is_bounded("bytes=0-9"));
        assert!(!super::is_bounded("bytes=10-"));
        assert!(!super::is_bounded(""));
        assert!(super::is_bounded("bytes=-28"));
        assert!(!super::is_bounded("bytes=-"));
    }
}
