//! HTTP(S) through libcurl: bounded `Range` requests on kept-alive connections, bodies handed
//! up as they arrive, and the ranges the layer above advised fetched ahead, several at once.
//!
//! - [`check`]: does a response answer the request (pure);
//! - [`window`]: which bytes to ask for next (pure);
//! - [`ahead`]: what is fetched ahead of the reader (advice, sequential read-ahead) and when;
//! - [`request`]: one request's attempts and retries on a curl handle;
//! - [`connections`]: the threads that own the handles (one connection each);
//! - [`transfer`]: a request's bytes, shared by its connection thread and the reader;
//! - [`whole`]: the object as one stream, for a server that ignores `Range`.
//!
//! The reader's position and windows live here, in [`HttpBackend`].

mod ahead;
mod check;
mod collector;
mod connections;
mod easy;
mod judge;
mod object;
pub mod replay;
mod request;
mod spare;
mod throttle;
mod transfer;
mod whole;
mod window;

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Mutex};

pub(crate) use connections::wait_idle;
use connections::Priority;
use request::{Ask, Job};
use transfer::{Available, Told, Transfer};

use crate::stats::TransferStats;
use crate::{Backend, ObjectInfo, OpenOptions, RangeMode, Result};

pub use connections::shutdown;
pub(crate) use easy::version as curl_version;
pub use throttle::throttled;

pub(crate) fn open_http(location: &str, options: &OpenOptions) -> Result<Box<dyn Backend>> {
    Ok(Box::new(HttpBackend::open(location, options)?))
}

/// A byte range of the object and the request for it (`None` until submitted).
struct Window {
    range: Range<u64>,
    transfer: Option<Arc<Transfer>>,
}

/// An HTTP(S) object read with bounded `Range` requests.
///
/// Opening sends nothing. A read outside the current window sends `Range: bytes=X-Y` with
/// `Y + 1` the readahead limit (at most the request size), so a request is never open-ended in
/// the default [`RangeMode::Bounded`]; a read past the limit sends a small request that grows
/// while reads keep going past it. Ranges given to [`crate::Hints::advise`] are fetched ahead, up to
/// [`OpenOptions::fetchers`] at once on their own connections and within
/// [`OpenOptions::fetch_budget`] bytes, and reads are served from them. Every response is
/// checked against its request; transient failures are retried with backoff and resume at the
/// byte where they broke. Messages name the URL without its query string.
pub struct HttpBackend {
    url: Arc<str>,
    name: String,
    options: Arc<OpenOptions>,
    pos: u64,
    limit: Option<u64>,
    size: Option<u64>,
    /// Set once the server showed it does not tell the size: asking again would only repeat
    /// the requests that showed it.
    size_unknown: bool,
    etag: Option<String>,
    last_modified: Option<String>,
    current: Option<Window>,
    /// Windows to read next, in order: advised, or the continuation of a sequential read.
    ahead: VecDeque<Window>,
    /// The request for the object's last bytes, if one was started ahead.
    tail: Option<(u64, Arc<Transfer>)>,
    overrun: u64,
    stats: Arc<Mutex<TransferStats>>,
    /// Where the last read ended: a read elsewhere is a seek.
    read_end: u64,
    /// Set once the server showed that it ignores `Range` ([`whole`]).
    whole: Option<whole::Whole>,
    /// The bytes this reader holds as counted against its client's shared budget.
    charged: u64,
}

impl std::fmt::Debug for HttpBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpBackend")
            .field("url", &self.name)
            .field("pos", &self.pos)
            .field("size", &self.size)
            .finish()
    }
}

impl HttpBackend {
    /// Prepares a handle on `url`; nothing is sent until the first read, size query or advice.
    pub fn open(url: &str, options: &OpenOptions) -> Result<HttpBackend> {
        Ok(HttpBackend {
            url: Arc::from(url),
            name: crate::redact_url(url),
            options: Arc::new(options.clone()),
            pos: 0,
            limit: None,
            size: None,
            size_unknown: false,
            etag: None,
            last_modified: None,
            current: None,
            ahead: VecDeque::new(),
            tail: None,
            overrun: window::OVERRUN_START,
            stats: Arc::default(),
            read_end: 0,
            whole: None,
            charged: 0,
        })
    }

