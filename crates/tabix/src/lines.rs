//! Lines of a region, read chunk by chunk as htslib's `hts_itr_next` reads them with
//! `tbx_readrec`: each chunk read with its byte limit, a line returned when it overlaps, the
//! query over at the first line on another sequence or starting at or past the region's end;
//! or, for `.` and `*`, every line from one offset to the end of the file (`read_rest`).

use bgzf::VirtualOffset;
use hfile::HFile;
use index::Chunk;

use region::{Position, RefId};

use crate::{interval, Error, Reader};

/// A line and its 0-based half-open interval.
pub type Record<'l> = (&'l [u8], i64, i64);

/// What a query reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Nothing (an unknown name, an empty range).
    Nothing,
    /// The lines of the chunks that overlap the region: sequence `tid`, 0-based half-open
    /// `[beg, end)` (signed, as the lines' intervals are).
    Region { tid: usize, beg: i64, end: i64 },
    /// Every line from the one chunk's start to the end of the file; a start of 0 reads on
    /// from where the data is, as htslib skips its seek for offset 0.
    Rest,
}

impl Mode {
    /// The lines of region `[beg, end)` of sequence `tid`.
    pub(crate) fn region(tid: RefId, beg: Position, end: Position) -> Mode {
        let signed = |p: Position| i64::try_from(p.get()).unwrap_or(i64::MAX);
        Mode::Region {
            tid: tid.get(),
            beg: signed(beg),
            end: signed(end),
        }
    }
}

/// The longest line read (bgzf_getline has no bound; this keeps a file without newlines from
/// taking all memory).
const MAX_LINE: usize = 1 << 30;

/// Reads one line into `line` (without its `\n`, and without a `\r` before it, as
/// `bgzf_getline` gives it); `false` at the end of the data.
pub(crate) fn read_line(data: &mut bgzf::Reader<HFile>, line: &mut Vec<u8>) -> Result<bool, Error> {
    line.clear();
    let start = data.virtual_offset();
    loop {
        let buf = data.fill_block()?;
        if buf.is_empty() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(!line.is_empty());
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(p) => (p, true),
            None => (buf.len(), false),
        };
        if line.len() + take > MAX_LINE || line.try_reserve(take).is_err() {
            return Err(Error::LineTooLong {
                name: data.name().to_string(),
                offset: start,
            });
        }
        line.extend_from_slice(&buf[..take]);
        data.advance(take + usize::from(done));
        if done {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(true);
        }
    }
}

/// The lines of one region, in file order.
#[derive(Debug)]
pub struct Query<'a> {
    reader: &'a mut Reader,
    mode: Mode,
    chunks: Vec<Chunk>,
    /// The chunk being read (`None` before the first).
    at: Option<usize>,
    /// Where the last line read ended.
    curr: VirtualOffset,
    done: bool,
    /// The last sequence name seen known in [`Mode::Rest`].
    known: Vec<u8>,
    /// The start of the last line read of a region that reaches it (lines come sorted by it).
    last_beg: i64,
    /// The error the query gives at once (an index that cannot answer it).
    pub(crate) failed: Option<Error>,
}

impl<'a> Query<'a> {
    pub(crate) fn new(reader: &'a mut Reader, mode: Mode, chunks: Vec<Chunk>) -> Self {
        let done = mode == Mode::Nothing || chunks.is_empty();
        Query {
            reader,
            mode,
            chunks,
            at: None,
            curr: VirtualOffset::new(0, 0),
            done,
            known: Vec::new(),
            last_beg: i64::MIN,
            failed: None,
        }
    }

