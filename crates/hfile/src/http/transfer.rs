//! One request's bytes, handed from the connection thread that receives them to the reader
//! that consumes them, as they arrive: the reader can use the first block of a span while the
//! rest is still on the wire.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::Error;

/// What a response told about the object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Told {
    /// The object's size.
    pub total: Option<u64>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

/// A streamed transfer keeps at most this much that the reader has not read yet: the
/// connection thread waits while it is full.
const STREAM_AHEAD: usize = 16 << 20;

/// A streamed transfer keeps this much before the reader's position (for short steps back).
const STREAM_BEHIND: u64 = 256 << 10;

/// Bytes a streamed transfer no longer needs are dropped in pieces of at least this much.
const STREAM_DROP: usize = 1 << 20;

#[derive(Debug, Default)]
struct State {
    /// The object offset of `data[0]`; for a suffix request, known once the response starts.
    start: Option<u64>,
    data: Vec<u8>,
    /// Streamed: bytes dropped from the front of `data`, and the lowest offset the reader may
    /// still read.
    dropped: u64,
    floor: u64,
    told: Told,
    /// `Some` once the transfer is over: `Ok` when every byte asked for (or up to the end of
    /// the object) arrived.
    outcome: Option<Result<(), Error>>,
}

/// A request's bytes, shared by the connection thread filling it and the reader.
#[derive(Debug)]
pub(crate) struct Transfer {
    state: Mutex<State>,
    changed: Condvar,
    cancelled: AtomicBool,
    /// Bytes asked for (an upper bound on what arrives).
    len: u64,
    /// A whole object read as one stream (a server that ignores `Range`): bytes behind the
    /// reader are dropped, and the connection thread waits while too many lie ahead of it.
    streaming: bool,
}

impl Drop for Transfer {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        super::spare::give(std::mem::take(&mut state.data));
    }
}

/// The outcome of waiting for a byte.
#[derive(Debug)]
pub(crate) enum Available {
    /// Bytes were copied.
    Copied(usize),
    /// The transfer ended (complete) before reaching that byte: the object ends there.
    Ended,
}

impl Transfer {
    /// A transfer of up to `len` bytes from `start` (`None`: a suffix request).
    pub(crate) fn new(start: Option<u64>, len: u64) -> Transfer {
        Transfer {
            state: Mutex::new(State {
                start,
                ..State::default()
            }),
            changed: Condvar::new(),
            cancelled: AtomicBool::new(false),
            len,
            streaming: false,
        }
    }

    /// A whole object from its first byte, streamed with bounded memory.
    pub(crate) fn streaming() -> Transfer {
        let mut t = Transfer::new(Some(0), u64::MAX);
        t.streaming = true;
        t
    }

