//! HTTP(S) through libcurl: bounded `Range` requests on one reused connection.
//!
//! One request fills one in-memory window `[start, end)`; reads are served from it. The window is
//! never larger than [`OpenOptions::request_size`], so memory stays bounded, and every body is read
//! to its end, so libcurl can keep the connection for the next request.

use std::time::{Duration, Instant};

use curl::easy::{Easy2, Handler, InfoType, List, WriteError};

use crate::hook::{explain_refusal, Refusal, Request};
use crate::redact::{is_presigned, redact_url as redact};
use crate::stats::{self, TransferStats};
use crate::{Backend, Error, OpenOptions, RangeMode, Result};

/// The first request past a readahead limit asks for this much; each further one in a row
/// doubles it, up to the request size. A limit slightly too short then costs little.
const OVERRUN_START: u64 = 64 * 1024;
/// Error pages are read (and discarded) up to this size; beyond it the transfer is abandoned.
const ERROR_BODY_CAP: u64 = 1024 * 1024;
/// The start of an error page kept for its message (an object store's XML error is far smaller).
const ERROR_BODY_KEEP: usize = 64 * 1024;
/// No single backoff sleep is longer than this.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

pub(crate) fn open_http(location: &str, options: &OpenOptions) -> Result<Box<dyn Backend>> {
    Ok(Box::new(HttpBackend::open(location, options)?))
}

/// An HTTP(S) object read with `Range` requests.
///
/// Opening sends nothing; the first read (or [`Backend::size`]) does. Each read outside the
/// current window sends `Range: bytes=X-Y` with `Y + 1` the readahead limit (or `X` plus the
/// request size when there is none), so a request is never open-ended in the default
/// [`RangeMode::Bounded`]. Every response is checked against the request; transient failures are
/// retried with exponential backoff and resume at the byte where they broke.
pub struct HttpBackend {
    url: String,
    /// The URL for messages (no query string: it may hold a signature).
    display: String,
    /// Request state and the window; moved into a pooled curl handle for each request.
    collector: Collector,
    options: OpenOptions,
    pos: u64,
    limit: Option<u64>,
    size: Option<u64>,
    /// File offset of the first byte of the window (`collector.body`).
    window_start: u64,
    overrun: u64,
    stats: TransferStats,
    /// The next window of a span larger than one request, being fetched on another thread
    /// while this one is consumed, so that transfer and decoding overlap.
    prefetch: Option<Prefetch>,
    /// False on the prefetching threads' own backends (one window ahead, not a chain).
    may_prefetch: bool,
}

/// A window fetched ahead: its start, and the thread bringing its bytes (and the size learnt).
struct Prefetch {
    start: u64,
    handle: std::thread::JoinHandle<Option<(Vec<u8>, Option<u64>)>>,
}

impl std::fmt::Debug for HttpBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpBackend")
            .field("url", &redact(&self.url))
            .field("pos", &self.pos)
            .field("size", &self.size)
            .finish()
    }
}

/// What the write callback decided on its own.
#[derive(Debug)]
enum Verdict {
    /// Everything asked for has arrived; the rest of the body is not wanted.
    Enough,
    /// The response does not fit the request.
    Protocol(String),
}

/// The state libcurl's callbacks fill during one request.
#[derive(Default)]
struct Collector {
    expect_start: u64,
    /// Exclusive end asked for; `None`: open-ended.
    expect_end: Option<u64>,
    known_size: Option<u64>,
    /// Body bytes still acceptable in this attempt.
    want: u64,
    status: u32,
    reason: String,
    content_range: Option<String>,
    content_length: Option<u64>,
    retry_after: Option<u64>,
    /// Every header of the current response, for a hook's reading of a refusal.
    headers: Vec<(String, String)>,
    /// The start of an error response's body.
    error_body: Vec<u8>,
    checked: bool,
    verdict: Option<Verdict>,
    accepted: u64,
    arrived: u64,
    /// The object's size as this response tells it.
    total: Option<u64>,
    /// The window: bytes kept across the attempts of one request.
    body: Vec<u8>,
}

impl Collector {
    fn begin(&mut self, start: u64, end: Option<u64>, known_size: Option<u64>, want: u64) {
        self.expect_start = start;
        self.expect_end = end;
        self.known_size = known_size;
        self.want = want;
        self.reset_response();
        self.verdict = None;
        self.accepted = 0;
        self.arrived = 0;
    }

