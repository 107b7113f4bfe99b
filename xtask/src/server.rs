//! A real HTTP/1.1 file server for tests, the demo and benchmarks: tower-http's `ServeDir` (which
//! implements Range and conditional requests itself) on axum/hyper (keep-alive), bound to
//! 127.0.0.1, with a log of every request and counts of connections and bytes written.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// One request as the server saw it.
#[allow(dead_code)] // read by tests and benchmarks
#[derive(Debug, Clone)]
pub struct LogEntry {
    pub connection: u64,
    pub method: String,
    pub path: String,
    pub range: Option<String>,
    pub status: u16,
    /// The Content-Length the server advertised.
    pub content_length: u64,
}

/// What the server counted.
#[derive(Debug, Default)]
pub struct Counters {
    pub connections: AtomicU64,
    pub bytes_written: AtomicU64,
    pub log: Mutex<Vec<LogEntry>>,
}

impl Counters {
    pub fn entries(&self) -> Vec<LogEntry> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    pub fn reset(&self) {
        self.connections.store(0, Ordering::SeqCst);
        self.bytes_written.store(0, Ordering::SeqCst);
        if let Ok(mut l) = self.log.lock() {
            l.clear();
        }
    }

    /// A one-line summary: requests, bytes, connections, and whether every Range was bounded.
    pub fn summary(&self) -> Summary {
        let entries = self.entries();
        let gets = entries.iter().filter(|e| e.method == "GET").count();
        let unbounded = entries
            .iter()
            .filter(|e| {
                e.method == "GET"
                    && e.range
                        .as_deref()
                        .is_none_or(|r| r.trim_end().ends_with('-'))
            })
            .count();
        Summary {
            requests: entries.len(),
            gets,
            unbounded,
            advertised: entries.iter().map(|e| e.content_length).sum(),
            written: self.bytes_written.load(Ordering::SeqCst),
            connections: self.connections.load(Ordering::SeqCst),
        }
    }
}

/// Totals for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub requests: usize,
    pub gets: usize,
    /// GETs without a Range or with an open-ended one (`bytes=X-`).
    pub unbounded: usize,
    pub advertised: u64,
    pub written: u64,
    pub connections: u64,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} requests ({} GET), {} bytes sent, {} bytes advertised, {} connection(s), {}",
            self.requests,
            self.gets,
            self.written,
            self.advertised,
            self.connections,
            if self.unbounded == 0 {
                "all ranges bounded".to_string()
            } else {
                format!("{} unbounded", self.unbounded)
            }
        )
    }
}

/// A link to emulate: a bandwidth cap shared by all connections (as a real link is), a delay
/// before each response's first byte, and an extra delay for each new connection.
#[derive(Debug, Clone, Copy, Default)]
pub struct Link {
    /// Bytes per second; `None`: unlimited.
    pub bandwidth: Option<f64>,
    pub latency: Duration,
    pub connect_latency: Duration,
}

