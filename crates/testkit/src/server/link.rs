//! The emulated link and the per-connection stream: a bandwidth cap shared by every connection
//! (as a real link is), a cap on each connection (as an object store serves each GET), a
//! first-byte delay per response, an extra delay per new connection, and counts of bytes written.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use super::Shared;

/// A link to emulate.
#[derive(Debug, Clone, Copy, Default)]
pub struct Link {
    /// Bytes per second shared by every connection; `None`: unlimited.
    pub bandwidth: Option<f64>,
    /// Bytes per second on each connection on its own (an object store's rate per request);
    /// `None`: unlimited.
    pub per_connection: Option<f64>,
    /// Delay before each response's first byte.
    pub latency: Duration,
    /// Extra delay for each new connection.
    pub connect_latency: Duration,
}

impl Link {
    /// The profiles of the benchmark (`ec2`, `home`, `s3`, `loopback`), as in the bench README.
    /// `s3` is an object store: 35 MB/s for each GET's connection, 200 MB/s in all.
    pub fn profile(name: &str) -> Option<Link> {
        let mb = 1e6;
        match name {
            "ec2" => Some(Link {
                bandwidth: Some(35.0 * mb),
                latency: Duration::from_millis(20),
                connect_latency: Duration::from_millis(2),
                ..Link::default()
            }),
            "home" => Some(Link {
                bandwidth: Some(2.0 * mb),
                latency: Duration::from_millis(60),
                connect_latency: Duration::from_millis(60),
                ..Link::default()
            }),
            "s3" => Some(Link {
                bandwidth: Some(200.0 * mb),
                per_connection: Some(35.0 * mb),
                latency: Duration::from_millis(20),
                connect_latency: Duration::from_millis(2),
            }),
            "loopback" => Some(Link::default()),
            _ => None,
        }
    }
}

/// A token bucket on bytes written, shared by every connection of one server.
#[derive(Debug)]
pub(crate) struct Bucket {
    pub(crate) rate: f64,
    pub(crate) tokens: f64,
    pub(crate) last: Instant,
}

impl Bucket {
    pub(crate) fn new(rate: f64) -> Bucket {
        Bucket {
            rate,
            tokens: 0.0,
            last: Instant::now(),
        }
    }

    /// Bytes that may be written at `now` (at most `want`), or how long to wait for some.
    /// Writes go out in pieces of at least 16 KiB (or `want`), not a few bytes a syscall.
    pub(crate) fn take(&mut self, want: usize, now: Instant) -> Result<usize, Duration> {
        let burst = (self.rate / 100.0).max(65_536.0);
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(burst);
        self.last = self.last.max(now);
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

/// The socket send buffer on an emulated link: small, so "written" is close to "delivered".
const SEND_BUFFER: usize = 128 * 1024;

/// The serial number of the connection a request came on (nginx's `$connection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnId(pub u64);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, CountingListener>>
    for ConnId
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, CountingListener>) -> ConnId {
        *stream.remote_addr()
    }
}

/// Accepts connections, numbers them, and wraps each in a [`MeteredStream`].
pub struct CountingListener {
    pub(crate) inner: TcpListener,
    pub(crate) shared: Arc<Shared>,
    pub(crate) next_id: u64,
}

impl Listener for CountingListener {
    type Io = MeteredStream;
    type Addr = ConnId;

