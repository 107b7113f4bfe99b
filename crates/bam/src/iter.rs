//! Records as iterators: a region query's records, and a whole file's in order.

use crate::query::Query;
use crate::reader::Reader;
use crate::record::Record;
use crate::Result;

/// The records of a region query (`for record in reader.query(target)? { ... }`); an error
/// ends the iteration after it is returned.
pub struct QueryRecords<'r> {
    query: Query<'r>,
    failed: bool,
}

/// One step of an iterator that ends after its first error: `next` reads one record.
fn step(
    failed: &mut bool,
    next: impl FnOnce() -> Result<Option<Record>>,
) -> Option<Result<Record>> {
    if *failed {
        return None;
    }
    let item = next().transpose();
    *failed = matches!(item, Some(Err(_)));
    item
}

impl<'r> IntoIterator for Query<'r> {
    type Item = Result<Record>;
    type IntoIter = QueryRecords<'r>;

    fn into_iter(self) -> QueryRecords<'r> {
        QueryRecords {
            query: self,
            failed: false,
        }
    }
}

impl QueryRecords<'_> {
    /// The header of the file being queried.
    pub fn header(&self) -> &crate::Header {
        self.query.header()
    }
}

impl Iterator for QueryRecords<'_> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        let query = &mut self.query;
        step(&mut self.failed, || query.next_record())
    }
}

/// Every record of a file from where the reader stands, in file order
/// ([`Reader::records`]).
pub struct Records<'r> {
    reader: &'r mut Reader,
    failed: bool,
}

impl Reader {
    /// The records from the current position (the first record, after opening) to the end.
    pub fn records(&mut self) -> Records<'_> {
        Records {
            reader: self,
            failed: false,
        }
    }
}

impl Iterator for Records<'_> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        let reader = &mut *self.reader;
        step(&mut self.failed, || reader.read_record())
    }
}