    /// The requests sent and not yet retired: the current window's, those fetched ahead, and
    /// the one for the object's last bytes.
    fn requests(&self) -> impl Iterator<Item = &Arc<Transfer>> {
        self.current
            .iter()
            .chain(self.ahead.iter())
            .filter_map(|w| w.transfer.as_ref())
            .chain(self.tail.as_ref().map(|(_, t)| t))
    }

    /// What this backend's requests have cost so far, once the requests running now are over
    /// (a reader may have its bytes before its request has quite finished).
    pub fn stats(&self) -> TransferStats {
        for t in self.requests() {
            t.wait_finished();
        }
        if let Some(t) = self.whole.as_ref().and_then(whole::Whole::transfer) {
            if !t.is_cancelled() {
                t.wait_finished();
            }
        }
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }

    fn bounded(&self) -> bool {
        self.options.range_mode == RangeMode::Bounded
    }

    fn job(&self, ask: Ask, transfer: &Arc<Transfer>) -> Job {
        Job {
            url: Arc::clone(&self.url),
            options: Arc::clone(&self.options),
            ask,
            known_size: self.size,
            fresh_connection: !self.bounded(),
            transfer: Arc::clone(transfer),
            stats: Arc::clone(&self.stats),
        }
    }

    /// Starts the request for `range`.
    fn submit(&self, range: &Range<u64>, priority: Priority) -> Arc<Transfer> {
        let len = range.end - range.start;
        let transfer = Arc::new(Transfer::new(Some(range.start), len));
        let end = self.bounded().then_some(range.end);
        let ask = Ask::Range {
            start: range.start,
            end,
            want: len,
        };
        connections::submit(self.job(ask, &transfer), priority, self.options.fetchers);
        transfer
    }

    /// Runs a small request now and waits for it.
    fn run_now(&self, ask: Ask, len: u64) -> Result<(Arc<Transfer>, Vec<u8>)> {
        let start = match ask {
            Ask::Range { start, .. } => Some(start),
            Ask::Head | Ask::Stream => Some(0),
            Ask::Suffix(_) => None,
        };
        let transfer = Arc::new(Transfer::new(start, len));
        connections::submit(
            self.job(ask, &transfer),
            Priority::Now,
            self.options.fetchers,
        );
        let (_, bytes) = transfer.wait_all()?;
        Ok((transfer, bytes))
    }
}

