//! The records of a query on an [`super::Reader`]: BAM records for either format, owned or
//! read in place, with what samtools asks of a query besides (a count, the regions the index
//! cannot answer, the EOF marker, records held back).

use bam::{Record, RecordError, RecordRef};

use crate::cram_alignment::CramRecords;
use crate::{Error, Result};

/// The records of a query, as BAM records for either format: [`Records::next_record`], or
/// as an iterator.
pub struct Records<'r>(Kind<'r>);

pub(super) enum Kind<'r> {
    Bam(bam::Query<'r>),
    Cram(CramRecords<'r>),
}

impl<'r> Records<'r> {
    pub(super) fn new(kind: Kind<'r>) -> Records<'r> {
        Records(kind)
    }

    /// Hands out only the records `keep` accepts (samtools' `-P` keeps the records of its
    /// regions and their mates from a wider query).
    pub fn retain(self, keep: impl FnMut(&RecordRef<'_>) -> bool + 'r) -> Records<'r> {
        Records(match self.0 {
            Kind::Bam(q) => Kind::Bam(q.retain(keep)),
            Kind::Cram(c) => Kind::Cram(c.retain(Box::new(keep))),
        })
    }

    /// How many records are left, as counting [`Records::next_record_ref`]'s would give, and
    /// the same error where that would fail (a BAM's steps over records it need not decode).
    pub fn count(&mut self) -> Result<u64> {
        match &mut self.0 {
            Kind::Bam(q) => Ok(q.count_records()?),
            Kind::Cram(c) => {
                let mut n = 0;
                while c.next_record_ref()?.is_some() {
                    n += 1;
                }
                Ok(n)
            }
        }
    }

    /// Whether the index cannot answer region `i` of [`super::Reader::query`] at all (a
    /// reference beyond a BAM's index, an end before the start): samtools warns that the
    /// region is invalid and carries on.
    pub fn is_invalid(&self, i: usize) -> bool {
        match &self.0 {
            Kind::Bam(q) => q.is_invalid(i),
            Kind::Cram(_) => false,
        }
    }

    /// Whether the file ends with its EOF marker, where that can be told: a BAM's from its
    /// last bytes, at once; a CRAM's once its records have been read to its end (`None`
    /// before).
    pub fn eof_marker(&mut self) -> Result<Option<bool>> {
        match &mut self.0 {
            Kind::Bam(q) => Ok(Some(q.has_eof_marker()?)),
            Kind::Cram(c) => Ok(c.eof_marker()),
        }
    }

    /// The next record; `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        match &mut self.0 {
            Kind::Bam(q) => Ok(q.next_record()?),
            Kind::Cram(c) => c.next_record(),
        }
    }

    /// The header the records are read with (the file's, or, when a stale cached header made
    /// the reader open the file again before this query, the new one).
    pub fn header(&self) -> &bam::Header {
        match &self.0 {
            Kind::Bam(q) => q.header(),
            Kind::Cram(c) => c.header(),
        }
    }

    /// The next record read in place, with no copy and no allocation: a BAM record borrows the
    /// block it lies in, a CRAM record its container's records as the decoding laid them out.
    pub fn next_record_ref(&mut self) -> Result<Option<RecordRef<'_>>> {
        match &mut self.0 {
            Kind::Bam(q) => Ok(q.next_record_ref()?),
            Kind::Cram(c) => c.next_record_ref(),
        }
    }

    /// The error for a fault found in the record just read (its aux data, checked when it is
    /// printed), naming the file and where the record is: a BAM record's virtual offset, a
    /// CRAM record's slice.
    pub fn record_error(&self, kind: RecordError) -> Error {
        match &self.0 {
            Kind::Bam(q) => Error::Bam(bam::Error::Record {
                name: q.reader().location().to_string(),
                offset: q.reader().last_record_offset(),
                kind,
            }),
            Kind::Cram(c) => c.record_error(kind),
        }
    }
}

impl Iterator for Records<'_> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        self.next_record().transpose()
    }
}
