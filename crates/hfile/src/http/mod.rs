//! HTTP(S) through libcurl: bounded `Range` requests on kept-alive connections, bodies handed
//! up as they arrive, and the ranges the layer above advised fetched ahead, several at once.
//!
//! - [`check`]: does a response answer the request (pure);
//! - [`window`]: which bytes to ask for next (pure);
//! - [`request`]: one request's attempts and retries on a curl handle;
//! - [`connections`]: the threads that own the handles (one connection each);
//! - [`transfer`]: a request's bytes, shared by its connection thread and the reader;
//! - [`whole`]: the object as one stream, for a server that ignores `Range`.
//!
//! The reader's position, readahead limit and advice live here, in [`HttpBackend`].

mod check;
mod collector;
mod connections;
mod easy;
mod object;
pub mod replay;
mod request;
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

/// A request on its way is kept when new advice asks for the same bytes less at most this many
/// at its end (a BGZF block's worth: what a plan that did not know where a block ends adds).
const KEEP_EXTRA: u64 = 64 * 1024;

/// A request still being read when the reader moves elsewhere is let to finish (so its
/// connection stays usable) if no more than this much of it is left; else it is abandoned.
const FINISH_IF_LEFT: u64 = 256 * 1024;

/// Windows fetched ahead of a sequential read with no advice.
const SEQUENTIAL_AHEAD: usize = 2;

