//! A reader lent to one query at a time: a file object (`AlignmentFile`, `TabixFile`) keeps
//! one open reader; a query takes it for its life and gives it back, and a query started while
//! it is out opens another (pysam's `multiple_iterators=True`), so two iterators of one file
//! never disturb each other.

use std::sync::Mutex;

use crate::Error;

/// How a reader of the file is opened again.
type Open<R> = Box<dyn Fn() -> Result<R, Error> + Send + Sync>;

/// One file's readers.
pub struct Lender<R> {
    open: Open<R>,
    slot: Mutex<Slot<R>>,
}

struct Slot<R> {
    idle: Option<R>,
    closed: bool,
}

impl<R> Lender<R> {
    /// Starts with `first` idle; `open` makes another when it is lent out.
    pub fn new(first: R, open: impl Fn() -> Result<R, Error> + Send + Sync + 'static) -> Self {
        Lender {
            open: Box::new(open),
            slot: Mutex::new(Slot {
                idle: Some(first),
                closed: false,
            }),
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot<R>> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A reader for a query: the idle one, or a new one when it is lent out.
    pub fn lend(&self) -> Result<R, Error> {
        let idle = {
            let mut slot = self.slot();
            if slot.closed {
                return Err(Error::Closed);
            }
            slot.idle.take()
        };
        match idle {
            Some(reader) => Ok(reader),
            None => (self.open)(),
        }
    }

    /// Takes a reader back after its query (kept if none is idle and the file is open). A
    /// reader whose query failed is not given back: the next query opens the file again.
    pub fn give_back(&self, reader: R) {
        let mut slot = self.slot();
        if !slot.closed && slot.idle.is_none() {
            slot.idle = Some(reader);
        }
    }

    /// Closes the file: the idle reader is dropped, queries still running end with their
    /// reader, and new ones are refused.
    pub fn close(&self) {
        let idle = {
            let mut slot = self.slot();
            slot.closed = true;
            slot.idle.take()
        };
        drop(idle);
    }

    /// Whether [`Lender::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.slot().closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_second_query_opens_its_own_reader_and_close_refuses_more() {
        let opened = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&opened);
        let lender = Lender::new(0usize, move || Ok(count.fetch_add(1, Ordering::SeqCst) + 1));
        let first = lender.lend().unwrap();
        let second = lender.lend().unwrap();
        assert_eq!((first, second), (0, 1));
        lender.give_back(second);
        lender.give_back(first);
        assert_eq!(lender.lend().unwrap(), 1);
        lender.close();
        assert!(lender.is_closed());
        assert_eq!(lender.lend(), Err(Error::Closed));
        assert_eq!(opened.load(Ordering::SeqCst), 1);
    }
}
