//! The one HTTP/1.1 test server: tower-http's `ServeDir` (which implements `Range`, `HEAD` and
//! conditional requests itself; its files read in place: `files`) on axum/hyper with
//! keep-alive, bound to 127.0.0.1, with
//!
//! - a log of every request (connection, method, path, query, headers, status, length),
//! - counts of connections and bytes written,
//! - an emulated link ([`Link`]: bandwidth shared by all connections, latency per response and
//!   per new connection), for the demo and the benchmarks,
//! - faults ([`Fault`], [`Rule`]) served in place of the real answer to matching requests,
//! - a request rate limit ([`RateLimit`]: `503 SlowDown` or `429` above a rate), as an object
//!   store has.
//!
//! ```no_run
//! let dir = std::path::Path::new("fixtures");
//! let server = testkit::Server::start(dir).unwrap();
//! server.add_rule(testkit::Rule {
//!     path: "/conformance/data/rand.bam".into(),
//!     fault: testkit::Fault::status(503),
//!     times: Some(2),
//! });
//! println!("{}", server.url("conformance/data/rand.bam"));
//! ```

mod chaos;
mod faults;
mod files;
mod limit;
mod link;
mod proxy;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use tokio::net::TcpListener;
use tokio::sync::Notify;

pub use chaos::Chaos;
pub use faults::{Fault, Rule};
pub use limit::{least_time, RateLimit, Refusal};
pub use link::{ConnId, Link};

use faults::Armed;
use link::{Bucket, Connections, CountingListener};

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// The serial number of its connection (1 for the first connection).
    pub connection: u64,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub range: Option<String>,
    /// Every request header, names in lower case.
    pub headers: Vec<(String, String)>,
    pub status: u16,
    /// The `Content-Length` the server advertised (0 when there was none).
    pub content_length: u64,
    /// The fault served in place of the file server's answer, if any.
    pub fault: Option<Fault>,
    /// When the request arrived (entries are logged in the order they were answered).
    pub arrived: std::time::Instant,
    /// When the response's head was ready to go (after the link's first-byte delay and the
    /// file server's or, in proxy mode, the upstream server's answer).
    pub answered: std::time::Instant,
}

impl LogEntry {
    /// The value of request header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `Range` as an inclusive pair, when it is a bounded `bytes=A-B`.
    pub fn bounded_range(&self) -> Option<(u64, u64)> {
        let (a, b) = self
            .range
            .as_deref()?
            .strip_prefix("bytes=")?
            .split_once('-')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    }

    /// Whether this request is one htslib makes to read a BAM's header and no record: its first
    /// 64 KiB (or less), or the 28-byte EOF marker at its end.
    pub fn is_header_or_eof(&self) -> bool {
        let header = self
            .bounded_range()
            .is_some_and(|(b, end)| b == 0 && end < 64 * 1024);
        header || self.range.as_deref() == Some("bytes=-28")
    }

    /// True for a `Range` that names its end: `bytes=A-B`, or a suffix `bytes=-N` (the last N
    /// bytes).
    pub fn is_bounded(&self) -> bool {
        self.bounded_range().is_some()
            || self
                .range
                .as_deref()
                .and_then(|r| r.strip_prefix("bytes=-"))
                .is_some_and(|n| n.parse::<u64>().is_ok())
    }
}

