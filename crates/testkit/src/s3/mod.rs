//! The S3 test bed: `s3s-fs` (a real S3 implementation that checks SigV4 signatures, serving a
//! folder as buckets) as a child process on 127.0.0.1, behind the test server in proxy mode (so
//! every request is logged, and paced by a [`Link`]), and boto3 in a virtual environment for
//! pre-signed URLs made by an independent signer. Both tools are installed on first use into a
//! cache folder (`$HTS_TOOLS_DIR`, else `~/.cache/hts-tools`) and reused after: a fresh machine
//! needs nothing done by hand, and a test never skips for want of them.

mod compare;
mod tools;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub use compare::{byte_totals, demo, needed_bytes, needed_requests};
pub use tools::{boto3_python, presign, s3s_fs, tools_dir, BOTO3_VERSION, S3S_FS_VERSION};

use crate::corpus::EnvChange;
use crate::{Link, Server};

/// The test server's credentials (they protect nothing: the server is on 127.0.0.1 for one run).
pub const ACCESS_KEY: &str = "hts-test-access-key";
pub const SECRET_KEY: &str = "hts-test-secret-key-0123456789";
pub const REGION: &str = "us-east-1";

/// A running s3s-fs; dropping it stops it.
pub struct S3sFs {
    child: Child,
    pub addr: SocketAddr,
}

impl S3sFs {
    /// The CPU time (user and system) the server has used so far, from `/proc` (Linux): what
    /// the emulated store costs a benchmark run on a shared machine.
    pub fn cpu_seconds(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        // The fields after the command name, which is in parentheses and may hold spaces.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let ticks: u64 =
            fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        // SAFETY: sysconf only reads a configuration value.
        let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        (per_second > 0).then(|| ticks as f64 / per_second as f64)
    }

