//! Servers that ignore `Range` (`python3 -m http.server`, some proxies): every request is
//! answered with `200` and the whole object. samtools still reads such a file by reading on,
//! and so does this backend: once a response shows it, the object is read as one stream from
//! its start (no `Range`), with memory bounded by the transfer (bytes behind the reader are
//! dropped; the connection waits while the reader is far behind). A seek forward reads on and
//! drops the bytes between; a seek back before what the stream still holds starts it again.
//! A read that jumps (an indexed query) warns once, on one line, since every byte before the
//! data asked for is downloaded; a whole-file read goes on without a word.

use std::sync::Arc;

use super::connections::{self, Priority};
use super::request::Ask;
use super::transfer::{Available, Transfer};
use super::HttpBackend;
use crate::{Error, Result};

/// The stream of a server that ignores `Range`.
#[derive(Default)]
pub(crate) struct Whole {
    transfer: Option<Arc<Transfer>>,
    warned: bool,
}

impl Whole {
    /// The running stream, if any.
    pub(crate) fn transfer(&self) -> Option<&Arc<Transfer>> {
        self.transfer.as_ref()
    }
}

impl HttpBackend {
    /// From now on the object is read as one stream: windows and advice are dropped.
    pub(super) fn stream_from_now(&mut self) {
        if self.whole.is_some() {
            return;
        }
        for w in self.ahead.drain(..) {
            HttpBackend::drop_ahead(w);
        }
        if let Some(t) = self.current.take().and_then(|w| w.transfer) {
            t.cancel();
        }
        self.tail = None;
        connections::forget_cancelled();
        if self.options.verbosity >= 1 {
            eprintln!(
                "[hfile] {}: the server ignores Range; the object is read as one stream",
                self.name
            );
        }
        self.whole = Some(Whole::default());
    }

    /// The error for what a stream cannot serve alone (the last bytes of the object).
    pub(super) fn range_ignored(&self, offset: u64) -> Error {
        Error::RangeIgnored {
            name: self.name.clone(),
            offset,
        }
    }

    /// A read served by the stream (started, or started again, as needed).
    pub(super) fn read_streamed(&mut self, buf: &mut [u8]) -> Result<usize> {
        let pos = self.pos;
        if self.size.is_some_and(|s| pos >= s) {
            return Ok(0);
        }
        let jumped = pos != self.read_end;
        let held = self
            .whole
            .as_ref()
            .and_then(Whole::transfer)
            .filter(|t| !t.is_cancelled() && t.first_held() <= pos)
            .cloned();
        let t = match held {
            Some(t) => t,
            None => {
                let t = Arc::new(Transfer::streaming());
                let job = self.job(Ask::Stream, &t);
                connections::submit(job, Priority::Now, self.options.fetchers);
                if let Some(old) = self
                    .whole
                    .as_mut()
                    .and_then(|w| w.transfer.replace(Arc::clone(&t)))
                {
                    old.cancel();
                    if self.options.verbosity >= 1 {
                        eprintln!(
                            "[hfile] {}: byte {pos} is behind the stream; reading again from the start",
                            self.name
                        );
                    }
                }
                t
            }
        };
        if let Some(w) = self.whole.as_mut().filter(|w| jumped && !w.warned) {
            w.warned = true;
            eprintln!(
                "[W::hfile] {}: the server ignores Range requests; reading the object as one \
                 stream from its start (the bytes before each region are downloaded too)",
                self.name
            );
        }
        let got = t.read_at(pos, buf);
        self.learn(&t.told())?;
        match got? {
            Available::Copied(n) => {
                self.pos += n as u64;
                self.read_end = self.pos;
                Ok(n)
            }
            Available::Ended => {
                let end = t.received();
                if self.size.is_none() {
                    self.size = Some(end);
                }
                if self.size.is_some_and(|s| pos >= s) {
                    return Ok(0);
                }
                Err(self.protocol(
                    pos,
                    format!("the response ended at byte {end}, before the object's end"),
                ))
            }
        }
    }
}
