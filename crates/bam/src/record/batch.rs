//! Records copied end to end into one buffer. Records read in place borrow the block they were
//! read from; to hand many of them to another thread (to format as SAM, to lay into Arrow
//! columns) they are copied here: one growing buffer of bytes and one of fields, no allocation
//! a record, both kept for the next batch after [`Batch::clear`].

use std::ops::Range;

use super::{Record, RecordRef};

/// Records copied for another thread: their bytes end to end, and each record's fields with
/// the range of its bytes.
#[derive(Debug, Default)]
pub struct Batch {
    bytes: Vec<u8>,
    records: Vec<Record<Range<usize>>>,
}

impl Batch {
    /// An empty batch with room for `records` records taking `bytes` bytes.
    pub fn with_capacity(records: usize, bytes: usize) -> Batch {
        Batch {
            bytes: Vec::with_capacity(bytes),
            records: Vec::with_capacity(records),
        }
    }

    /// Copies `record` (owned or read in place) in.
    #[inline]
    pub fn push<D: AsRef<[u8]>>(&mut self, record: &Record<D>) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(record.data());
        self.records.push(record.with_data(start..self.bytes.len()));
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there is no record.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The bytes the records take.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.records.clear();
    }

    /// The records, in the order they were pushed, read in place from the batch.
    pub fn iter(&self) -> impl Iterator<Item = RecordRef<'_>> + '_ {
        // Every range was taken from `bytes` as it was pushed; `get` cannot miss.
        self.records
            .iter()
            .filter_map(|r| self.bytes.get(r.storage().clone()).map(|b| r.with_data(b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &[u8], pos: u32) -> Record {
        let mut data = Vec::new();
        let name_len = name.len() as u32 + 1;
        for word in [
            0u32,
            pos,
            4681 << 16 | 60 << 8 | name_len,
            0,
            0,
            u32::MAX,
            u32::MAX,
            0,
        ] {
            data.extend_from_slice(&word.to_le_bytes());
        }
        data.extend_from_slice(name);
        data.push(0);
        Record::decode(data, 1).unwrap()
    }

    #[test]
    fn records_come_back_as_pushed_and_clear_keeps_room() {
        let mut batch = Batch::with_capacity(2, 64);
        assert!(batch.is_empty());
        batch.push(&record(b"r1", 10));
        batch.push(&record(b"read2", 20).as_record_ref());
        assert_eq!(batch.len(), 2);
        assert_eq!(batch.byte_len(), 32 + 3 + 32 + 6);
        let got: Vec<(Vec<u8>, i32)> = batch
            .iter()
            .map(|r| (r.name().to_vec(), r.stored_coordinates().pos))
            .collect();
        assert_eq!(got, vec![(b"r1".to_vec(), 10), (b"read2".to_vec(), 20)]);
        let room = batch.bytes.capacity();
        batch.clear();
        assert!(batch.is_empty());
        assert_eq!(batch.byte_len(), 0);
        assert_eq!(batch.bytes.capacity(), room);
    }
}
