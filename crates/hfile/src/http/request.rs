//! One request, run to completion on a connection thread's curl handle: attempts, checks, and
//! retries with backoff that resume at the byte where a transfer broke (rule 6).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::check::Asked;
use super::collector::{Collector, Stop};
use super::easy::{CurlError, Easy};
use super::judge::{judge_attempt, Timing};
use super::throttle::{self, Ended, Throttle};
use super::transfer::Transfer;
use crate::deadline;
use crate::hook::Request;
use crate::stats::{self, TransferStats};
use crate::{Error, OpenOptions};

/// No single backoff sleep is longer than this.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// What to ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ask {
    /// Bytes `[start, end)`; `end: None` is an open-ended `bytes=start-` (htslib's way, kept for
    /// benchmarks), of which `want` bytes are kept before the transfer is abandoned.
    Range {
        start: u64,
        end: Option<u64>,
        want: u64,
    },
    /// The last `n` bytes (`bytes=-n`): the EOF marker, and the size, in one request.
    Suffix(u64),
    /// A `HEAD`, for the size.
    Head,
    /// The whole object, without a `Range` (a server that ignores ranges): a retry reads it
    /// again from the start and drops what was already handed on.
    Stream,
}

/// A request, with where its bytes go.
#[derive(Clone)]
pub(crate) struct Job {
    pub url: Arc<str>,
    pub options: Arc<OpenOptions>,
    pub ask: Ask,
    pub known_size: Option<u64>,
    /// A new connection, closed after the request (htslib's behaviour, for benchmarks).
    pub fresh_connection: bool,
    pub transfer: Arc<Transfer>,
    /// The owning backend's counters.
    pub stats: Arc<Mutex<TransferStats>>,
}

impl Job {
    pub(super) fn name(&self) -> String {
        crate::redact_url(&self.url)
    }
}

/// The outcome of one attempt.
pub(super) enum Attempt {
    Done,
    Retry(String),
    Fail(Error),
}

