//! How a count steps over records ([`crate::Query::count_records`]): the records the quick
//! check of [`count_check`] accepts are stepped over in place, undecoded; any other is read in
//! full, so a count meets the errors a full read meets.

use bgzf::Source;

use crate::count_check;
use crate::record_reader::RecordReader;
use crate::Result;

impl<S: Source> RecordReader<S> {
    /// Steps over the next records in file order for a count, and returns how many: every
    /// record from here that is whole in the current block and that
    /// [`count_check::decodes_as_is`] accepts, in one go; when the next is not such a record,
    /// that one through [`RecordReader::read_record_ref`] (so a damaged record fails with the error a
    /// full read gives). 0 at the end of the file.
    #[inline]
    pub(crate) fn skip_records(&mut self) -> Result<u64> {
        let n_ref = self.header.targets().len();
        {
            let buffered = self.bgzf.buffer();
            let (mut at, mut n) = (0usize, 0u64);
            while let Some(data) = whole_record(&buffered[at..]) {
                if !count_check::decodes_as_is(data, n_ref) {
                    break;
                }
                at += 4 + data.len();
                n += 1;
            }
            if n > 0 {
                self.last = None;
                self.bgzf.advance(at);
                return Ok(n);
            }
        }
        Ok(u64::from(self.read_record_ref()?.is_some()))
    }

    /// [`RecordReader::skip_records`] for one record, telling where it lies, for a count of regions:
    /// a record whole in the current block that [`count_check::span_if_as_is`] accepts is
    /// stepped over undecoded; any other is read in full, with a full read's errors.
    #[inline]
    pub(crate) fn skip_record_span(&mut self) -> Result<Option<count_check::Span>> {
        let n_ref = self.header.targets().len();
        let whole = whole_record(self.bgzf.buffer())
            .and_then(|data| Some((data.len(), count_check::span_if_as_is(data, n_ref)?)));
        if let Some((len, span)) = whole {
            self.last_record = self.bgzf.virtual_offset();
            self.last = None;
            self.bgzf.advance(4 + len);
            return Ok(Some(span));
        }
        Ok(self.read_record_ref()?.map(|r| count_check::Span::of(&r)))
    }
}

/// The bytes after `block_size` of the record at the start of `buffered`, when its
/// `block_size` is one a record can have and the record is whole in the buffer.
#[inline(always)]
fn whole_record(buffered: &[u8]) -> Option<&[u8]> {
    let size = buffered.get(..4)?;
    let block_size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
    if !(32..=i32::MAX as usize).contains(&block_size) {
        return None;
    }
    buffered.get(4..4 + block_size)
}