impl Backend for HttpBackend {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() || self.size.is_some_and(|s| self.pos >= s) {
            return Ok(0);
        }
        if self.whole.is_some() {
            return self.read_streamed(buf);
        }
        loop {
            let serving = self
                .current
                .as_ref()
                .filter(|w| w.range.contains(&self.pos))
                .and_then(|w| w.transfer.clone());
            if let Some(t) = serving {
                let got = t.read_at(self.pos, buf);
                self.learn(&t.told())?;
                let got = match got {
                    Err(e) if e.is_range_ignored() => {
                        self.stream_from_now();
                        return self.read_streamed(buf);
                    }
                    other => other?,
                };
                match got {
                    Available::Copied(n) => {
                        self.pos += n as u64;
                        self.read_end = self.pos;
                        // Bytes have arrived (here or in a part ahead): the next advised
                        // window may be due.
                        if self.ahead.iter().any(|w| w.transfer.is_none()) {
                            self.pump();
                        }
                        return Ok(n);
                    }
                    Available::Ended => {
                        let end = t.start().unwrap_or(self.pos) + t.received();
                        if self.size.is_none() && end > t.start().unwrap_or(end) {
                            // The response ended short of this byte and the server does not
                            // tell the size: only a 416 for a request from here shows the end
                            // (a response may also end short for other reasons).
                            if let Some(old) = self.current.take() {
                                HttpBackend::retire(old);
                            }
                            if !self.open_window() {
                                return Ok(0);
                            }
                            continue;
                        }
                        // The response ended short of this byte: the object ends there.
                        if self.size.is_some_and(|s| self.pos >= s) {
                            return Ok(0);
                        }
                        return Err(self.protocol(
                            self.pos,
                            format!("the response ended at byte {end}, before the object's end"),
                        ));
                    }
                }
            }
            if !self.open_window() {
                return Ok(0);
            }
        }
    }

    fn seek(&mut self, pos: u64) -> Result<()> {
        // Nothing is sent here: the next read decides whether a window serves.
        self.pos = pos;
        Ok(())
    }

    fn position(&self) -> u64 {
        self.pos
    }

    fn size(&mut self) -> Result<u64> {
        if let Some(size) = self.size {
            return Ok(size);
        }
        // A response already on its way tells the size: wait for its headers rather than ask.
        let told: Vec<Told> = self.requests().map(|t| t.wait_told()).collect();
        for t in &told {
            self.learn(t)?;
        }
        // A request already refused (an index name that does not exist) answers for the
        // object: a HEAD would only cost one more round trip to hear the same.
        if self.size.is_none() {
            let refused = self.requests().find_map(|t| t.refusal());
            if let Some(e) = refused {
                return Err(e);
            }
        }
        match self.size {
            Some(size) => Ok(size),
            // Asking again would only repeat the requests that showed it.
            None if self.size_unknown => Err(crate::Error::SizeUnknown {
                name: self.name.clone(),
            }),
            None => self.probe_size(),
        }
    }

    fn read_tail(&mut self, len: u64) -> Result<Vec<u8>> {
        if self.whole.is_some() {
            let offset = self.size.map_or(0, |s| s.saturating_sub(len));
            return Err(self.range_ignored(offset));
        }
        let transfer = match self.tail.take() {
            Some((n, t)) if n == len => t,
            _ if !self.bounded() => {
                // htslib's way: learn the size, then read from size - len.
                let size = self.size()?;
                let start = size.saturating_sub(len);
                let (t, bytes) = self.run_now(
                    Ask::Range {
                        start,
                        end: None,
                        want: size - start,
                    },
                    size - start,
                )?;
                self.learn(&t.told())?;
                return Ok(bytes);
            }
            _ => {
                let t = Arc::new(Transfer::new(None, len));
                connections::submit(
                    self.job(Ask::Suffix(len), &t),
                    Priority::Now,
                    self.options.fetchers,
                );
                t
            }
        };
        let waited = transfer.wait_all();
        self.learn(&transfer.told())?;
        let bytes = match waited {
            Err(e) if e.is_range_ignored() => {
                self.stream_from_now();
                return Err(e);
            }
            other => other?.1,
        };
        if self.size.is_none() && bytes.is_empty() {
            self.size = Some(0);
        }
        Ok(bytes)
    }

    fn object_info(&mut self) -> ObjectInfo {
        ObjectInfo {
            size: self.size,
            etag: self.etag.clone(),
            last_modified: self.last_modified.clone(),
        }
    }

    fn probe(&mut self) -> Result<ObjectInfo> {
        // The EOF probe (or any response on its way) tells what the object is now.
        let running: Vec<Arc<Transfer>> = self
            .tail
            .iter()
            .map(|(_, t)| Arc::clone(t))
            .chain(self.current.iter().filter_map(|w| w.transfer.clone()))
            .chain(self.ahead.iter().filter_map(|w| w.transfer.clone()))
            .collect();
        let mut heard = false;
        for t in &running {
            let told = t.wait_told();
            heard |= told.total.is_some();
            self.learn(&told)?;
        }
        if !heard && self.whole.is_none() {
            match self.read_tail(1) {
                Err(e) if e.is_range_ignored() => {}
                other => drop(other?),
            }
        }
        if self.whole.is_some() && self.size.is_none() {
            self.size()?;
        }
        Ok(self.object_info())
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for HttpBackend {
    fn drop(&mut self) {
        for w in self.ahead.drain(..) {
            HttpBackend::drop_ahead(w);
        }
        if let Some(w) = self.current.take() {
            HttpBackend::retire(w);
        }
        if let Some(t) = self.whole.as_ref().and_then(whole::Whole::transfer) {
            t.cancel();
        }
        if let Some(c) = &self.options.client {
            c.recharge(self.charged, 0);
        }
        connections::forget_cancelled();
    }
}