/// Runs `job` on `easy` until it succeeds or fails for good; the caller finishes the transfer
/// with the outcome.
pub(crate) fn run(easy: &mut Easy, job: &Job) -> Result<(), Error> {
    let first = Instant::now();
    // Failures count against `retries`; throttles (the server said the client is too fast)
    // only against the time limits.
    let mut failures = 0u32;
    let mut throttles = 0u32;
    loop {
        if job.transfer.is_cancelled() {
            return Err(cancelled(job));
        }
        let kept = job.transfer.received();
        let from = match job.ask {
            Ask::Range { start, .. } => start + kept,
            Ask::Stream => kept,
            _ => 0,
        };
        if let Some(d) = job.options.deadline.filter(|d| d.remaining().is_none()) {
            return Err(remote(job, from, d.to_string()));
        }
        // Every attempt waits for its turn at the origin (a throttled one is paused, and
        // limited in how many attempts it takes at once); the loop's top says why it gave up.
        let give_up = || {
            job.transfer.is_cancelled()
                || job
                    .options
                    .deadline
                    .is_some_and(|d| d.remaining().is_none())
        };
        let Some(turn) = throttle::enter(&job.url, give_up) else {
            if job.transfer.is_cancelled() {
                return Err(cancelled(job));
            }
            continue;
        };
        let outcome = attempt(easy, job, kept);
        let response = &easy.get_ref().response;
        let throttled = throttle::classify(response.status, &response.error_body);
        let retry_after = response.retry_after;
        match outcome {
            Attempt::Done => {
                turn.leave(Ended::Answered);
                return Ok(());
            }
            Attempt::Fail(e) => {
                turn.leave(if response.status == 0 {
                    Ended::Other
                } else {
                    Ended::Answered
                });
                return Err(e);
            }
            Attempt::Retry(message) => {
                let too_fast = throttled == Some(Throttle::TooFast);
                let step = if too_fast {
                    throttles += 1;
                    throttles
                } else {
                    failures += 1;
                    failures
                };
                // The next attempt resumes after the bytes this one delivered.
                let from = match job.ask {
                    Ask::Range { start, .. } => start + job.transfer.received(),
                    Ask::Stream => job.transfer.received(),
                    _ => 0,
                };
                let options = &job.options;
                // A throttled request backs off less steeply (it is not the server failing,
                // and its time limit still holds); the origin pauses for the first backoff
                // only, so that the client as a whole resumes at about the server's pace.
                let steps = if too_fast { 3 } else { 20 };
                let mut delay = options
                    .retry_backoff
                    .saturating_mul(1u32 << (step - 1).min(steps))
                    .min(MAX_BACKOFF);
                let mut pause = options.retry_backoff.min(MAX_BACKOFF);
                if let Some(secs) = retry_after {
                    let asked = Duration::from_secs(secs).min(MAX_BACKOFF);
                    delay = delay.max(asked);
                    pause = pause.max(asked);
                }
                turn.leave(match throttled {
                    Some(_) => Ended::Throttled(pause),
                    None if response.status == 0 => Ended::Other,
                    None => Ended::Answered,
                });
                if failures > options.retries || first.elapsed() + delay > options.retry_max_time {
                    let attempts = failures + throttles;
                    return Err(Error::Remote {
                        name: job.name(),
                        offset: from,
                        message: format!("{message} (gave up after {attempts} attempts)"),
                    });
                }
                if let Some(d) = options.deadline {
                    if d.remaining().is_none_or(|left| left <= delay) {
                        return Err(remote(job, from, format!("{message}; {d} before a retry")));
                    }
                }
                let retry = TransferStats {
                    retries: 1,
                    ..TransferStats::default()
                };
                if let Ok(mut s) = job.stats.lock() {
                    s.add(&retry);
                }
                stats::record(&retry);
                if options.verbosity >= 1 {
                    eprintln!(
                        "[hfile] {}: {message}; retry {failures} in {} ms from byte {from}",
                        job.name(),
                        delay.as_millis()
                    );
                }
                wait_to_retry(job, delay);
            }
        }
    }
}

/// Waits `delay` before a retry, waking early when the transfer is cancelled (a request
/// abandoned or dropped by its reader gives its thread and fetcher back at once, not after a
/// backoff of up to 10 s).
fn wait_to_retry(job: &Job, delay: Duration) {
    let until = Instant::now() + delay;
    while !job.transfer.is_cancelled() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}

pub(super) fn cancelled(job: &Job) -> Error {
    Error::Remote {
        name: job.name(),
        offset: 0,
        message: "the transfer was cancelled".to_string(),
    }
}

/// Settings of one request on a (possibly reused) handle; `hooked`: the headers the request
/// hook made for this attempt.
fn configure(
    easy: &mut Easy,
    job: &Job,
    range: Option<&str>,
    hooked: &[(String, String)],
    limit: Duration,
) -> Result<(), CurlError> {
    let options = &job.options;
    // Used verbatim: a pre-signed URL's query string must reach the server unchanged.
    easy.url(&job.url)?;
    easy.path_as_is(true)?;
    // Off when no redirect may be followed: a store that signs requests answers its own.
    easy.follow_location(options.max_redirects > 0)?;
    easy.max_redirections(options.max_redirects)?;
    easy.connect_timeout(options.connect_timeout.min(limit))?;
    // 0: none (a handle is reused, so the bound is always set).
    easy.timeout(if limit == Duration::MAX {
        Duration::ZERO
    } else {
        limit.max(Duration::from_millis(1))
    })?;
    // A stream's connection thread waits while the reader is behind: libcurl would take that
    // for a slow server, so the collector watches streams itself.
    let stream = job.ask == Ask::Stream;
    easy.low_speed_limit(if stream { 0 } else { options.low_speed_limit })?;
    easy.low_speed_time(options.low_speed_time)?;
    easy.useragent(concat!("hfile/", env!("CARGO_PKG_VERSION")))?;
    easy.signal(false)?;
    easy.progress(true)?;
    easy.verbose(options.verbosity >= 3)?;
    let (bundle, dir) = trust();
    if let Some(bundle) = bundle {
        easy.cainfo(&bundle)?;
    }
    if let Some(dir) = dir {
        easy.capath(&dir)?;
    }
    let mut lines: Vec<String> = options
        .headers
        .iter()
        .chain(hooked)
        .map(|(key, value)| format!("{key}: {value}"))
        .collect();
    if let Some(range) = range {
        lines.push(format!("Range: {range}"));
    }
    easy.http_headers(&lines)?;
    let head = job.ask == Ask::Head;
    easy.nobody(head)?;
    if !head {
        easy.get(true)?;
    }
    easy.fresh_connect(job.fresh_connection)?;
    easy.forbid_reuse(job.fresh_connection)?;
    Ok(())
}

