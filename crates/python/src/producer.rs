//! A query run on a thread of its own, its output handed over in batches through a bounded
//! channel. The thread owns the reader for the query's life (a `bam::Query` borrows its
//! reader, so it cannot be kept between two calls from Python), decodes without the GIL, and
//! holds at most [`DEPTH`] batches ready for the consumer (an Arrow query has a few more
//! being laid out by its workers: [`crate::arrow::workers`]). A consumer that goes away (its
//! iterator collected) makes the next hand-over fail, and the thread stops there.

use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, Sender};

use crate::Error;

/// Batches a producer may hold ready before it waits for the consumer.
pub const DEPTH: usize = 2;

/// The output of a query running on its own thread.
pub struct Producer<T> {
    rx: Receiver<Result<T, Error>>,
}

/// Where the producing thread hands its batches.
pub struct Hand<T> {
    tx: Sender<Result<T, Error>>,
}

impl<T> Hand<T> {
    /// Hands `item` over, waiting while [`DEPTH`] are still unread; `false` when the consumer
    /// is gone (stop producing).
    pub fn give(&self, item: T) -> bool {
        self.tx.send(Ok(item)).is_ok()
    }
}

impl<T: Send + 'static> Producer<T> {
    /// Starts `work` on a new thread; an error it returns is handed over after its batches.
    pub fn spawn<F>(name: &str, work: F) -> Result<Producer<T>, Error>
    where
        F: FnOnce(&Hand<T>) -> Result<(), Error> + Send + 'static,
    {
        let (tx, rx) = bounded(DEPTH);
        let hand = Hand { tx };
        thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                if let Err(e) = work(&hand) {
                    let _ = hand.tx.send(Err(e));
                }
            })
            .map_err(|e| Error::Read(format!("cannot start a reading thread: {e}")))?;
        Ok(Producer { rx })
    }

    /// The next batch, waiting for it; `None` once the thread has ended.
    pub fn next(&self) -> Option<Result<T, Error>> {
        self.rx.recv().ok()
    }
}

/// How many records a batch holds: few at first, so the first records of a remote region
/// reach the consumer at once, then doubling to [`Sizer::MAX`]; a batch is also handed over
/// when records have been coming slowly for [`Sizer::WAIT`].
pub struct Sizer {
    size: usize,
    started: Instant,
}

impl Default for Sizer {
    fn default() -> Sizer {
        Sizer {
            size: Sizer::FIRST,
            started: Instant::now(),
        }
    }
}

impl Sizer {
    /// The first batch's size.
    pub const FIRST: usize = 64;
    /// The largest batch.
    pub const MAX: usize = 4096;
    /// A batch that has taken this long is handed over however few records it holds.
    pub const WAIT: Duration = Duration::from_millis(20);

    /// Whether a batch holding `len` records is ready to go.
    #[inline]
    pub fn full(&self, len: usize) -> bool {
        // The clock is read every 16 records: time matters only when records come slowly.
        len >= self.size
            || (len.is_multiple_of(16) && len > 0 && self.started.elapsed() >= Sizer::WAIT)
    }

    /// Starts the next batch, larger than the last.
    pub fn next_batch(&mut self) {
        self.size = (self.size * 2).min(Sizer::MAX);
        self.started = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_arrive_in_order_then_the_error() {
        let producer = Producer::spawn("test", |hand: &Hand<usize>| {
            for i in 0..5 {
                if !hand.give(i) {
                    return Ok(());
                }
            }
            Err(Error::Read("x: broken at byte 7".into()))
        })
        .unwrap();
        let mut got = Vec::new();
        while let Some(item) = producer.next() {
            got.push(item);
        }
        let expected: Vec<Result<usize, Error>> = (0..5)
            .map(Ok)
            .chain([Err(Error::Read("x: broken at byte 7".into()))])
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn a_consumer_that_leaves_stops_the_thread() {
        let (done_tx, done_rx) = bounded(1);
        let producer = Producer::spawn("test", move |hand: &Hand<usize>| {
            let mut handed = 0;
            while hand.give(handed) {
                handed += 1;
            }
            let _ = done_tx.send(handed);
            Ok(())
        })
        .unwrap();
        assert_eq!(producer.next().map(Result::ok), Some(Some(0)));
        drop(producer);
        let handed = done_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        // The one read, and at most DEPTH + 1 more that were ready or in flight.
        assert!(handed <= DEPTH + 2, "{handed}");
    }

    #[test]
    fn batch_sizes_double_to_the_cap() {
        let mut s = Sizer::default();
        assert!(!s.full(Sizer::FIRST - 1));
        assert!(s.full(Sizer::FIRST));
        for _ in 0..20 {
            s.next_batch();
        }
        assert!(!s.full(Sizer::MAX - 1) || s.started.elapsed() >= Sizer::WAIT);
        assert!(s.full(Sizer::MAX));
    }
}