    fn reset_response(&mut self) {
        self.status = 0;
        self.reason.clear();
        self.content_range = None;
        self.content_length = None;
        self.retry_after = None;
        self.headers.clear();
        self.error_body.clear();
        self.checked = false;
        self.total = None;
    }

    /// Checks the status and headers of the response whose body is starting.
    fn check_headers(&mut self) -> std::result::Result<(), String> {
        match self.status {
            206 => {
                let header = self
                    .content_range
                    .as_deref()
                    .ok_or("206 response without Content-Range")?;
                if header.trim_end().ends_with("/0") && self.expect_start == 0 {
                    // An empty object: some servers answer 206 with a degenerate span.
                    self.total = Some(0);
                    self.want = 0;
                    return Ok(());
                }
                let (first, last, total) = parse_content_range(header)
                    .ok_or_else(|| format!("unreadable Content-Range '{header}'"))?;
                let (first, last) = first
                    .zip(last)
                    .ok_or_else(|| format!("206 with Content-Range '{header}'"))?;
                if first != self.expect_start || last < first {
                    return Err(format!(
                        "Content-Range '{header}' does not start at the requested byte {}",
                        self.expect_start
                    ));
                }
                if let Some(total) = total {
                    if last >= total {
                        return Err(format!("Content-Range '{header}' ends past its total"));
                    }
                    if let Some(known) = self.known_size.filter(|&k| k != total) {
                        return Err(format!(
                            "object size changed from {known} to {total} (Content-Range '{header}')"
                        ));
                    }
                }
                let clamped = total.is_some_and(|t| last + 1 == t);
                match self.expect_end {
                    Some(end) => {
                        if last + 1 > end || (last + 1 < end && !clamped) {
                            return Err(format!(
                                "Content-Range '{header}' does not match the requested bytes {}-{}",
                                self.expect_start,
                                end - 1
                            ));
                        }
                    }
                    None => {
                        if total.is_some() && !clamped {
                            return Err(format!(
                                "Content-Range '{header}' does not run to the end of an open-ended request"
                            ));
                        }
                    }
                }
                if last + 1 - first < self.want {
                    self.want = last + 1 - first;
                }
                self.total = total;
                Ok(())
            }
            200 => {
                if self.expect_start > 0 {
                    return Err(format!(
                        "the server ignored the Range header (200 for bytes from {})",
                        self.expect_start
                    ));
                }
                self.total = self.content_length;
                Ok(())
            }
            416 => {
                self.total = self
                    .content_range
                    .as_deref()
                    .and_then(parse_content_range)
                    .and_then(|(_, _, total)| total);
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl Handler for Collector {
    fn write(&mut self, data: &[u8]) -> std::result::Result<usize, WriteError> {
        self.arrived += data.len() as u64;
        if !self.checked {
            self.checked = true;
            if let Err(message) = self.check_headers() {
                self.verdict = Some(Verdict::Protocol(message));
                return Ok(0);
            }
        }
        if !matches!(self.status, 200 | 206) {
            // An error page: only its start is kept (for the message), but reading it lets the
            // connection be reused.
            let keep = ERROR_BODY_KEEP
                .saturating_sub(self.error_body.len())
                .min(data.len());
            self.error_body.extend_from_slice(&data[..keep]);
            return Ok(if self.arrived > ERROR_BODY_CAP {
                0
            } else {
                data.len()
            });
        }
        let room = self.want - self.accepted;
        if data.len() as u64 > room {
            if self.status == 206 && self.expect_end.is_some() {
                self.verdict = Some(Verdict::Protocol(format!(
                    "the body is longer than the {} bytes asked for",
                    self.accepted + room
                )));
                return Ok(0);
            }
            // A 200 to a request at 0, or an open-ended range: keep what was asked, stop there.
            self.body.extend_from_slice(&data[..room as usize]);
            self.accepted += room;
            self.verdict = Some(Verdict::Enough);
            return Ok(0);
        }
        self.body.extend_from_slice(data);
        self.accepted += data.len() as u64;
        Ok(data.len())
    }

    /// libcurl's trace (verbosity 3 and up), without credentials: libcurl's own printer would
    /// show `Authorization` headers and signed query strings.
    fn debug(&mut self, kind: InfoType, data: &[u8]) {
        let prefix = match kind {
            InfoType::Text => "*",
            InfoType::HeaderIn => "<",
            InfoType::HeaderOut => ">",
            _ => {
                eprintln!("{{ ({} bytes of data)", data.len());
                return;
            }
        };
        let text = crate::redact::redact_text(&String::from_utf8_lossy(data));
        eprint!("{prefix} {text}");
    }

    fn header(&mut self, data: &[u8]) -> bool {
        let line = String::from_utf8_lossy(data);
        let line = line.trim_end();
        if line.starts_with("HTTP/") {
            // A new response (the first, or the target of a redirect).
            self.reset_response();
            let mut parts = line.splitn(3, ' ');
            parts.next();
            self.status = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            self.reason = parts.next().unwrap_or("").to_string();
        } else if let Some((key, value)) = line.split_once(':') {
            let value = value.trim();
            if self.headers.len() < 100 {
                self.headers
                    .push((key.trim().to_string(), value.to_string()));
            }
            match key.trim().to_ascii_lowercase().as_str() {
                "content-range" => self.content_range = Some(value.to_string()),
                "content-length" => self.content_length = value.parse().ok(),
                "retry-after" => self.retry_after = value.parse().ok(),
                _ => {}
            }
        }
        true
    }
}

/// `bytes A-B/T`, `bytes */T`, `bytes A-B/*` as (A, B, T).
fn parse_content_range(value: &str) -> Option<(Option<u64>, Option<u64>, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes")?.trim_start();
    let (span, total) = rest.split_once('/')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    let (first, last) = match span.trim() {
        "*" => (None, None),
        s => {
            let (a, b) = s.split_once('-')?;
            (Some(a.trim().parse().ok()?), Some(b.trim().parse().ok()?))
        }
    };
    Some((first, last, total))
}

/// The outcome of one attempt.
enum Attempt {
    Done,
    Eof,
    Retry(String),
    Fail(Error),
}

/// Settings of one backend on a (possibly pooled) handle; set before each request, since the
/// handle may have served another backend last.
fn configure(
    easy: &mut Easy2<Collector>,
    url: &str,
    options: &OpenOptions,
) -> std::result::Result<(), curl::Error> {
    // Used verbatim: a pre-signed URL's query string must reach the server unchanged.
    easy.url(url)?;
    easy.path_as_is(true)?;
    // Off when no redirect may be followed: a store that signs requests answers its own.
    easy.follow_location(options.max_redirects > 0)?;
    easy.max_redirections(options.max_redirects)?;
    easy.connect_timeout(options.connect_timeout)?;
    easy.low_speed_limit(options.low_speed_limit)?;
    easy.low_speed_time(options.low_speed_time)?;
    easy.useragent(concat!("hfile/", env!("CARGO_PKG_VERSION")))?;
    easy.signal(false)?;
    easy.verbose(options.verbosity >= 3)?;
    let bundle = ["CURL_CA_BUNDLE", "SSL_CERT_FILE"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty());
    if let Some(bundle) = bundle {
        easy.cainfo(bundle)?;
    }
    if let Some(dir) = std::env::var_os("SSL_CERT_DIR").filter(|v| !v.is_empty()) {
        easy.capath(dir)?;
    }
    Ok(())
}

/// Idle curl handles. libcurl keeps a connection cache in each handle, so a request that takes
/// the handle the previous request used goes out on the same connection: one connection for the
/// BAM, its index and the EOF probe. A handle serves one request at a time, on one thread, so
/// concurrent readers each get their own handle and connection (libcurl forbids sharing one
/// connection cache between threads).
mod pool {
    use std::sync::Mutex;

    use curl::easy::Easy2;

    use super::Collector;

    const MAX_IDLE: usize = 16;

    static IDLE: Mutex<Vec<Easy2<Collector>>> = Mutex::new(Vec::new());

    pub(super) fn check_out() -> Easy2<Collector> {
        let mut idle = IDLE.lock().unwrap_or_else(|p| p.into_inner());
        idle.pop()
            .unwrap_or_else(|| Easy2::new(Collector::default()))
    }

    pub(super) fn check_in(easy: Easy2<Collector>) {
        let mut idle = IDLE.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(easy);
        }
    }
}

impl HttpBackend {
    /// Prepares a handle on `url`; nothing is sent until the first read or size query.
    pub fn open(url: &str, options: &OpenOptions) -> Result<HttpBackend> {
        // Fail early on settings libcurl refuses, rather than at the first read.
        let mut easy = pool::check_out();
        let configured = configure(&mut easy, url, options);
        pool::check_in(easy);
        configured.map_err(|e| Error::Open {
            name: url.to_string(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()),
        })?;
        Ok(HttpBackend {
            url: url.to_string(),
            display: redact(url),
            collector: Collector::default(),
            options: options.clone(),
            pos: 0,
            limit: None,
            size: None,
            window_start: 0,
            overrun: OVERRUN_START,
            prefetch: None,
            may_prefetch: true,
            stats: TransferStats::default(),
        })
    }

    /// What this backend's requests have cost so far.
    pub fn stats(&self) -> TransferStats {
        self.stats
    }

    fn window_len(&self) -> u64 {
        self.collector.body.len() as u64
    }

    fn in_window(&self) -> bool {
        self.pos >= self.window_start && self.pos - self.window_start < self.window_len()
    }

    /// Fills the window at the current position (from a finished prefetch if one is there);
    /// false at the end of the object.
    fn fill_window(&mut self) -> Result<bool> {
        if let Some(p) = self.prefetch.take() {
            // A prefetch for somewhere else (after a seek) is left to finish on its own: it is
            // one bounded request. One that failed is simply fetched again here, with retries.
            if p.start == self.pos {
                if let Ok(Some((body, size))) = p.handle.join() {
                    if !body.is_empty() {
                        self.window_start = p.start;
                        self.collector.body = body;
                        self.size = self.size.or(size);
                        self.overrun = OVERRUN_START;
                        self.start_prefetch();
                        return Ok(true);
                    }
                }
            }
        }
        let filled = self.fetch_window()?;
        if filled {
            self.start_prefetch();
        }
        Ok(filled)
    }

    /// When the limit reaches past this window, starts fetching the next window of the span on
    /// another thread (its own pooled handle, so at most one more connection).
    fn start_prefetch(&mut self) {
        if !self.may_prefetch || self.options.range_mode != RangeMode::Bounded {
            return;
        }
        let next = self.window_start + self.window_len();
        let (Some(limit), Some(size)) = (self.limit, self.size) else {
            return;
        };
        if next >= limit.min(size) {
            return;
        }
        let (url, options) = (self.url.clone(), self.options.clone());
        let spawned = std::thread::Builder::new()
            .name("hfile-prefetch".into())
            .spawn(move || {
                let mut ahead = HttpBackend::open(&url, &options).ok()?;
                ahead.may_prefetch = false;
                ahead.size = Some(size);
                ahead.pos = next;
                ahead.limit = Some(limit);
                match ahead.fetch_window() {
                    Ok(true) => Some((std::mem::take(&mut ahead.collector.body), ahead.size)),
                    _ => None,
                }
            });
        if let Ok(handle) = spawned {
            self.prefetch = Some(Prefetch {
                start: next,
                handle,
            });
        }
    }

    /// Fetches a window at the current position; false at the end of the object.
    fn fetch_window(&mut self) -> Result<bool> {
        let start = self.pos;
        let request = self.options.request_size.max(1);
        let mut end = match self.limit {
            Some(limit) if limit > start => {
                self.overrun = OVERRUN_START;
                limit.min(start.saturating_add(request))
            }
            Some(_) => {
                // Reading past the hint: ask for a little, more if it keeps happening.
                let n = self.overrun.min(request);
                self.overrun = self.overrun.saturating_mul(2);
                start.saturating_add(n)
            }
            None => start.saturating_add(request),
        };
        if let Some(size) = self.size {
            end = end.min(size);
        }
        let open_end = match self.options.range_mode {
            RangeMode::Bounded => Some(end),
            RangeMode::Unbounded => None,
        };
        self.window_start = start;
        self.collector.body.clear();
        self.run(start, open_end, end - start, false)?;
        Ok(self.window_len() > 0)
    }

    /// One request with its retries: bytes `[start, end)` (or `start..` when `end` is `None`),
    /// keeping at most `want` bytes, appended to the window. A HEAD when `head`.
    fn run(&mut self, start: u64, end: Option<u64>, want: u64, head: bool) -> Result<()> {
        let first = Instant::now();
        let mut failures = 0u32;
        loop {
            let kept = if head { 0 } else { self.window_len() };
            let from = start + kept;
            match self.attempt(from, end, want - kept, head) {
                Attempt::Done => return Ok(()),
                Attempt::Eof if kept == 0 => return Ok(()),
                Attempt::Eof => {
                    return Err(Error::Protocol {
                        name: self.url.clone(),
                        offset: from,
                        message: "416 while resuming: the object shrank".to_string(),
                    })
                }
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry(message) => {
                    failures += 1;
                    let mut delay = self
                        .options
                        .retry_backoff
                        .saturating_mul(1u32 << (failures - 1).min(20))
                        .min(MAX_BACKOFF);
                    if let Some(secs) = self.collector.retry_after {
                        delay = delay.max(Duration::from_secs(secs).min(MAX_BACKOFF));
                    }
                    if failures > self.options.retries
                        || first.elapsed() + delay > self.options.retry_max_time
                    {
                        return Err(Error::Remote {
                            name: self.url.clone(),
                            offset: from,
                            message: format!("{message} (gave up after {failures} attempts)"),
                        });
                    }
                    if self.options.verbosity >= 1 {
                        eprintln!(
                            "[hfile] {}: {message}; retry {failures} in {} ms from byte {from}",
                            redact(&self.url),
                            delay.as_millis()
                        );
                    }
                    std::thread::sleep(delay);
                }
            }
        }
    }

    fn attempt(&mut self, from: u64, end: Option<u64>, want: u64, head: bool) -> Attempt {
        let mut easy = pool::check_out();
        if let Err(e) = configure(&mut easy, &self.url, &self.options) {
            return Attempt::Fail(self.remote(from, format!("cannot set up the request: {e}")));
        }
        std::mem::swap(easy.get_mut(), &mut self.collector);
        let outcome = self.attempt_on(&mut easy, from, end, want, head);
        std::mem::swap(easy.get_mut(), &mut self.collector);
        pool::check_in(easy);
        outcome
    }

    fn attempt_on(
        &mut self,
        easy: &mut Easy2<Collector>,
        from: u64,
        end: Option<u64>,
        want: u64,
        head: bool,
    ) -> Attempt {
        let unbounded = self.options.range_mode == RangeMode::Unbounded && !head;
        let range = match (head, end) {
            (true, _) => None,
            (false, Some(end)) => Some(format!("bytes={from}-{}", end - 1)),
            (false, None) => Some(format!("bytes={from}-")),
        };
        let known_size = self.size;
        easy.get_mut().begin(from, end, known_size, want);
        let method = if head { "HEAD" } else { "GET" };
        let hooked = match &self.options.hook {
            Some(hook) => hook.headers(&Request {
                method,
                url: &self.url,
                range: range.as_deref(),
            }),
            None => Ok(Vec::new()),
        };
        let hooked = match hooked {
            Ok(headers) => headers,
            Err(message) => return Attempt::Fail(self.remote(from, message)),
        };
        if let Err(e) = self.prepare(easy, range.as_deref(), &hooked, head, unbounded) {
            return Attempt::Fail(self.remote(from, format!("cannot set up the request: {e}")));
        }
        let shown = format!(
            "{method} {}{}",
            redact(&self.url),
            range
                .as_deref()
                .map(|r| format!(" Range: {r}"))
                .unwrap_or_default()
        );
        if self.options.verbosity >= 1 {
            eprintln!("[hfile] {shown}");
        }
        let result = easy.perform();
        if head {
            // Later requests are GETs again.
            let _ = easy.nobody(false);
            let _ = easy.get(true);
        }

        let connects = easy.num_connects().unwrap_or(0);
        let collector = easy.get_mut();
        if !collector.checked && !head {
            // An empty body never reached the write callback: check its headers now.
            collector.checked = true;
            if let Err(message) = collector.check_headers() {
                collector.verdict = Some(Verdict::Protocol(message));
            }
        }
        let verdict = collector.verdict.take();
        let status = collector.status;
        let one = TransferStats {
            requests: 1,
            bytes_received: collector.arrived,
            new_connections: connects,
            reused_connections: u64::from(connects == 0 && status != 0),
            unbounded_requests: u64::from(unbounded),
        };
        let (accepted, want_now, total, reason) = (
            collector.accepted,
            collector.want,
            collector.total,
            collector.reason.clone(),
        );
        let content_length = collector.content_length;
        let refusal_message = if status >= 300 && !matches!(status, 416) {
            let refusal = Refusal {
                status,
                headers: &collector.headers,
                body: &collector.error_body,
                presigned: is_presigned(&self.url),
            };
            self.options
                .hook
                .as_ref()
                .and_then(|hook| hook.explain(&refusal))
                .or_else(|| explain_refusal(&refusal))
        } else {
            None
        };
        self.stats.add(&one);
        stats::record(&one);
        if let Some(total) = total {
            self.size = Some(total);
        }
        if self.options.verbosity >= 1 {
            let connection = match (status, connects) {
                (0, _) => "no response",
                (_, 0) => "connection reused",
                _ => "new connection",
            };
            let outcome = match &result {
                Ok(()) => String::new(),
                Err(_) if matches!(verdict, Some(Verdict::Enough)) => ", rest abandoned".into(),
                Err(e) => format!(", {}", e.description()),
            };
            eprintln!("[hfile] {shown} -> {status}, {accepted} bytes, {connection}{outcome}");
        }

        match verdict {
            Some(Verdict::Protocol(message)) => {
                return Attempt::Fail(Error::Protocol {
                    name: self.url.clone(),
                    offset: from,
                    message,
                })
            }
            Some(Verdict::Enough) => return Attempt::Done,
            None => {}
        }
        if let Err(e) = result {
            let aborted_error_page = e.is_write_error() && status >= 300;
            if !aborted_error_page {
                let transient = e.is_couldnt_connect()
                    || e.is_operation_timedout()
                    || e.is_partial_file()
                    || e.is_got_nothing()
                    || e.is_send_error()
                    || e.is_recv_error()
                    || e.is_http2_error()
                    || e.is_http2_stream_error();
                let message = format!("{e}");
                return if transient {
                    Attempt::Retry(message)
                } else {
                    Attempt::Fail(self.remote(from, message))
                };
            }
        }
        match status {
            200 | 204 if head => match content_length {
                Some(len) => {
                    self.size = Some(len);
                    Attempt::Done
                }
                None => Attempt::Fail(Error::Protocol {
                    name: self.url.clone(),
                    offset: from,
                    message: "HEAD response without Content-Length".into(),
                }),
            },
            206 if accepted < want_now => Attempt::Retry(format!(
                "short body: {accepted} of {want_now} bytes arrived"
            )),
            206 => Attempt::Done,
            200 => {
                if accepted < want_now {
                    // The whole object arrived and was smaller than the request.
                    self.size = Some(accepted);
                }
                Attempt::Done
            }
            416 => Attempt::Eof,
            408 | 429 | 500..=599 => Attempt::Retry(format!(
                "HTTP status {status} {}",
                refusal_message.unwrap_or(reason)
            )),
            _ => Attempt::Fail(Error::Status {
                name: self.url.clone(),
                offset: from,
                status,
                message: match refusal_message {
                    Some(message) => message,
                    None if reason.is_empty() => format!("{method} refused"),
                    None => reason,
                },
            }),
        }
    }

    fn prepare(
        &self,
        easy: &mut Easy2<Collector>,
        range: Option<&str>,
        hooked: &[(String, String)],
        head: bool,
        unbounded: bool,
    ) -> std::result::Result<(), curl::Error> {
        let mut list = List::new();
        for (key, value) in self.options.headers.iter().chain(hooked) {
            list.append(&format!("{key}: {value}"))?;
        }
        if let Some(range) = range {
            list.append(&format!("Range: {range}"))?;
        }
        easy.http_headers(list)?;
        easy.nobody(head)?;
        easy.fresh_connect(unbounded)?;
        easy.forbid_reuse(unbounded)?;
        Ok(())
    }

    fn remote(&self, offset: u64, message: String) -> Error {
        Error::Remote {
            name: self.url.clone(),
            offset,
            message,
        }
    }

    fn probe_size(&mut self) -> Result<u64> {
        match self.run(0, None, 0, true) {
            Ok(()) => {}
            // Pre-signed URLs are often signed for GET only: ask for one byte instead.
            Err(Error::Status {
                status: 400 | 403 | 405,
                ..
            }) => {}
            Err(Error::Protocol { .. }) => {}
            Err(e) => return Err(e),
        }
        if let Some(size) = self.size {
            return Ok(size);
        }
        self.window_start = 0;
        self.collector.body.clear();
        self.run(0, Some(1), 1, false)?;
        match self.size {
            Some(size) => Ok(size),
            None if self.window_len() == 0 => {
                self.size = Some(0);
                Ok(0)
            }
            None => Err(Error::Protocol {
                name: self.url.clone(),
                offset: 0,
                message: "the server does not tell the object's size".into(),
            }),
        }
    }
}

impl Backend for HttpBackend {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() || self.size.is_some_and(|s| self.pos >= s) {
            return Ok(0);
        }
        if !self.in_window() && !self.fill_window()? {
            return Ok(0);
        }
        let offset = (self.pos - self.window_start) as usize;
        let window = &self.collector.body[offset..];
        let n = window.len().min(buf.len());
        buf[..n].copy_from_slice(&window[..n]);
        self.pos += n as u64;
        Ok(n)
    }

    fn seek(&mut self, pos: u64) -> Result<()> {
        // Nothing is sent here: the next read decides whether the window still serves.
        self.pos = pos;
        Ok(())
    }

    fn position(&self) -> u64 {
        self.pos
    }

    fn size(&mut self) -> Result<u64> {
        match self.size {
            Some(size) => Ok(size),
            None => self.probe_size(),
        }
    }

    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        self.limit = limit;
        self.overrun = OVERRUN_START;
    }

    fn name(&self) -> &str {
        &self.display
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range_forms() {
        assert_eq!(
            parse_content_range("bytes 0-99/1000"),
            Some((Some(0), Some(99), Some(1000)))
        );
        assert_eq!(
            parse_content_range("bytes */1000"),
            Some((None, None, Some(1000)))
        );
        assert_eq!(
            parse_content_range("bytes 5-9/*"),
            Some((Some(5), Some(9), None))
        );
        assert_eq!(parse_content_range("items 0-1/2"), None);
        assert_eq!(parse_content_range("bytes 0-x/2"), None);
    }

    fn collector(start: u64, end: Option<u64>, want: u64, range: &str) -> Collector {
        let mut c = Collector::default();
        c.begin(start, end, None, want);
        c.status = 206;
        c.content_range = Some(range.to_string());
        c
    }

    #[test]
    fn range_checks() {
        assert!(collector(10, Some(20), 10, "bytes 10-19/100")
            .check_headers()
            .is_ok());
        // Clamped at the end of the object.
        let mut c = collector(90, Some(120), 30, "bytes 90-99/100");
        assert!(c.check_headers().is_ok());
        assert_eq!(c.want, 10);
        assert_eq!(c.total, Some(100));
        assert!(collector(10, Some(20), 10, "bytes 11-20/100")
            .check_headers()
            .is_err());
        assert!(collector(10, Some(20), 10, "bytes 10-25/100")
            .check_headers()
            .is_err());
        assert!(collector(10, Some(20), 10, "bytes 10-15/100")
            .check_headers()
            .is_err());
        assert!(collector(10, None, 10, "bytes 10-99/100")
            .check_headers()
            .is_ok());
        // Open-ended near the end: the body is shorter than the capture, and that is complete.
        let mut c = collector(95, None, 1000, "bytes 95-99/100");
        assert!(c.check_headers().is_ok());
        assert_eq!(c.want, 5);
        assert!(collector(10, None, 10, "bytes 10-50/100")
            .check_headers()
            .is_err());
        let mut c = collector(10, Some(20), 10, "bytes 10-19/100");
        c.known_size = Some(99);
        assert!(c.check_headers().unwrap_err().contains("changed"));
    }

    #[test]
    fn longer_body_than_asked_is_refused() {
        let mut c = collector(0, Some(4), 4, "bytes 0-3/10");
        assert_eq!(c.write(b"abc").ok(), Some(3));
        assert_eq!(c.write(b"de").ok(), Some(0));
        assert!(matches!(c.verdict, Some(Verdict::Protocol(_))));
        assert_eq!(c.body, b"abc");
    }

    #[test]
    fn ok_at_offset_zero_keeps_only_what_was_asked() {
        let mut c = Collector::default();
        c.begin(0, Some(4), None, 4);
        c.status = 200;
        c.content_length = Some(10);
        assert_eq!(c.write(b"abcdef").ok(), Some(0));
        assert!(matches!(c.verdict, Some(Verdict::Enough)));
        assert_eq!(c.body, b"abcd");
        assert_eq!(c.total, Some(10));
        let mut c = Collector::default();
        c.begin(5, Some(9), None, 4);
        c.status = 200;
        assert_eq!(c.write(b"abcdef").ok(), Some(0));
        assert!(matches!(c.verdict, Some(Verdict::Protocol(_))));
    }
}