    /// The lowest object offset this transfer can still serve.
    pub(crate) fn first_held(&self) -> u64 {
        let s = self.lock();
        s.start.unwrap_or(0)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes asked for.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The reader no longer wants it: a queued request is not sent, a running one may stop.
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        // A connection thread waiting for room wakes up and stops.
        self.changed.notify_all();
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    // --- the connection thread's side ---

    /// Bytes received so far (what a retry resumes after).
    pub(crate) fn received(&self) -> u64 {
        let s = self.lock();
        s.dropped + s.data.len() as u64
    }

    /// Forgets the bytes received, for a request that cannot resume (a suffix is asked again
    /// whole). Only for a transfer read after it is over ([`Transfer::wait_all`]).
    pub(crate) fn discard(&self) {
        self.lock().data.clear();
    }

    pub(crate) fn set_start(&self, start: u64) {
        self.lock().start = Some(start);
    }

    pub(crate) fn append(&self, bytes: &[u8]) {
        let mut s = self.lock();
        if self.streaming {
            s = self.make_room(s);
        } else if s.data.capacity() == 0 {
            // One buffer for the whole window (it is bounded by the request size).
            s.data = super::spare::take(self.len.min(64 << 20) as usize);
        }
        s.data.extend_from_slice(bytes);
        drop(s);
        self.changed.notify_all();
    }

    /// Streamed: drops what lies behind the reader, then waits while the bytes ahead of it
    /// fill the allowance (or until the transfer is cancelled).
    fn make_room<'a>(&'a self, mut s: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        loop {
            drop_behind(&mut s);
            let ahead = s
                .data
                .len()
                .saturating_sub(s.floor.saturating_sub(s.start.unwrap_or(0)) as usize);
            if ahead < STREAM_AHEAD || self.is_cancelled() {
                return s;
            }
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    pub(crate) fn tell(&self, told: &Told) {
        let mut s = self.lock();
        if told.total.is_some() {
            s.told.total = told.total;
        }
        if told.etag.is_some() {
            s.told.etag.clone_from(&told.etag);
        }
        if told.last_modified.is_some() {
            s.told.last_modified.clone_from(&told.last_modified);
        }
    }

    pub(crate) fn finish(&self, outcome: Result<(), Error>) {
        self.lock().outcome = Some(outcome);
        self.changed.notify_all();
    }

    // --- the reader's side ---

    /// What the responses told about the object so far.
    pub(crate) fn told(&self) -> Told {
        self.lock().told.clone()
    }

    /// The object offset of the first byte, once known.
    pub(crate) fn start(&self) -> Option<u64> {
        self.lock().start
    }

    /// True once the transfer is over (successfully or not).
    pub(crate) fn is_finished(&self) -> bool {
        self.lock().outcome.is_some()
    }

    /// Waits until the byte at object offset `pos` has arrived (or the transfer is over), then
    /// copies from it into `buf`. An error if the transfer failed before reaching `pos`.
    pub(crate) fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<Available, Error> {
        let mut s = self.lock();
        if self.streaming {
            // What lies well behind the reader may go; the connection thread may have room now.
            s.floor = pos.saturating_sub(STREAM_BEHIND);
            // Dropped here too, not only as bytes arrive: once the whole object is in, no
            // arrival would ever drop them, and what a read finds held would depend on
            // whether the transfer had finished.
            drop_behind(&mut s);
            self.changed.notify_all();
        }
        loop {
            if let Some(start) = s.start {
                let have_end = start + s.data.len() as u64;
                if pos >= start && pos < have_end {
                    let from = (pos - start) as usize;
                    let n = buf.len().min(s.data.len() - from);
                    buf[..n].copy_from_slice(&s.data[from..from + n]);
                    return Ok(Available::Copied(n));
                }
            }
            match &s.outcome {
                Some(Ok(())) => return Ok(Available::Ended),
                Some(Err(e)) => return Err(e.duplicate()),
                None => {}
            }
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Waits until the response's headers have been taken in (or the transfer is over), and
    /// returns what they told; errors are left for the reader of the bytes.
    pub(crate) fn wait_told(&self) -> Told {
        let mut s = self.lock();
        while s.told.total.is_none() && s.data.is_empty() && s.outcome.is_none() {
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.told.clone()
    }

    /// The status a finished request was refused with (its retries already spent): the
    /// answer for the whole object, such as a 404, that no other request needs to ask again.
    pub(crate) fn refusal(&self) -> Option<Error> {
        match &self.lock().outcome {
            // A 416 may only say the object is shorter than the range: the size is still due.
            Some(Err(e @ Error::Status { status, .. })) if *status != 416 => Some(e.duplicate()),
            _ => None,
        }
    }

    /// Waits for the end of the transfer, whatever its outcome.
    pub(crate) fn wait_finished(&self) {
        let mut s = self.lock();
        while s.outcome.is_none() {
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Waits for the end of the transfer and returns its bytes (for small requests).
    pub(crate) fn wait_all(&self) -> Result<(Option<u64>, Vec<u8>), Error> {
        let mut s = self.lock();
        loop {
            match &s.outcome {
                Some(Ok(())) => return Ok((s.start, s.data.clone())),
                Some(Err(e)) => return Err(e.duplicate()),
                None => s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner()),
            }
        }
    }
}

/// Streamed: drops what lies behind the reader's floor, a megabyte at a time (or all of it;
/// on a stream's first bytes, this is what sets its start, 0).
fn drop_behind(s: &mut State) {
    let start = s.start.unwrap_or(0);
    let behind = s.floor.saturating_sub(start).min(s.data.len() as u64) as usize;
    if behind >= STREAM_DROP || behind == s.data.len() {
        s.data.drain(..behind);
        s.dropped += behind as u64;
        s.start = Some(start + behind as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn bytes_are_readable_as_they_arrive() {
        let t = Arc::new(Transfer::new(Some(100), 10));
        let writer = Arc::clone(&t);
        let h = std::thread::spawn(move || {
            writer.append(b"abcde");
            writer.append(b"fghij");
            writer.finish(Ok(()));
        });
        let mut buf = [0u8; 4];
        // Blocks until byte 107 is there.
        assert!(matches!(
            t.read_at(107, &mut buf).unwrap(),
            Available::Copied(3)
        ));
        assert_eq!(&buf[..3], b"hij");
        h.join().unwrap();
        assert!(matches!(
            t.read_at(110, &mut buf).unwrap(),
            Available::Ended
        ));
        assert!(matches!(
            t.read_at(100, &mut buf).unwrap(),
            Available::Copied(4)
        ));
        assert_eq!(&buf, b"abcd");
    }

    #[test]
    fn a_failure_reaches_the_reader_after_the_good_bytes() {
        let t = Transfer::new(Some(0), 10);
        t.append(b"abc");
        t.finish(Err(Error::Remote {
            name: "u".into(),
            offset: 3,
            message: "reset".into(),
        }));
        let mut buf = [0u8; 10];
        assert!(matches!(
            t.read_at(1, &mut buf).unwrap(),
            Available::Copied(2)
        ));
        assert!(t.read_at(3, &mut buf).is_err());
        assert!(t.wait_all().is_err());
    }
}