/// What the server counted.
#[derive(Debug, Default)]
pub struct Counters {
    connections: AtomicU64,
    bytes_written: AtomicU64,
    log: Mutex<Vec<LogEntry>>,
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

/// State shared by the handlers and the connections of one server.
pub(crate) struct Shared {
    counters: Counters,
    link: Link,
    bucket: Option<Mutex<Bucket>>,
    root: PathBuf,
    rules: Mutex<Vec<Armed>>,
    chaos: Mutex<Vec<chaos::Armed>>,
    limiter: Mutex<Option<limit::Limiter>>,
    connections: Connections,
    /// Notified whenever bytes are written on any connection.
    wrote: Notify,
}

/// A running server; dropping it stops it.
pub struct Server {
    addr: std::net::SocketAddr,
    shared: Arc<Shared>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Server {
    /// Serves `root` on 127.0.0.1 at a free port.
    pub fn start(root: &Path) -> Result<Server, String> {
        Server::start_with(root, 0, Link::default())
    }

    /// Serves `root` on 127.0.0.1 at `port` (0: any free port) through an emulated link.
    pub fn start_with(root: &Path, port: u16, link: Link) -> Result<Server, String> {
        let files = axum::Router::new().fallback_service(
            tower_http::services::ServeDir::with_backend(root, files::InPlace),
        );
        Server::start_routes(files, root, port, link)
    }

    /// Forwards every request to `upstream` (another HTTP server on this machine), unchanged and
    /// `Host` included, with this server's log, counters, faults and link in front of it.
    pub fn start_proxy(
        upstream: std::net::SocketAddr,
        port: u16,
        link: Link,
    ) -> Result<Server, String> {
        Server::start_routes(proxy::routes(upstream), Path::new(""), port, link)
    }

    /// Serves `routes` behind the log, the faults (whose files come from `root`) and the link.
    fn start_routes(
        routes: axum::Router,
        root: &Path,
        port: u16,
        link: Link,
    ) -> Result<Server, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the server runtime: {e}"))?;
        let listener = runtime
            .block_on(TcpListener::bind(("127.0.0.1", port)))
            .map_err(|e| format!("cannot bind 127.0.0.1:{port}: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let shared = Arc::new(Shared {
            counters: Counters::default(),
            link,
            bucket: link.bandwidth.map(|rate| Mutex::new(Bucket::new(rate))),
            root: root.to_path_buf(),
            rules: Mutex::new(Vec::new()),
            chaos: Mutex::new(Vec::new()),
            limiter: Mutex::new(None),
            connections: Connections::default(),
            wrote: Notify::new(),
        });
        let app = routes.layer(middleware::from_fn_with_state(shared.clone(), handle));
        let listener = CountingListener {
            inner: listener,
            shared: shared.clone(),
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
            shared,
            runtime: Some(runtime),
        })
    }