    /// Serves `root` (each folder a bucket) on 127.0.0.1; `domain` enables virtual-hosted
    /// addressing under that name.
    pub fn start(binary: &Path, root: &Path, domain: Option<&str>) -> Result<S3sFs, String> {
        let mut command = Command::new(binary);
        command.args(["--host", "127.0.0.1", "--port", "0"]).args([
            "--access-key",
            ACCESS_KEY,
            "--secret-key",
            SECRET_KEY,
        ]);
        if let Some(domain) = domain {
            command.args(["--domain", domain]);
        }
        // Its address is only logged at level info, and only when asked for.
        let mut child = command
            .env("RUST_LOG", "info")
            .arg(root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().ok_or("s3s-fs has no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        // Reads the log to its end, so the child never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(addr) = listening_address(&line) {
                    let _ = tx.send(addr);
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(addr) => Ok(S3sFs { child, addr }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err("s3s-fs did not report its address within 30 s".to_string())
            }
        }
    }
}

impl Drop for S3sFs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address in s3s-fs's `server is running at http://127.0.0.1:PORT` line.
fn listening_address(line: &str) -> Option<SocketAddr> {
    let plain: String = strip_ansi(line);
    let rest = &plain[plain.find("server is running at http://")? + 28..];
    rest.split_whitespace()
        .next()?
        .trim_end_matches('/')
        .parse()
        .ok()
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ ... letter
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// One object to put in a bucket: a file (copied, or linked when large) and its key.
pub struct Object {
    pub source: PathBuf,
    pub key: String,
}

/// s3s-fs behind the logging proxy, serving buckets staged in a temporary folder.
pub struct S3Stack {
    pub proxy: Server,
    pub s3s: Option<S3sFs>,
    root: PathBuf,
}

impl S3Stack {
    /// Stages `buckets` and starts the server and the proxy (through `link`).
    pub fn start(buckets: &[(&str, Vec<Object>)], link: Link) -> Result<S3Stack, String> {
        let binary = s3s_fs()?;
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "hts-s3-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        let started = S3Stack::stage_and_start(&binary, &root, buckets, link);
        if started.is_err() {
            let _ = std::fs::remove_dir_all(&root);
        }
        let (s3s, proxy) = started?;
        Ok(S3Stack {
            proxy,
            s3s: Some(s3s),
            root,
        })
    }

    fn stage_and_start(
        binary: &Path,
        root: &Path,
        buckets: &[(&str, Vec<Object>)],
        link: Link,
    ) -> Result<(S3sFs, Server), String> {
        stage(root, buckets)?;
        // Virtual-hosted requests name `BUCKET.localhost:PORT`, and s3s-fs matches the whole
        // `localhost:PORT`: the proxy's port must be known before s3s-fs starts.
        let port = free_port()?;
        let s3s = S3sFs::start(binary, root, Some(&format!("localhost:{port}")))?;
        let proxy = Server::start_proxy(s3s.addr, port, link)?;
        Ok((s3s, proxy))
    }

    /// Asks s3s-fs itself (not through the proxy: no link delay, no log entry) for the first
    /// byte of a pre-signed `url` of this stack. s3s-fs opens files through tokio's blocking
    /// pool, whose threads exit after 10 s idle: the first GET after a pause (a benchmark's
    /// other modes, on the file server) waits for new threads, 3-7 ms, a cost of the test
    /// bed's idle store that no busy object store has. A benchmark calls this before each run
    /// through the store so that no mode pays it for being the first after a pause.
    pub fn wake(&self, url: &str) -> Result<(), String> {
        use std::io::{Read, Write};
        let addr = self.s3s.as_ref().ok_or("s3s-fs is stopped")?.addr;
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let (host, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let mut stream = std::net::TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        // The signature covers the Host header only: the proxy's, as in the URL.
        let request = format!(
            "GET {target} HTTP/1.1\r\nHost: {host}\r\nRange: bytes=0-0\r\nConnection: close\r\n\r\n"
        );
        let mut answer = Vec::new();
        stream
            .write_all(request.as_bytes())
            .and_then(|()| stream.read_to_end(&mut answer))
            .map_err(|e| format!("waking s3s-fs at {addr}: {e}"))?;
        match answer.starts_with(b"HTTP/1.1 206") {
            true => Ok(()),
            false => Err(format!(
                "waking s3s-fs at {addr}: {}",
                String::from_utf8_lossy(&answer[..answer.len().min(200)])
            )),
        }
    }

    /// The endpoint clients use: the proxy, so every request is logged.
    pub fn endpoint(&self) -> String {
        self.proxy.base()
    }

    /// The environment for htslib's `s3+http://` plugin (samtools) to reach this server.
    pub fn htslib_env(&self) -> Vec<EnvChange> {
        let mut env = self.env(SECRET_KEY);
        env.push(("HTS_S3_HOST".into(), Some(self.proxy.addr().to_string())));
        env.push(("HTS_S3_ADDRESS_STYLE".into(), Some("path".into())));
        env
    }

    /// The environment for `hts` to reach this server with `secret`: every
    /// `AWS_*` and `HTS_S3_*` variable of the caller's environment is removed first, so a
    /// developer's own AWS settings cannot leak into a test.
    pub fn env(&self, secret: &str) -> Vec<EnvChange> {
        let mut env: Vec<EnvChange> = std::env::vars()
            .map(|(k, _)| k)
            .filter(|k| k.starts_with("AWS_") || k.starts_with("HTS_S3_"))
            .map(|k| (k, None))
            .collect();
        let nowhere = self.root.join("no-such-aws-file").display().to_string();
        for (k, v) in [
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.to_string()),
            ("AWS_SECRET_ACCESS_KEY", secret.to_string()),
            ("AWS_REGION", REGION.to_string()),
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_SHARED_CREDENTIALS_FILE", nowhere.clone()),
            ("AWS_CONFIG_FILE", nowhere),
        ] {
            env.push((k.to_string(), Some(v)));
        }
        env
    }
}

impl Drop for S3Stack {
    fn drop(&mut self) {
        // The server first, then its files.
        self.s3s.take();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A port free on 127.0.0.1 now (for a server that must be told its port before it starts).
fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// Copies (or, when large, links) `buckets`' objects into `root` as s3s-fs lays buckets out,
/// each with its ETag stored beside it.
fn stage(root: &Path, buckets: &[(&str, Vec<Object>)]) -> Result<(), String> {
    for (bucket, objects) in buckets {
        for object in objects {
            let path = root.join(bucket).join(&object.key);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            let size = std::fs::metadata(&object.source)
                .map_err(|e| format!("{}: {e}", object.source.display()))?
                .len();
            // Large benchmark files are linked, not copied. Every object gets its ETag
            // stored beside it, as s3s-fs does for an object uploaded with PUT: without one
            // it hashes the whole object on every GET (a 2.6 MB BAI asked for in five parts
            // is hashed five times, ~30 ms on a busy machine), which no object store does.
            let staged = if size > 64 << 20 {
                std::os::unix::fs::symlink(&object.source, &path).map(|()| format!("{size:x}"))
            } else {
                std::fs::copy(&object.source, &path).and_then(|_| md5_hex(&path))
            };
            let staged = staged.and_then(|e_tag| {
                let info = root.join(format!(
                    ".bucket-{}.object-{}.internal.json",
                    base64url(bucket.as_bytes()),
                    base64url(object.key.as_bytes())
                ));
                std::fs::write(info, format!("{{\"e_tag\":\"{e_tag}\"}}"))
            });
            staged
                .map_err(|e| format!("{} -> {}: {e}", object.source.display(), path.display()))?;
        }
    }
    Ok(())
}

/// The MD5 of a file in hex (the ETag S3 gives an object uploaded in one PUT), by coreutils'
/// `md5sum`.
fn md5_hex(path: &Path) -> std::io::Result<String> {
    let out = Command::new("md5sum")
        .arg(path)
        .stderr(Stdio::null())
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.split_whitespace().next() {
        Some(hex) if out.status.success() && hex.len() == 32 => Ok(hex.to_string()),
        _ => Err(std::io::Error::other(format!(
            "md5sum {}: {}",
            path.display(),
            out.status
        ))),
    }
}

/// URL-safe base64 without padding (how s3s-fs names its side files).
fn base64url(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// The files of one folder (not its subfolders) as objects of a bucket, keyed by name.
pub fn folder_objects(dir: &Path) -> Result<Vec<Object>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .map(|e| Object {
            source: e.path(),
            key: e.file_name().to_string_lossy().into_owned(),
        })
        .collect())
}

/// The conformance corpus (`data/` and `malformed/`) as objects of one bucket.
pub fn corpus_objects(corpus: &Path) -> Result<Vec<Object>, String> {
    let mut objects = Vec::new();
    for sub in ["data", "malformed"] {
        let dir = corpus.join(sub);
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries.filter_map(|e| e.ok()) {
            if entry.path().is_file() {
                objects.push(Object {
                    source: entry.path(),
                    key: format!("{sub}/{}", entry.file_name().to_string_lossy()),
                });
            }
        }
    }
    Ok(objects)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_as_s3s_fs_names_files() {
        assert_eq!(base64url(b"bench"), "YmVuY2g");
        assert_eq!(base64url(b"ab"), "YWI");
        assert_eq!(base64url(b"abc"), "YWJj");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn reads_the_listening_line() {
        let line = "  2026-12-03T06:44:12.383727Z  INFO s3s_fs: server is running at http://127.0.0.1:37681";
        assert_eq!(listening_address(line), "127.0.0.1:37681".parse().ok());
        let colored = "\u{1b}[32m INFO\u{1b}[0m s3s_fs: server is running at http://127.0.0.1:5";
        assert_eq!(listening_address(colored), "127.0.0.1:5".parse().ok());
        assert_eq!(listening_address("authentication is enabled"), None);
    }

    /// s3s-fs hashes an object on every GET unless its ETag is stored beside it (as after a
    /// PUT): every staged object, small (copied) or large (linked), must carry one, or a BAI
    /// asked for in parts is hashed once per part (40 ms of emulated-store CPU in a query).
    #[test]
    fn every_staged_object_carries_its_etag() {
        let root = std::env::temp_dir().join(format!("hts-s3-stage-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let source = root.join("source.bin");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(&source, b"hello\n").unwrap();
        let objects = vec![Object {
            source: source.clone(),
            key: "dir/small.bai".into(),
        }];
        stage(&root, &[("bkt", objects)]).unwrap();
        let info = root.join(format!(
            ".bucket-{}.object-{}.internal.json",
            base64url(b"bkt"),
            base64url(b"dir/small.bai")
        ));
        let stored = std::fs::read_to_string(&info);
        let staged = std::fs::read(root.join("bkt/dir/small.bai"));
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(staged.unwrap(), b"hello\n");
        // The MD5 of "hello\n", what S3 gives an object uploaded in one PUT.
        assert_eq!(
            stored.unwrap(),
            "{\"e_tag\":\"b1946ac92492d2347c6235b4d2611184\"}"
        );
    }
}
