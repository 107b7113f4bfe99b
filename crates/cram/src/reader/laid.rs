//! Records laid out by the caller's own layout (the CLI's BAM records) where they were made
//! whole: with workers, on the worker. A container's records then cross to the reader's
//! thread as one buffer instead of five small ones a record, which the reader's thread would
//! lay out and give back (malloc and memmove across threads cost the second thread more than
//! it gained).

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use super::*;
use crate::reader::spare;

/// Lays out one record, appending its bytes to the buffer; an error says why the record
/// cannot be laid out (it ends the reading after the records before it).
pub type Layout = Arc<dyn Fn(&Alignment, &mut Vec<u8>) -> Result<(), String> + Send + Sync>;

/// Buffers given back kept for the next containers (one for each queued container and a
/// spare).
const KEPT_BUFFERS: usize = 8;
/// ...each of at most this many bytes (10 000 short reads lay out in a few MB).
const KEPT_BYTES: usize = 64 << 20;

/// A container's records as the layout made them, each after its length (u32,
/// little-endian), and the error that stopped the layout, if one did.
#[derive(Debug, Default)]
pub struct LaidOut {
    data: Vec<u8>,
    error: Option<String>,
}

impl LaidOut {
    /// Each record's bytes, in order.
    pub fn records(&self) -> impl Iterator<Item = &[u8]> {
        let mut rest = self.data.as_slice();
        std::iter::from_fn(move || {
            let (len, tail) = rest.split_first_chunk::<4>()?;
            let len = u32::from_le_bytes(*len) as usize;
            let (record, tail) = tail.split_at_checked(len)?;
            rest = tail;
            Some(record)
        })
    }

    /// Why the record after the last one could not be laid out.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

/// The layout and the buffers that go round between the reader's thread and the workers.
#[derive(Clone)]
pub(super) struct Laying {
    layout: Layout,
    give: Sender<Vec<u8>>,
    take: Receiver<Vec<u8>>,
}

impl Laying {
    pub(super) fn new(layout: Layout) -> Self {
        let (give, take) = crossbeam_channel::bounded(KEPT_BUFFERS);
        Laying { layout, give, take }
    }

    /// Lays out the records a range keeps (all without one), on the calling thread, freeing
    /// the records there too; and whether a record ended the range.
    pub(super) fn lay_out(&self, recs: Vec<Alignment>, range: Option<&Range>) -> (LaidOut, bool) {
        let mut data = self.take.try_recv().unwrap_or_default();
        data.clear();
        let mut error = None;
        let mut ended = false;
        for a in &recs {
            if let Some(r) = range {
                match Reader::record_fate(r, a.ref_id, a.pos, a.end) {
                    Fate::Keep => {}
                    Fate::Skip => continue,
                    Fate::End => {
                        ended = true;
                        break;
                    }
                }
            }
            let start = data.len();
            data.extend_from_slice(&[0; 4]);
            if let Err(e) = (self.layout)(a, &mut data) {
                data.truncate(start);
                error = Some(e);
                break;
            }
            let len = u32::try_from(data.len() - start - 4).unwrap_or(u32::MAX);
            data[start..start + 4].copy_from_slice(&len.to_le_bytes());
        }
        spare::keep(recs);
        (LaidOut { data, error }, ended)
    }

    /// Keeps a buffer the caller is done with for a later container.
    fn give_back(&self, laid: LaidOut) {
        // A container far larger than usual is not kept for the reader's life.
        if laid.data.capacity() <= KEPT_BYTES {
            let _ = self.give.try_send(laid.data);
        }
    }
}

impl Reader {
    /// Has the records laid out by `layout` where they are made whole, for
    /// [`Reader::next_laid_out`]. Containers read ahead are read again.
    pub fn set_layout(&mut self, layout: Layout) {
        self.drop_queued();
        self.laying = Some(Laying::new(layout));
    }

    /// The next container's records laid out by the layout given to [`Reader::set_layout`]
    /// (by a worker, with threads); `None` at the end of the file or of the range. Without a
    /// layout, an error.
    pub fn next_laid_out(&mut self) -> Result<Option<LaidOut>, Error> {
        let Some(laying) = self.laying.clone() else {
            return Err(Error::at(self.at, "no record layout was set"));
        };
        let recs = if self.pool.is_some() {
            match self.next_decoded()? {
                None => return Ok(None),
                Some(threads::Batch::Laid(laid, _)) => return Ok(Some(laid)),
                Some(threads::Batch::Records(recs)) => recs,
            }
        } else {
            match self.next_container()? {
                None => return Ok(None),
                Some(recs) => recs,
            }
        };
        // The range was applied to these already.
        Ok(Some(laying.lay_out(recs, None).0))
    }

    /// Gives back a container's laid out records the caller is done with: their buffer is
    /// laid out into again.
    pub fn recycle_laid(&mut self, laid: LaidOut) {
        if let Some(l) = &self.laying {
            l.give_back(laid);
        }
    }
}