    /// The next line overlapping the region, or `None` when there are no more.
    ///
    /// # Errors
    /// The data cannot be read, or a line in the region cannot be parsed.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>, Error> {
        Ok(self.next_record()?.map(|(line, _, _)| line))
    }

    /// The next line with its interval (0-based, half-open, as tabix reads it from the line),
    /// or `None` when there are no more.
    ///
    /// # Errors
    /// The data cannot be read, or a line in the region cannot be parsed.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        if let Some(e) = self.failed.take() {
            self.done = true;
            return Err(e);
        }
        while !self.done {
            if self.at.is_none() || self.curr >= self.chunks[self.at.unwrap_or(0)].end {
                let next = self.at.map_or(0, |i| i + 1);
                let Some(chunk) = self.chunks.get(next) else {
                    self.done = true;
                    break;
                };
                // Chunks that follow one another are read on without a seek, as htslib does.
                let joined = self.at.is_some_and(|i| self.chunks[i].end == chunk.start);
                if self.mode == Mode::Rest {
                    let r = &mut *self.reader;
                    let at = match chunk.start.raw() {
                        0 => r.data.virtual_offset(),
                        _ => chunk.start,
                    };
                    r.data.seek_limit(at, r.size)?;
                } else if !joined {
                    let limit = self.limit_from(next);
                    self.reader.data.seek_limit(chunk.start, limit)?;
                }
                self.at = Some(next);
            }
            let r = &mut *self.reader;
            let line_at = r.data.virtual_offset();
            if !read_line(&mut r.data, &mut r.line)? {
                self.done = true;
                break;
            }
            self.curr = r.data.virtual_offset();
            let Some(iv) = interval::parse(&r.meta, &r.line) else {
                return Err(Error::Parse {
                    name: r.data.name().to_string(),
                    offset: line_at,
                    line: String::from_utf8_lossy(&r.line[..r.line.len().min(200)]).into_owned(),
                });
            };
            let (beg, end) = (iv.beg, iv.end);
            let Mode::Region {
                tid,
                beg: region_beg,
                end: region_end,
            } = self.mode
            else {
                // htslib's `get_tid` fails for a name the index does not hold.
                // (The last name found is kept: lines come grouped by sequence.)
                let known = (!self.known.is_empty() && self.known.as_slice() == iv.name)
                    || r.meta.names.iter().any(|n| n.as_bytes() == iv.name);
                if !known {
                    return Err(Error::Parse {
                        name: r.data.name().to_string(),
                        offset: line_at,
                        line: String::from_utf8_lossy(&r.line[..r.line.len().min(200)])
                            .into_owned(),
                    });
                }
                self.known.clear();
                self.known.extend_from_slice(iv.name);
                return Ok(Some((&self.reader.line, beg, end)));
            };
            let chunk_end = self.chunks[self.at.unwrap_or(0)].end;
            let mismatch = |what: String| Error::Mismatch {
                name: r.data.name().to_string(),
                at: format!("virtual offset {line_at}"),
                what,
            };
            if r.meta.names.get(tid).map(String::as_bytes) != Some(iv.name) {
                let seq = String::from_utf8_lossy(iv.name);
                // tabix fails on a name its index does not hold ("Reading failed"), and ends
                // the region at another sequence's line; in the index's chunks for a region
                // there is none in a file the index fits, so both are errors here.
                let what = match r.meta.names.iter().any(|n| n.as_bytes() == iv.name) {
                    true => format!(
                        "a line of {seq} lies in the index's chunks for {}: the index does \
                         not fit the data",
                        r.meta.names[tid]
                    ),
                    false => format!("a line names {seq}, a sequence the index does not hold"),
                };
                return Err(mismatch(what));
            }
            // Out of order among the lines that reach the region, a line may end it before
            // others that overlap it (those wholly before it are passed over anyway).
            if end > region_beg {
                if beg < self.last_beg {
                    return Err(mismatch(format!(
                        "a line starting at {} follows one starting at {}: the data is not \
                         sorted as its index says",
                        beg + 1,
                        self.last_beg + 1
                    )));
                }
                self.last_beg = beg;
            }
            if self.curr > chunk_end && line_at < chunk_end {
                return Err(mismatch(format!(
                    "a line runs past the end of the index's chunk ({chunk_end}): the index does \
                     not fit the data"
                )));
            }
            if beg >= region_end {
                self.done = true;
                break;
            }
            if end > region_beg && region_end > beg {
                return Ok(Some((&self.reader.line, beg, end)));
            }
        }
        Ok(None)
    }

    /// The byte limit for reading from chunk `i` on: the end of the run of chunks that follow
    /// one another without a gap (they are read without a seek).
    fn limit_from(&self, i: usize) -> u64 {
        let mut j = i;
        while j + 1 < self.chunks.len() && self.chunks[j].end == self.chunks[j + 1].start {
            j += 1;
        }
        bgzf::byte_end(self.chunks[j].end, &self.reader.starts, self.reader.size)
    }
}

impl Iterator for Query<'_> {
    type Item = Result<Vec<u8>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_line().map(|l| l.map(<[u8]>::to_vec)).transpose()
    }
}