/// The certificates TLS trusts: `CURL_CA_BUNDLE` or `SSL_CERT_FILE`, and `SSL_CERT_DIR`, as
/// curl reads them; else the system's bundle where Linux distributions keep it (libcurl is built
/// into `hts`, without a bundle path of its own).
fn trust() -> (Option<std::ffi::OsString>, Option<std::ffi::OsString>) {
    let bundle = ["CURL_CA_BUNDLE", "SSL_CERT_FILE"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty());
    let dir = std::env::var_os("SSL_CERT_DIR").filter(|v| !v.is_empty());
    if bundle.is_some() || dir.is_some() {
        return (bundle, dir);
    }
    const SYSTEM: [&str; 4] = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/ca-bundle.pem",
        "/etc/ssl/cert.pem",
    ];
    let bundle = SYSTEM
        .iter()
        .find(|p| std::path::Path::new(p).is_file())
        .map(std::ffi::OsString::from);
    let dir = Some("/etc/ssl/certs")
        .filter(|d| std::path::Path::new(d).is_dir())
        .map(std::ffi::OsString::from);
    (bundle, dir)
}

/// What one attempt asks for: the `Range` header, what the checks expect, the bytes wanted and
/// the offset they start at. `kept`: bytes of the transfer already received by earlier attempts.
fn asking(job: &Job, kept: u64) -> (Option<String>, Asked, u64, u64) {
    let asked = |start, end, suffix| Asked {
        start,
        end,
        suffix,
        known_size: job.known_size,
    };
    match job.ask {
        Ask::Range { start, end, want } => {
            let from = start + kept;
            let range = match end {
                Some(end) => format!("bytes={from}-{}", end - 1),
                None => format!("bytes={from}-"),
            };
            (Some(range), asked(Some(from), end, None), want - kept, from)
        }
        Ask::Suffix(n) => {
            // A suffix cannot be resumed: a retry asks again from scratch, and what an earlier
            // attempt kept would otherwise stand before the new bytes.
            if kept > 0 {
                job.transfer.discard();
            }
            (
                Some(format!("bytes=-{n}")),
                asked(None, None, Some(n)),
                n,
                0,
            )
        }
        Ask::Head => (None, asked(None, None, None), 0, 0),
        Ask::Stream => (None, asked(Some(0), None, None), u64::MAX, kept),
    }
}

