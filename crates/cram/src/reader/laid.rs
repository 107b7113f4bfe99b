//! Records laid out by the caller's own layout (the CLI's BAM records) where they were made
//! whole: with workers, on the worker. A container's records then cross to the reader's
//! thread as one buffer instead of five small ones a record, which the reader's thread would
//! lay out and give back (malloc and memmove across threads cost the second thread more than
//! it gained).

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use super::decode::{Bases, Context};
use super::*;
use crate::reader::spare;
use crate::record::Stored;

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
    /// Where each slice's records begin: the number of the first, and the slice's offset.
    slices: Vec<(usize, u64)>,
    /// Records laid out.
    count: usize,
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

    /// The record whose length is at byte `at` of the container's records (0 for the
    /// first), and where the next one's is; `None` past the last.
    pub fn record_at(&self, at: usize) -> Option<(&[u8], usize)> {
        let rest = self.data.get(at..)?;
        let (len, tail) = rest.split_first_chunk::<4>()?;
        let len = u32::from_le_bytes(*len) as usize;
        let record = tail.get(..len)?;
        Some((record, at + 4 + len))
    }

    /// Why the record after the last one could not be laid out.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The offset of the slice record `i` (in [`LaidOut::records`]' order) was read from.
    pub fn slice_of(&self, i: usize) -> u64 {
        let k = self.slices.partition_point(|&(first, _)| first <= i);
        k.checked_sub(1).map_or(0, |k| self.slices[k].1)
    }
}

impl LaidOut {
    /// Lays out one record after the others, or keeps the error that stops the layout.
    fn push(&mut self, a: &Alignment, layout: &Layout) {
        if self.slices.last().is_none_or(|&(_, s)| s != a.slice) {
            self.slices.push((self.count, a.slice));
        }
        let data = &mut self.data;
        let start = data.len();
        data.extend_from_slice(&[0; 4]);
        if let Err(e) = layout(a, data) {
            data.truncate(start);
            self.error = Some(format!("a record of the slice at byte {}: {e}", a.slice));
            return;
        }
        self.count += 1;
        let len = u32::try_from(data.len() - start - 4).unwrap_or(u32::MAX);
        data[start..start + 4].copy_from_slice(&len.to_le_bytes());
    }
}

/// A container's records made whole: as records, or laid out as they are made (each in the
/// one record `one`, reused, whose buffers stay in the cache).
pub(super) enum Made {
    Records(Vec<Alignment>),
    Laid {
        laid: LaidOut,
        layout: Layout,
        one: Box<Alignment>,
    },
}

impl Made {
    /// Nothing made yet: laid out by `laying`, if given.
    pub(super) fn new(laying: Option<&Laying>) -> Made {
        match laying {
            None => Made::Records(Vec::new()),
            Some(l) => Made::Laid {
                laid: LaidOut {
                    data: l.buffer(),
                    ..LaidOut::default()
                },
                layout: Arc::clone(&l.layout),
                one: Box::default(),
            },
        }
    }
}

impl Made {
    /// What a worker hands back of it; `ended`: a record ended the range.
    pub(super) fn into_batch(self, ended: bool) -> threads::Batch {
        match self {
            Made::Records(recs) => threads::Batch::Records(recs),
            Made::Laid { laid, .. } => threads::Batch::Laid(laid, ended),
        }
    }
}

impl Reader {
    /// The next container's records decoded on the calling thread: laid out by `laying` if
    /// given (as they are made whole), else as records; the range applied.
    pub(super) fn next_made(&mut self, laying: Option<&Laying>) -> Result<Option<Made>, Error> {
        let Some((h, body, body_at)) = self.next_stored()? else {
            return Ok(None);
        };
        let (made, ended) = self.decode_container(&h, &body, body_at, laying)?;
        let made = match made {
            Made::Records(recs) => {
                let (recs, ended) = in_range(self.range.as_ref(), recs);
                self.range_done |= ended;
                Made::Records(recs)
            }
            laid => {
                self.range_done |= ended;
                laid
            }
        };
        Ok(Some(made))
    }
}

impl Context {
    /// The records `keep` marks made whole one by one in `one` and laid out, their mate
    /// fields and names from the slice's records as `placed` (mates resolved), until the
    /// layout refuses one.
    pub(super) fn lay_out_kept(
        &self,
        ch: &CompressionHeader,
        (stored, keep, placed): (&Stored, &[bool], &mut [Alignment]),
        bases: &Bases<'_>,
        (laid, layout, one): (&mut LaidOut, &Layout, &mut Alignment),
        at: u64,
    ) -> Result<(), Error> {
        for (i, r) in stored.records.iter().enumerate() {
            if !keep[i] || laid.error.is_some() {
                continue;
            }
            self.alignment(ch, (stored, r), bases.view(r), one, (i, at))?;
            let m = &mut placed[i];
            (one.flags, one.mate_ref_id) = (m.flags, m.mate_ref_id);
            (one.mate_pos, one.tlen) = (m.mate_pos, m.tlen);
            if !m.name.is_empty() {
                // Named by its mate's name or generated (`mates::name_unnamed`).
                std::mem::swap(&mut one.name, &mut m.name);
            }
            laid.push(one, layout);
        }
        Ok(())
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

    /// Lays out records made whole before (a container decoded in turn, its range applied),
    /// on the calling thread, freeing them there too.
    pub(super) fn lay_out(&self, recs: Vec<Alignment>) -> LaidOut {
        let mut laid = LaidOut {
            data: self.buffer(),
            ..LaidOut::default()
        };
        for a in &recs {
            laid.push(a, &self.layout);
            if laid.error.is_some() {
                break;
            }
        }
        spare::keep(recs);
        laid
    }

    /// An empty buffer to lay out a container's records in: one given back, if any.
    fn buffer(&self) -> Vec<u8> {
        let mut data = self.take.try_recv().unwrap_or_default();
        data.clear();
        data
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
            match self.next_made(Some(&laying))? {
                None => return Ok(None),
                Some(Made::Laid { laid, .. }) => return Ok(Some(laid)),
                Some(Made::Records(recs)) => recs,
            }
        };
        Ok(Some(laying.lay_out(recs)))
    }

    /// Gives back a container's laid out records the caller is done with: their buffer is
    /// laid out into again.
    pub fn recycle_laid(&mut self, laid: LaidOut) {
        if let Some(l) = &self.laying {
            l.give_back(laid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_record_laid_out_knows_its_slice() {
        let layout: Layout = Arc::new(|a: &Alignment, d: &mut Vec<u8>| {
            if a.name == b"bad" {
                return Err("no".to_string());
            }
            d.extend_from_slice(&a.name);
            Ok(())
        });
        let mut laid = LaidOut::default();
        for (name, slice) in [("a", 100), ("b", 100), ("c", 900), ("bad", 900)] {
            let a = Alignment {
                name: name.as_bytes().to_vec(),
                slice,
                ..Alignment::default()
            };
            laid.push(&a, &layout);
        }
        assert_eq!(laid.records().count(), 3);
        let slices: Vec<u64> = (0..3).map(|i| laid.slice_of(i)).collect();
        assert_eq!(slices, [100, 100, 900]);
        assert_eq!(laid.error(), Some("a record of the slice at byte 900: no"));
    }
}
