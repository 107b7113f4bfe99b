//! A small HTTP/1.1 file server written on plain TCP, for the faults a real HTTP stack (hyper,
//! behind [`crate::Server`]) will not produce: a chunked body cut before its last chunk, a
//! `Content-Length` that lies, a gzip `Content-Encoding` the client never asked for, headers
//! that never end. Everything else it answers as a file server with `Range` support would, one
//! request per connection (`Connection: close`), on 127.0.0.1 only. Each fault is bounded: a
//! connection thread stops when the client hangs up or after [`ENDLESS_CAP`] bytes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The most bytes an endless fault writes on one connection.
pub const ENDLESS_CAP: u64 = 64 << 20;

/// What the raw server does instead of a plain answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawFault {
    /// The right answer, with `Transfer-Encoding: chunked` (no `Content-Length`) in chunks of
    /// this many bytes, ending with the zero-length chunk.
    Chunked { chunk: usize },
    /// Chunked, and the connection closed after the data but before the zero-length chunk.
    ChunkedNoLastChunk { chunk: usize },
    /// The right bytes gzip-compressed, with `Content-Encoding: gzip`, which was not asked for.
    GzipEncoded,
    /// The right bytes with a `Content-Length` `extra` bytes larger, then the connection
    /// closes: every byte asked for arrived, the response still ends "short".
    LongContentLength { extra: u64 },
    /// `200` and the whole object whatever the `Range`, with a `Content-Length` claiming
    /// `claimed` bytes; the connection closes after the real ones.
    LyingLength { claimed: u64 },
    /// A status line, then header lines without end.
    EndlessHeaders,
    /// The right bytes, with `Content-Range: bytes A-B/*` (a size the server does not tell)
    /// and `405` to `HEAD`: a reader learns the size only from the `416` (`bytes */N`) its
    /// first request at or past the end gets.
    UnknownTotal,
}

/// One request as the raw server read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEntry {
    pub method: String,
    pub path: String,
    pub range: Option<String>,
    /// The fault it was answered with, if any.
    pub fault: Option<RawFault>,
}

struct RawRule {
    path: String,
    fault: RawFault,
    times: Option<usize>,
    hits: usize,
}

struct Shared {
    root: PathBuf,
    rules: Mutex<Vec<RawRule>>,
    log: Mutex<Vec<RawEntry>>,
    stop: AtomicBool,
}