    async fn accept(&mut self) -> (MeteredStream, ConnId) {
        loop {
            match self.inner.accept().await {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    if self.shared.bucket.is_some() || self.shared.link.per_connection.is_some() {
                        let _ = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER);
                    }
                    self.next_id += 1;
                    let id = ConnId(self.next_id);
                    self.shared
                        .counters
                        .connections
                        .fetch_add(1, Ordering::SeqCst);
                    let written = Arc::new(AtomicU64::new(0));
                    let doomed = Arc::new(AtomicBool::new(false));
                    self.shared
                        .connections
                        .add(id, Arc::clone(&written), Arc::clone(&doomed));
                    let io = MeteredStream {
                        inner: stream,
                        shared: self.shared.clone(),
                        written,
                        doomed,
                        own: self.shared.link.per_connection.map(Bucket::new),
                        sleep: None,
                        connect_delay: Some(Box::pin(tokio::time::sleep(
                            self.shared.link.connect_latency,
                        ))),
                    };
                    return (io, id);
                }
                // Out of file descriptors or similar: try again shortly rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
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
    /// Bytes written on this connection (watched by faults that must know what went out).
    written: Arc<AtomicU64>,
    /// Set by a fault: the next write fails and the connection is dropped.
    doomed: Arc<AtomicBool>,
    /// This connection's own cap, taken from before the shared one.
    own: Option<Bucket>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The new-connection delay, served before the first request is read.
    connect_delay: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl MeteredStream {
    /// Bytes that may be written now (at most `want`) under this connection's cap and then the
    /// shared one, or how long to wait. Tokens taken from one bucket and refused by the other
    /// go back.
    fn pace(&mut self, want: usize, now: Instant) -> Result<usize, Duration> {
        let mut allowed = want;
        if let Some(own) = self.own.as_mut() {
            allowed = own.take(allowed, now)?;
        }
        if let Some(shared) = &self.shared.bucket {
            let taken = match shared.lock() {
                Ok(mut b) => b.take(allowed, now),
                Err(_) => Ok(allowed),
            };
            match taken {
                Ok(n) => {
                    if let Some(own) = self.own.as_mut() {
                        own.tokens += (allowed - n) as f64;
                    }
                    allowed = n;
                }
                Err(wait) => {
                    if let Some(own) = self.own.as_mut() {
                        own.tokens += allowed as f64;
                    }
                    return Err(wait);
                }
            }
        }
        Ok(allowed)
    }

    /// Returns `n` unwritten bytes' tokens to both buckets.
    fn refund(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        if let Some(own) = self.own.as_mut() {
            own.tokens += n as f64;
        }
        if let Some(shared) = &self.shared.bucket {
            if let Ok(mut b) = shared.lock() {
                b.tokens += n as f64;
            }
        }
    }
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

impl MeteredStream {
    /// Paces `want` bytes, lets `write` send at most the bytes allowed, then counts what went
    /// out and returns the rest's tokens: the one path of plain and vectored writes.
    fn poll_paced(
        &mut self,
        cx: &mut Context<'_>,
        want: usize,
        write: impl FnOnce(Pin<&mut TcpStream>, &mut Context<'_>, usize) -> Poll<std::io::Result<usize>>,
    ) -> Poll<std::io::Result<usize>> {
        if self.doomed.load(Ordering::SeqCst) {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "fault: connection dropped",
            )));
        }
        if let Some(sleep) = self.sleep.as_mut() {
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.sleep = None;
        }
        let allowed = match self.pace(want, Instant::now()) {
            Ok(n) => n,
            Err(wait) => {
                let mut sleep = Box::pin(tokio::time::sleep(wait));
                if sleep.as_mut().poll(cx).is_ready() {
                    // Already over (a short wait on a busy machine): a Pending without a
                    // registered wake-up would leave this response stalled until the
                    // client gives up on it.
                    cx.waker().wake_by_ref();
                } else {
                    self.sleep = Some(sleep);
                }
                return Poll::Pending;
            }
        };
        let r = write(Pin::new(&mut self.inner), cx, allowed);
        // Tokens not used (a short or refused write) go back to the buckets.
        let written = match &r {
            Poll::Ready(Ok(n)) => *n,
            _ => 0,
        };
        self.refund(allowed - written.min(allowed));
        if let Poll::Ready(Ok(n)) = &r {
            self.written.fetch_add(*n as u64, Ordering::SeqCst);
            let shared = &self.shared;
            shared
                .counters
                .bytes_written
                .fetch_add(*n as u64, Ordering::SeqCst);
            shared.wrote.notify_waiters();
        }
        r
    }
}

impl AsyncWrite for MeteredStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.poll_paced(cx, buf.len(), |inner, cx, allowed| {
            inner.poll_write(cx, &buf[..allowed])
        })
    }

    /// Vectored, so that hyper queues a response's body pieces behind its head and hands them
    /// to one `writev` instead of first copying every byte into its own buffer.
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let want = bufs.iter().map(|b| b.len()).sum();
        self.poll_paced(cx, want, |inner, cx, allowed| {
            if allowed == want {
                return inner.poll_write_vectored(cx, bufs);
            }
            // The slices that fit in `allowed`, the last one cut short.
            let mut left = allowed;
            let mut fitted = Vec::with_capacity(bufs.len());
            for b in bufs {
                if left == 0 {
                    break;
                }
                let n = b.len().min(left);
                fitted.push(std::io::IoSlice::new(&b[..n]));
                left -= n;
            }
            inner.poll_write_vectored(cx, &fitted)
        })
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Connections' byte counters and kill switches, by id, for faults.
#[derive(Default)]
pub(crate) struct Connections(Mutex<Vec<ConnState>>);

struct ConnState {
    id: ConnId,
    written: Arc<AtomicU64>,
    doomed: Arc<AtomicBool>,
}

impl Connections {
    pub(crate) fn add(&self, id: ConnId, written: Arc<AtomicU64>, doomed: Arc<AtomicBool>) {
        if let Ok(mut v) = self.0.lock() {
            v.push(ConnState {
                id,
                written,
                doomed,
            });
        }
    }

    /// Bytes written so far on connection `id`.
    pub(crate) fn written(&self, id: ConnId) -> u64 {
        self.0
            .lock()
            .ok()
            .and_then(|v| {
                v.iter()
                    .find(|c| c.id == id)
                    .map(|c| c.written.load(Ordering::SeqCst))
            })
            .unwrap_or(0)
    }

    /// Makes the next write on connection `id` fail, which drops it.
    pub(crate) fn doom(&self, id: ConnId) {
        if let Ok(v) = self.0.lock() {
            if let Some(c) = v.iter().find(|c| c.id == id) {
                c.doomed.store(true, Ordering::SeqCst);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_paces_to_its_rate_in_real_pieces() {
        let t0 = Instant::now();
        let mut b = Bucket {
            rate: 1e6,
            tokens: 0.0,
            last: t0,
        };
        assert!(
            b.take(100_000, t0).is_err(),
            "an empty bucket makes the writer wait"
        );
        let n = b.take(100_000, t0 + Duration::from_millis(30)).unwrap();
        assert_eq!(n, 30_000, "30 ms at 1 MB/s is 30 kB");
        assert!(
            b.take(10, t0 + Duration::from_millis(30)).is_err(),
            "nothing left right after"
        );
        // A long idle time fills the bucket only up to its burst.
        let n = b.take(10_000_000, t0 + Duration::from_secs(60)).unwrap();
        assert_eq!(n, 65_536);
        // Waiting tells how long a 16 KiB piece takes to earn.
        let wait = b.take(100_000, t0 + Duration::from_secs(60)).unwrap_err();
        assert_eq!(wait, Duration::from_secs_f64(16_384.0 / 1e6));
    }
}
