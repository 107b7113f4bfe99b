//! What is fetched ahead of the reader: the advice the layer above gives ([`crate::Hints`]),
//! the windows of a sequential read, and starting them within the fetchers, the byte budget
//! and the read-ahead depth; the window the reader moves into, and what happens to those it
//! leaves.

use std::ops::Range;
use std::sync::Arc;

use super::connections::{self, Priority};
use super::request::Ask;
use super::transfer::Transfer;
use super::{whole, window, HttpBackend, Window};

/// A request on its way is kept when new advice asks for the same bytes less at most this many
/// at its end (a BGZF block's worth: what a plan that did not know where a block ends adds).
const KEEP_EXTRA: u64 = 64 * 1024;

/// A request still being read when the reader moves elsewhere is let to finish (so its
/// connection stays usable) if no more than this much of it is left; else it is abandoned.
const FINISH_IF_LEFT: u64 = 256 * 1024;

/// Windows fetched ahead of a sequential read with no advice.
const SEQUENTIAL_AHEAD: usize = 2;

impl HttpBackend {
    /// The reader left `w`: an unfinished request with much left is abandoned.
    pub(super) fn retire(w: Window) {
        if let Some(t) = w.transfer {
            if !t.is_finished() && t.len().saturating_sub(t.received()) > FINISH_IF_LEFT {
                t.cancel();
            }
        }
    }

    /// Dropped advice: a request not sent yet is never sent.
    pub(super) fn drop_ahead(w: Window) {
        if let Some(t) = &w.transfer {
            if t.received() == 0 && !t.is_finished() {
                t.cancel();
            }
        }
        HttpBackend::retire(w);
    }

    /// Starts advised windows while fewer than `fetchers` requests run, the bytes held stay
    /// within the budget, and the bytes still to arrive before them stay below the read-ahead
    /// depth ([`crate::OpenOptions::read_ahead`]): small spans go out together (their latencies
    /// overlap), the parts of a large one keep every fetcher busy, and on a shared link the
    /// bandwidth is not spread over bytes the reader needs much later.
    pub(super) fn pump(&mut self) {
        if !self.bounded() || self.whole.is_some() {
            return;
        }
        let fetchers = self.options.fetchers.max(1);
        let budget = self.options.fetch_budget;
        let depth = self.options.read_ahead.max(1);
        // A client's budget is shared: what its other readers hold counts too.
        let client = self.options.client.clone();
        let others = client
            .as_ref()
            .map_or(0, |c| c.held_bytes().saturating_sub(self.charged));
        let shared_budget = client.as_ref().map_or(u64::MAX, |c| c.byte_budget());
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
                    let over = held + len > budget || others + held + len > shared_budget;
                    if !first && (in_flight >= fetchers || over || pending >= depth) {
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
        if let Some(c) = client {
            c.recharge(self.charged, held);
            self.charged = held;
        }
    }

    /// After a window opened by a read (not by advice), the next windows of a sequential read.
    pub(super) fn plan_sequential(&mut self, after: u64) {
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
    pub(super) fn open_window(&mut self) -> bool {
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

impl crate::Hints for HttpBackend {
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
}