/// A running raw server; dropping it stops it.
pub struct RawServer {
    addr: std::net::SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl RawServer {
    /// Serves the files under `root` on 127.0.0.1 at a free port.
    pub fn start(root: &Path) -> Result<RawServer, String> {
        let listener =
            TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot bind 127.0.0.1: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let shared = Arc::new(Shared {
            root: root.to_path_buf(),
            rules: Mutex::new(Vec::new()),
            log: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let mine = Arc::clone(&shared);
        let acceptor = std::thread::Builder::new()
            .name("testkit-raw-accept".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if mine.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let conn = Arc::clone(&mine);
                    let _ = std::thread::Builder::new()
                        .name("testkit-raw-conn".into())
                        .spawn(move || serve(&conn, stream));
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(RawServer {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{}", self.addr, path.trim_start_matches('/'))
    }

    /// `http://127.0.0.1:PORT`, without a final slash.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Answers the first `times` requests for `path` (all: `None`) with `fault`; rules are
    /// tried in the order added.
    pub fn add_rule(&self, path: &str, fault: RawFault, times: Option<usize>) {
        if let Ok(mut rules) = self.shared.rules.lock() {
            rules.push(RawRule {
                path: path.to_string(),
                fault,
                times,
                hits: 0,
            });
        }
    }

    /// Every request so far.
    pub fn log(&self) -> Vec<RawEntry> {
        self.shared
            .log
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the acceptor with a connection of our own.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }
}

/// The request line and the headers the server cares about.
struct Request {
    method: String,
    path: String,
    range: Option<String>,
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?).take(64 * 1024);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let method = words.next()?.to_string();
    let target = words.next()?;
    let path = target.split('?').next().unwrap_or(target).to_string();
    let mut range = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':') {
            if k.trim().eq_ignore_ascii_case("range") {
                range = Some(v.trim().to_string());
            }
        }
    }
    Some(Request {
        method,
        path,
        range,
    })
}

/// `bytes=A-B`, `bytes=A-` or `bytes=-N` against `len` bytes, as an inclusive pair (both
/// servers resolve ranges with this).
pub(crate) fn resolve(range: &str, len: u64) -> Option<(u64, u64)> {
    let (a, b) = range.trim().strip_prefix("bytes=")?.split_once('-')?;
    let (a, b) = (a.trim(), b.trim());
    let last = len.checked_sub(1)?;
    if a.is_empty() {
        let n: u64 = b.parse().ok()?;
        return (n > 0).then(|| (len.saturating_sub(n), last));
    }
    let a: u64 = a.parse().ok()?;
    let b = if b.is_empty() {
        last
    } else {
        b.parse::<u64>().ok()?.min(last)
    };
    (a <= b).then_some((a, b))
}

fn matching(shared: &Shared, path: &str) -> Option<RawFault> {
    let mut rules = shared.rules.lock().ok()?;
    let rule = rules
        .iter_mut()
        .find(|r| r.path == path && r.times.is_none_or(|n| r.hits < n))?;
    rule.hits += 1;
    Some(rule.fault.clone())
}

fn serve(shared: &Shared, mut stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
    let Some(req) = read_request(&stream) else {
        return;
    };
    let fault = matching(shared, &req.path);
    if let Ok(mut log) = shared.log.lock() {
        log.push(RawEntry {
            method: req.method.clone(),
            path: req.path.clone(),
            range: req.range.clone(),
            fault: fault.clone(),
        });
    }
    let _ = answer(shared, &mut stream, &req, fault);
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Both);
}

fn head(status: &str, headers: &[(&str, String)]) -> Vec<u8> {
    let mut h = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for (k, v) in headers {
        h.push_str(&format!("{k}: {v}\r\n"));
    }
    h.push_str("\r\n");
    h.into_bytes()
}

fn answer(
    shared: &Shared,
    stream: &mut TcpStream,
    req: &Request,
    fault: Option<RawFault>,
) -> std::io::Result<()> {
    if fault == Some(RawFault::EndlessHeaders) {
        stream.write_all(b"HTTP/1.1 206 Partial Content\r\n")?;
        let line = b"X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
        let mut sent = 0u64;
        while sent < ENDLESS_CAP {
            stream.write_all(line)?;
            sent += line.len() as u64;
        }
        return Ok(());
    }
    let file = shared.root.join(req.path.trim_start_matches('/'));
    let Ok(data) = std::fs::read(&file) else {
        return stream.write_all(&head("404 Not Found", &[("Content-Length", "0".into())]));
    };
    let len = data.len() as u64;
    let body_only = req.method != "HEAD";
    if fault == Some(RawFault::UnknownTotal) && !body_only {
        return stream.write_all(&head(
            "405 Method Not Allowed",
            &[("Content-Length", "0".into())],
        ));
    }
    if let Some(RawFault::LyingLength { claimed }) = fault {
        stream.write_all(&head("200 OK", &[("Content-Length", claimed.to_string())]))?;
        return if body_only {
            stream.write_all(&data)
        } else {
            Ok(())
        };
    }
    let (status, first, last) = match req.range.as_deref() {
        None => ("200 OK", 0, len.saturating_sub(1)),
        Some(r) => match resolve(r, len) {
            Some((a, b)) => ("206 Partial Content", a, b),
            None => {
                return stream.write_all(&head(
                    "416 Range Not Satisfiable",
                    &[
                        ("Content-Range", format!("bytes */{len}")),
                        ("Content-Length", "0".into()),
                    ],
                ))
            }
        },
    };
    let body = if len == 0 {
        &data[..0]
    } else {
        &data[first as usize..=last as usize]
    };
    let mut headers = Vec::new();
    if status.starts_with("206") {
        let total = if fault == Some(RawFault::UnknownTotal) {
            "*".to_string()
        } else {
            len.to_string()
        };
        headers.push(("Content-Range", format!("bytes {first}-{last}/{total}")));
    }
    write_response(stream, status, headers, body, body_only, fault)
}

/// Writes the head and (unless `HEAD` was asked) the body the way `fault` says: chunked, with
/// or without its last chunk, gzip-encoded, with a `Content-Length` larger than the body, or
/// plainly.
fn write_response(
    stream: &mut TcpStream,
    status: &str,
    mut headers: Vec<(&str, String)>,
    body: &[u8],
    body_only: bool,
    fault: Option<RawFault>,
) -> std::io::Result<()> {
    match fault {
        Some(RawFault::Chunked { chunk } | RawFault::ChunkedNoLastChunk { chunk }) => {
            headers.push(("Transfer-Encoding", "chunked".into()));
            stream.write_all(&head(status, &headers))?;
            if !body_only {
                return Ok(());
            }
            for piece in body.chunks(chunk.max(1)) {
                stream.write_all(format!("{:x}\r\n", piece.len()).as_bytes())?;
                stream.write_all(piece)?;
                stream.write_all(b"\r\n")?;
            }
            if fault == Some(RawFault::Chunked { chunk }) {
                stream.write_all(b"0\r\n\r\n")?;
            }
            Ok(())
        }
        Some(RawFault::GzipEncoded) => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(body)?;
            let encoded = gz.finish()?;
            headers.push(("Content-Encoding", "gzip".into()));
            headers.push(("Content-Length", encoded.len().to_string()));
            stream.write_all(&head(status, &headers))?;
            if body_only {
                stream.write_all(&encoded)?;
            }
            Ok(())
        }
        Some(RawFault::LongContentLength { extra }) => {
            headers.push(("Content-Length", (body.len() as u64 + extra).to_string()));
            stream.write_all(&head(status, &headers))?;
            if body_only {
                stream.write_all(body)?;
            }
            Ok(())
        }
        _ => {
            headers.push(("Content-Length", body.len().to_string()));
            stream.write_all(&head(status, &headers))?;
            if body_only {
                stream.write_all(body)?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(server: &RawServer, path: &str, range: &str) -> Vec<u8> {
        let mut s = TcpStream::connect(server.addr).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nRange: {range}\r\n\r\n"
        )
        .unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        out
    }

    #[test]
    fn faults_are_what_they_say() {
        let dir = std::env::temp_dir().join(format!("testkit-raw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f"), b"0123456789").unwrap();
        let s = RawServer::start(&dir).unwrap();
        let plain = String::from_utf8_lossy(&get(&s, "/f", "bytes=2-5")).into_owned();
        assert!(plain.starts_with("HTTP/1.1 206"), "{plain}");
        assert!(plain.contains("Content-Range: bytes 2-5/10"), "{plain}");
        assert!(plain.ends_with("\r\n\r\n2345"), "{plain}");
        s.add_rule("/f", RawFault::ChunkedNoLastChunk { chunk: 3 }, Some(1));
        let cut = String::from_utf8_lossy(&get(&s, "/f", "bytes=2-5")).into_owned();
        assert!(cut.ends_with("\r\n\r\n3\r\n234\r\n1\r\n5\r\n"), "{cut:?}");
        s.add_rule("/f", RawFault::LongContentLength { extra: 5 }, Some(1));
        let long = String::from_utf8_lossy(&get(&s, "/f", "bytes=0-1")).into_owned();
        assert!(
            long.contains("Content-Length: 7") && long.ends_with("01"),
            "{long}"
        );
        assert_eq!(s.log().len(), 3);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