    /// `http://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{}", self.addr, path.trim_start_matches('/'))
    }

    /// The address the server listens on (127.0.0.1).
    pub fn addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, without a final slash.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Adds a fault rule; rules are tried in the order added, the first match applies.
    pub fn add_rule(&self, rule: Rule) {
        if let Ok(mut rules) = self.shared.rules.lock() {
            rules.push(Armed { rule, hits: 0 });
        }
    }

    /// Adds scattered faults, tried after the rules.
    pub fn add_chaos(&self, chaos: Chaos) {
        if let Ok(mut all) = self.shared.chaos.lock() {
            all.push(chaos::Armed::new(chaos));
        }
    }

    /// Refuses requests above `limit`'s rate (before any rule), or stops refusing (`None`).
    /// Refusals are logged as faults.
    pub fn set_rate_limit(&self, limit: Option<RateLimit>) {
        if let Ok(mut l) = self.shared.limiter.lock() {
            *l = limit.map(limit::Limiter::new);
        }
    }

    /// Removes every fault rule and every [`Chaos`].
    pub fn clear_rules(&self) {
        if let Ok(mut rules) = self.shared.rules.lock() {
            rules.clear();
        }
        if let Ok(mut all) = self.shared.chaos.lock() {
            all.clear();
        }
    }

    /// How many requests so far were answered by a fault (see [`LogEntry::fault`]).
    pub fn faults_served(&self) -> usize {
        self.log().iter().filter(|e| e.fault.is_some()).count()
    }

    /// Every request so far, in the order they were answered.
    pub fn log(&self) -> Vec<LogEntry> {
        self.shared
            .counters
            .log
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// Every request since the last call (or the start), removed from the log: for long runs
    /// that count as they go and must not hold every entry.
    pub fn take_log(&self) -> Vec<LogEntry> {
        self.shared
            .counters
            .log
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default()
    }

    /// The `Range` headers of the requests for `path`, in order.
    pub fn ranges(&self, path: &str) -> Vec<Option<String>> {
        self.log()
            .into_iter()
            .filter(|e| e.path == path)
            .map(|e| e.range)
            .collect()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.counters.connections.load(Ordering::SeqCst)
    }

    /// Bytes written to sockets so far (headers included).
    pub fn bytes_written(&self) -> u64 {
        self.shared.counters.bytes_written.load(Ordering::SeqCst)
    }

    /// Forgets the log and the counts (rules stay).
    pub fn reset(&self) {
        let c = &self.shared.counters;
        c.connections.store(0, Ordering::SeqCst);
        c.bytes_written.store(0, Ordering::SeqCst);
        if let Ok(mut l) = c.log.lock() {
            l.clear();
        }
    }

    /// The summary once nothing has changed for 200 ms (at most 5 s): a client that exits with
    /// requests still running leaves them to end after it.
    pub fn settled_summary(&self) -> Summary {
        let mut last = self.summary();
        for _ in 0..25 {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let now = self.summary();
            if now == last {
                break;
            }
            last = now;
        }
        last
    }

    /// A one-line summary: requests, bytes, connections, and whether every Range was bounded.
    pub fn summary(&self) -> Summary {
        let entries = self.log();
        let gets = entries.iter().filter(|e| e.method == "GET").count();
        let unbounded = entries
            .iter()
            .filter(|e| e.method == "GET" && !e.is_bounded())
            .count();
        Summary {
            requests: entries.len(),
            gets,
            unbounded,
            advertised: entries.iter().map(|e| e.content_length).sum(),
            written: self.bytes_written(),
            connections: self.connections(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// The fault of the first rule matching `path` (and, for [`Fault::OnRange`], the request's
/// first byte), counting the hit; else a [`Chaos`] draw.
fn matching_fault(shared: &Shared, path: &str, headers: &axum::http::HeaderMap) -> Option<Fault> {
    let start = faults::range_start(headers);
    let ruled = shared.rules.lock().ok().and_then(|mut rules| {
        let armed = rules.iter_mut().find(|a| {
            let range_fits = match &a.rule.fault {
                Fault::OnRange { start: s, .. } => start == Some(*s),
                _ => true,
            };
            a.rule.path == path && range_fits && a.rule.times.is_none_or(|n| a.hits < n)
        })?;
        armed.hits += 1;
        Some(armed.rule.fault.clone())
    });
    if ruled.is_some() {
        return ruled;
    }
    let mut all = shared.chaos.lock().ok()?;
    all.iter_mut().find_map(|c| c.draw(path))
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(conn): ConnectInfo<ConnId>,
    request: Request,
    next: Next,
) -> Response {
    let arrived = std::time::Instant::now();
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let query = request.uri().query().map(str::to_string);
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let range = request
        .headers()
        .get("range")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if !shared.link.latency.is_zero() {
        tokio::time::sleep(shared.link.latency).await;
    }
    let limited = shared
        .limiter
        .lock()
        .ok()
        .and_then(|mut l| l.as_mut()?.admit(std::time::Instant::now()));
    let fault = limited.or_else(|| matching_fault(&shared, &path, request.headers()));
    let mut response = None;
    if let Some(fault) = &fault {
        let root = shared.root.clone();
        response = faults::answer(
            fault,
            &shared,
            conn,
            &root,
            &method,
            &path,
            request.headers(),
        )
        .await;
    }
    // A fault that let the file server answer (a delay, a range it does not apply to) is
    // not logged as one.
    let (response, fault) = match response {
        Some(r) => (r, fault),
        None => (next.run(request).await, None),
    };
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
        query,
        range,
        headers,
        status: response.status().as_u16(),
        content_length,
        fault,
        arrived,
        answered: std::time::Instant::now(),
    };
    if let Ok(mut log) = shared.counters.log.lock() {
        log.push(entry);
    }
    response
}