/// One attempt; `kept`: bytes of the transfer already received by earlier attempts.
fn attempt(easy: &mut Easy, job: &Job, kept: u64) -> Attempt {
    let (range, asked, want, from) = asking(job, kept);
    if want == 0 && job.ask != Ask::Head {
        return Attempt::Done;
    }
    let options = &job.options;
    let Some(limit) = deadline::attempt_limit(
        want,
        options.request_time,
        options.min_rate,
        options.deadline.as_ref(),
    ) else {
        let message = options.deadline.map_or_else(String::new, |d| d.to_string());
        return Attempt::Fail(remote(job, from, message));
    };
    let transfer = (job.ask != Ask::Head).then(|| Arc::clone(&job.transfer));
    easy.get_mut().begin(transfer, asked, want);
    // The low-speed rule, checked by us (see `Collector::progress`).
    easy.get_mut().stall_after =
        (job.options.low_speed_limit > 0).then_some(job.options.low_speed_time);
    if job.ask == Ask::Stream {
        easy.get_mut().skip = kept;
    }
    let method = if job.ask == Ask::Head { "HEAD" } else { "GET" };
    if let Err(message) = set_up(easy, job, method, range.as_deref(), limit) {
        return Attempt::Fail(remote(job, from, message));
    }
    let shown = format!(
        "{method} {}{}",
        job.name(),
        range
            .as_deref()
            .map(|r| format!(" Range: {r}"))
            .unwrap_or_default()
    );
    if job.options.verbosity >= 1 {
        eprintln!("[hfile] {shown}");
    }
    let started = Instant::now();
    let result = easy.perform();
    let connects = easy.num_connects().unwrap_or(0);
    let c = easy.get_mut();
    c.judge();
    count(job, c, connects);
    if job.options.verbosity >= 1 {
        log_outcome(&shown, c, connects, &result);
    }
    let timing = Timing {
        took: started.elapsed(),
        limit,
    };
    judge_attempt(job, from, want, result, c, timing)
}

/// Signs the request (the hook's headers, made for each attempt: a signature covers this
/// attempt's range and time) and sets the handle up for it.
fn set_up(
    easy: &mut Easy,
    job: &Job,
    method: &str,
    range: Option<&str>,
    limit: Duration,
) -> Result<(), String> {
    let hooked = match &job.options.hook {
        Some(hook) => hook.headers(&Request {
            method,
            url: &job.url,
            range,
        })?,
        None => Vec::new(),
    };
    configure(easy, job, range, &hooked, limit)
        .map_err(|e| format!("cannot set up the request: {e}"))
}

/// Adds one finished attempt to the backend's counters and the process's.
fn count(job: &Job, c: &Collector, connects: u64) {
    let status = c.response.status;
    let one = TransferStats {
        requests: 1,
        bytes_received: c.arrived,
        new_connections: connects,
        reused_connections: u64::from(connects == 0 && status != 0),
        unbounded_requests: u64::from(matches!(job.ask, Ask::Range { end: None, .. })),
        retries: 0,
    };
    if let Ok(mut s) = job.stats.lock() {
        s.add(&one);
    }
    stats::record(&one);
    job.transfer.tell(&c.told());
}

/// The `-v` line of a finished attempt: status, bytes, whether the connection was reused.
fn log_outcome(shown: &str, c: &Collector, connects: u64, result: &Result<(), CurlError>) {
    let status = c.response.status;
    let connection = match (status, connects) {
        (0, _) => "no response",
        (_, 0) => "connection reused",
        _ => "new connection",
    };
    let outcome = match (result, &c.stop) {
        (Ok(()), _) => String::new(),
        (Err(_), Some(Stop::Enough)) => ", rest abandoned".into(),
        (Err(e), _) => format!(", {}", e.description()),
    };
    eprintln!(
        "[hfile] {shown} -> {status}, {} bytes, {connection}{outcome}",
        c.accepted
    );
}

/// The error of a job that found no libcurl handle to run on.
pub(crate) fn without_handle(job: &Job, e: &CurlError) -> Error {
    let offset = match job.ask {
        Ask::Range { start, .. } => start,
        _ => 0,
    };
    remote(job, offset, format!("libcurl could not start: {e}"))
}

pub(super) fn remote(job: &Job, offset: u64, message: String) -> Error {
    Error::Remote {
        name: job.name(),
        offset,
        message,
    }
}