/// A token bucket on bytes written, shared by every connection of one server.
#[derive(Debug)]
struct Bucket {
    rate: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    /// Bytes that may be written now (at most `want`), or how long to wait for some. Writes
    /// go out in pieces of at least 16 KiB (or `want`), not a few bytes a syscall.
    fn take(&mut self, want: usize) -> Result<usize, Duration> {
        let now = Instant::now();
        let burst = (self.rate / 100.0).max(65_536.0);
        self.tokens =
            (self.tokens + now.duration_since(self.last).as_secs_f64() * self.rate).min(burst);
        self.last = now;
        let piece = want.min(16_384) as f64;
        if self.tokens >= piece {
            let n = (self.tokens as usize).min(want);
            self.tokens -= n as f64;
            Ok(n)
        } else {
            Err(Duration::from_secs_f64(
                ((piece - self.tokens) / self.rate).max(0.0002),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_paces_to_its_rate_in_real_pieces() {
        let mut b = Bucket {
            rate: 1e6,
            tokens: 0.0,
            last: Instant::now(),
        };
        assert!(
            b.take(100_000).is_err(),
            "an empty bucket makes the writer wait"
        );
        std::thread::sleep(Duration::from_millis(30));
        let n = b.take(100_000).unwrap();
        assert!(
            (16_384..=40_000).contains(&n),
            "30 ms at 1 MB/s is about 30 kB, got {n}"
        );
        assert_eq!(
            b.take(10).map_err(|_| ()),
            Err(()),
            "nothing left right after"
        );
    }
}

/// The socket send buffer on an emulated link: small, so "written" is close to "delivered".
const SEND_BUFFER: usize = 128 * 1024;

struct Shared {
    counters: Arc<Counters>,
    link: Link,
    bucket: Option<Mutex<Bucket>>,
}

/// A running server; dropping it stops it.
pub struct Server {
    pub addr: SocketAddr,
    pub counters: Arc<Counters>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Server {
    /// Serves `root` on 127.0.0.1 (port 0: any free port).
    pub fn start(root: &Path, port: u16) -> Result<Server, String> {
        Server::start_with(root, port, Link::default())
    }

    /// Serves `root` through an emulated link.
    pub fn start_with(root: &Path, port: u16, link: Link) -> Result<Server, String> {
        let root: PathBuf = root.to_path_buf();
        let routes =
            axum::Router::new().fallback_service(tower_http::services::ServeDir::new(root));
        Server::start_routes(routes, port, link)
    }

    /// Serves `routes` (files, or a proxy) with the request log, the counters and the link.
    pub fn start_routes(routes: axum::Router, port: u16, link: Link) -> Result<Server, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the server runtime: {e}"))?;
        let counters = Arc::new(Counters::default());
        let listener = runtime
            .block_on(TcpListener::bind(("127.0.0.1", port)))
            .map_err(|e| format!("cannot bind 127.0.0.1:{port}: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let shared = Arc::new(Shared {
            counters: counters.clone(),
            link,
            bucket: link.bandwidth.map(|rate| {
                Mutex::new(Bucket {
                    rate,
                    tokens: 0.0,
                    last: Instant::now(),
                })
            }),
        });
        let app = routes.layer(middleware::from_fn_with_state(shared.clone(), log_request));
        let listener = CountingListener {
            inner: listener,
            shared,
            next_id: 0,
        };
        runtime.spawn(async move {
            let _ = axum::serve(
                listener,
                app.into_make_service_with_connect_info::<ConnId>(),
            )
            .await;
        });
        Ok(Server {
            addr,
            counters,
            runtime: Some(runtime),
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{}", self.addr, path.trim_start_matches('/'))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

async fn log_request(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(conn): ConnectInfo<ConnId>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let range = request
        .headers()
        .get("range")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if !shared.link.latency.is_zero() {
        tokio::time::sleep(shared.link.latency).await;
    }
    let response = next.run(request).await;
    let content_length = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let entry = LogEntry {
        connection: conn.0,
        method,
        path,
        range,
        status: response.status().as_u16(),
        content_length,
    };
    if let Ok(mut log) = shared.counters.log.lock() {
        log.push(entry);
    }
    response
}

/// The serial number of the connection a request came on (nginx's `$connection`).
#[derive(Debug, Clone, Copy)]
pub struct ConnId(pub u64);

impl axum::extract::connect_info::Connected<IncomingStream<'_, CountingListener>> for ConnId {
    fn connect_info(stream: IncomingStream<'_, CountingListener>) -> ConnId {
        *stream.remote_addr()
    }
}

pub struct CountingListener {
    inner: TcpListener,
    shared: Arc<Shared>,
    next_id: u64,
}

impl Listener for CountingListener {
    type Io = MeteredStream;
    type Addr = ConnId;

    async fn accept(&mut self) -> (MeteredStream, ConnId) {
        loop {
            match self.inner.accept().await {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    if self.shared.bucket.is_some() {
                        // A small send buffer, so that "written" is close to "delivered".
                        let _ = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER);
                    }
                    self.next_id += 1;
                    self.shared
                        .counters
                        .connections
                        .fetch_add(1, Ordering::SeqCst);
                    let io = MeteredStream {
                        inner: stream,
                        shared: self.shared.clone(),
                        sleep: None,
                        connect_delay: Some(Box::pin(tokio::time::sleep(
                            self.shared.link.connect_latency,
                        ))),
                    };
                    return (io, ConnId(self.next_id));
                }
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<ConnId> {
        Ok(ConnId(0))
    }
}

/// A TCP stream that counts the bytes written to it and paces them through the link's bucket.
pub struct MeteredStream {
    inner: TcpStream,
    shared: Arc<Shared>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The new-connection delay, served before the first request is read.
    connect_delay: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl AsyncRead for MeteredStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if let Some(delay) = self.connect_delay.as_mut() {
            if delay.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.connect_delay = None;
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for MeteredStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut allowed = buf.len();
        let shared = self.shared.clone();
        if let Some(bucket) = &shared.bucket {
            if let Some(sleep) = self.sleep.as_mut() {
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                self.sleep = None;
            }
            let taken = match bucket.lock() {
                Ok(mut b) => b.take(buf.len()),
                Err(_) => Ok(buf.len()),
            };
            match taken {
                Ok(n) => allowed = n,
                Err(wait) => {
                    let mut sleep = Box::pin(tokio::time::sleep(wait));
                    let _ = sleep.as_mut().poll(cx);
                    self.sleep = Some(sleep);
                    return Poll::Pending;
                }
            }
        }
        let r = Pin::new(&mut self.inner).poll_write(cx, &buf[..allowed]);
        if let Some(bucket) = &shared.bucket {
            // Tokens not used (a short or refused write) go back to the bucket.
            let written = match &r {
                Poll::Ready(Ok(n)) => *n,
                _ => 0,
            };
            if written < allowed {
                if let Ok(mut b) = bucket.lock() {
                    b.tokens += (allowed - written) as f64;
                }
            }
        }
        if let Poll::Ready(Ok(n)) = &r {
            self.shared
                .counters
                .bytes_written
                .fetch_add(*n as u64, Ordering::SeqCst);
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