pub use connections::shutdown;
pub(crate) use easy::version as curl_version;

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
/// while reads keep going past it. Ranges given to [`Backend::advise`] are fetched ahead, up to
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

    /// The reader left `w`: an unfinished request with much left is abandoned.
    fn retire(w: Window) {
        if let Some(t) = w.transfer {
            if !t.is_finished() && t.len().saturating_sub(t.received()) > FINISH_IF_LEFT {
                t.cancel();
            }
        }
    }

    /// Dropped advice: a request not sent yet is never sent.
    fn drop_ahead(w: Window) {
        if let Some(t) = &w.transfer {
            if t.received() == 0 && !t.is_finished() {
                t.cancel();
            }
        }
        HttpBackend::retire(w);
    }

    /// Starts advised windows while fewer than `fetchers` requests run, the bytes held stay
    /// within the budget, and the bytes still to arrive before them stay below the read-ahead
    /// depth ([`OpenOptions::read_ahead`]): small spans go out together (their latencies
    /// overlap), the parts of a large one keep every fetcher busy, and on a shared link the
    /// bandwidth is not spread over bytes the reader needs much later.
    fn pump(&mut self) {
        if !self.bounded() || self.whole.is_some() {
            return;
        }
        let fetchers = self.options.fetchers.max(1);
        let budget = self.options.fetch_budget;
        let depth = self.options.read_ahead.max(1);
        let (mut in_flight, mut held, mut pending) = (0usize, 0u64, 0u64);
        let mut to_start = Vec::new();
        let windows = self.current.iter().chain(self.ahead.iter());
        for (i, w) in windows.enumerate() {
            let len = w.range.end - w.range.start;
            match &w.transfer {
                Some(t) => {
                    held += len;
                    if !t.is_finished() {
                        in_flight += 1;
                        pending += len.saturating_sub(t.received());
                    }
                }
                None => {
                    let first = held == 0;
                    if !first && (in_flight >= fetchers || held + len > budget || pending >= depth)
                    {
                        break;
                    }
                    in_flight += 1;
                    held += len;
                    pending += len;
                    // Index into `ahead` (the current window is always submitted).
                    to_start.push(i - usize::from(self.current.is_some()));
                }
            }
        }
        for i in to_start {
            let t = self.submit(&self.ahead[i].range.clone(), Priority::Ahead);
            self.ahead[i].transfer = Some(t);
        }
    }

    /// After a window opened by a read (not by advice), the next windows of a sequential read.
    fn plan_sequential(&mut self, after: u64) {
        if !self.bounded() || !self.ahead.is_empty() {
            return;
        }
        let request = self.options.request_size.max(1);
        // With neither a limit nor the size there is no telling where the object ends.
        let end = match (self.limit, self.size) {
            (Some(l), Some(s)) => l.min(s),
            (Some(l), None) => l,
            (None, Some(s)) => s,
            (None, None) => return,
        };
        if end <= after {
            return;
        }
        let windows = window::split(std::slice::from_ref(&(after..end)), request);
        for range in windows.into_iter().take(SEQUENTIAL_AHEAD) {
            self.ahead.push_back(Window {
                range,
                transfer: None,
            });
        }
    }

    /// Makes a window holding `pos` current: from the advice, or a new request.
    fn open_window(&mut self) -> bool {
        let pos = self.pos;

        if let Some(i) = self.ahead.iter().position(|w| w.range.contains(&pos)) {
            for w in self.ahead.drain(..i) {
                HttpBackend::drop_ahead(w);
            }
            if let Some(mut w) = self.ahead.pop_front() {
                if w.transfer.is_none() {
                    w.transfer = Some(self.submit(&w.range, Priority::Now));
                }
                if let Some(old) = self.current.replace(w) {
                    HttpBackend::retire(old);
                }
                self.pump();
                return true;
            }
        }
        let range = window::next_window(
            pos,
            self.limit,
            self.size,
            self.options.request_size,
            &mut self.overrun,
        );
        if range.is_empty() {
            return false;
        }
        // A read outside the advice: what was advised before it is no longer coming.
        while self.ahead.front().is_some_and(|w| w.range.end <= pos) {
            if let Some(w) = self.ahead.pop_front() {
                HttpBackend::drop_ahead(w);
            }
        }
        let transfer = self.submit(&range, Priority::Now);
        let end = range.end;
        if let Some(old) = self.current.replace(Window {
            range,
            transfer: Some(transfer),
        }) {
            HttpBackend::retire(old);
        }
        self.plan_sequential(end);
        self.pump();
        true
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

    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        self.limit = limit;
        self.overrun = window::OVERRUN_START;
    }

    fn advise(&mut self, ranges: &[Range<u64>]) {
        if !self.bounded() || self.whole.is_some() {
            return;
        }
        // Bytes the current window holds or is receiving are not asked for again.
        let current = self.current.as_ref().map(|w| w.range.clone());
        let trimmed: Vec<Range<u64>> = ranges
            .iter()
            .map(|r| match &current {
                Some(c) if c.contains(&r.start) => c.end.min(r.end)..r.end,
                _ => r.clone(),
            })
            .filter(|r| !r.is_empty())
            .collect();
        // A range longer than a part goes out as parts, each its own bounded request.
        let part = self
            .options
            .part_size
            .clamp(1, self.options.request_size.max(1));
        let mut old: Vec<Window> = self.ahead.drain(..).collect();
        // The window last kept: a range that starts inside it is asked for from its end.
        let mut kept_last: Option<Range<u64>> = None;
        for range in trimmed {
            let mut pos = range.start;
            if let Some(k) = kept_last.as_ref().filter(|k| k.contains(&pos)) {
                pos = k.end.min(range.end);
            }
            while pos < range.end {
                // A window already being fetched from this byte is kept: for the same bytes,
                // for a part of them, or for these and at most KEEP_EXTRA more. Advice made
                // before everything was known (spans planned from part of an index, the index
                // asked for again from where its reader is) then costs no second request.
                let kept = old.iter().position(|w| {
                    w.transfer.is_some()
                        && w.range.start == pos
                        && w.range.end <= range.end.saturating_add(KEEP_EXTRA)
                });
                if let Some(i) = kept {
                    let w = old.swap_remove(i);
                    pos = w.range.end;
                    kept_last = Some(w.range.clone());
                    self.ahead.push_back(w);
                    continue;
                }
                // The bytes up to the next window being fetched are asked for anew, in parts
                // (cut only here, so the cut of new advice never splits a request under way).
                let next = old
                    .iter()
                    .filter(|w| w.transfer.is_some() && w.range.start > pos)
                    .map(|w| w.range.start)
                    .min()
                    .unwrap_or(range.end)
                    .min(range.end);
                let parts = window::parts(pos..next, part, self.options.fetchers);
                self.ahead.extend(parts.into_iter().map(|range| Window {
                    range,
                    transfer: None,
                }));
                pos = next;
            }
        }
        for w in old {
            HttpBackend::drop_ahead(w);
        }
        connections::forget_cancelled();
        self.pump();
    }

    fn abandon(&mut self) {
        let windows = self.ahead.drain(..).chain(self.current.take());
        let running = windows
            .filter_map(|w| w.transfer)
            .chain(self.tail.take().map(|(_, t)| t))
            .chain(
                self.whole
                    .as_ref()
                    .and_then(whole::Whole::transfer)
                    .cloned(),
            );
        for t in running {
            if !t.is_finished() {
                t.cancel();
            }
        }
        connections::forget_cancelled();
    }

    fn advise_tail(&mut self, len: u64) {
        if self.tail.is_some() || !self.bounded() || self.whole.is_some() {
            return;
        }
        let transfer = Arc::new(Transfer::new(None, len));
        connections::submit(
            self.job(Ask::Suffix(len), &transfer),
            Priority::Now,
            self.options.fetchers,
        );
        self.tail = Some((len, transfer));
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
        connections::forget_cancelled();
    }
}
