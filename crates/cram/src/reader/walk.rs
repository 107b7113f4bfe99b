//! Which container a reading takes next, and its bytes. A whole file: each in turn. A region
//! ([`Reader::read_ranges`]): from the container the index names on, each container's own
//! header deciding whether it is skipped, read, or ends the region, as htslib reads on from
//! `cram_seek_to_refpos`; the planned byte ranges only bound each read (and tell a remote
//! file what to fetch), so that an index line dropped, edited or stale past the first
//! container loses nothing. The multi-region iterator's containers
//! ([`Reader::read_planned`]): every container within the planned byte ranges, as
//! `hts_itr_multi_cram` reads them. A container the index led to is checked against the
//! index's lines for it: a disagreement is an error.

use super::*;
use crate::crai::CraiEntry;

/// Bytes first asked for a container header read past the plan (a region's reading on after
/// its last planned container, usually to meet the container that ends it). A header with
/// more landmarks is read again longer.
pub const HEADER_PEEK: u64 = 256;

/// A container as read: its header, and its body and the body's offset unless it was
/// skipped unread.
pub(super) type Read1 = (ContainerHeader, Option<(Vec<u8>, u64)>);

impl Reader {
    /// Checks each container the index leads to (a region's first, the multi-region
    /// iterator's) against the index's lines for it (`entries`, the `.crai`).
    pub fn set_index(&mut self, entries: &[CraiEntry]) {
        let mut by_offset: BTreeMap<u64, Vec<CraiEntry>> = BTreeMap::new();
        for e in entries {
            by_offset.entry(e.container).or_default().push(*e);
        }
        self.index = by_offset;
    }

    /// Where the next container is read (`self.at`) and how far ahead (`self.limit`); whether
    /// the index led there (`Some(true)`). `None` when the plan has nothing more.
    fn position(&mut self) -> Result<Option<bool>, Error> {
        let single = self.range.is_some();
        let Some(queue) = self.planned.as_mut() else {
            return Ok(Some(false));
        };
        if std::mem::take(&mut self.fresh) {
            let Some(first) = queue.pop_front() else {
                return Ok(None);
            };
            // A first container planned as its header alone (`crai::plan_for_range`).
            let (limit, in_plan) = match first.is_empty() {
                true => (first.start.saturating_add(HEADER_PEEK), false),
                false => (first.end, true),
            };
            (self.at, self.limit, self.in_plan) = (first.start, limit, in_plan);
            return Ok(Some(true));
        }
        if self.in_plan && self.at < self.limit {
            // More containers in the planned bytes than the index named.
            return Ok(Some(false));
        }
        // Planned containers the reading has passed: their offsets fell inside a container
        // read. A region's reading on goes by the headers; the multi-region iterator's plan
        // is the index's word, which is wrong.
        while let Some(f) = queue.front().filter(|f| f.start < self.at).cloned() {
            if !single {
                return Err(Error::at(
                    f.start,
                    format!(
                        "the .crai names a container here, inside one that ends at byte {} \
                         (the index is stale or damaged)",
                        self.at
                    ),
                ));
            }
            queue.pop_front();
        }
        Ok(match queue.front().cloned() {
            Some(f) if f.start == self.at || !single => {
                queue.pop_front();
                (self.at, self.limit, self.in_plan) = (f.start, f.end, true);
                // The multi-region iterator goes where the index says; a region's reading
                // only meets the container there.
                Some(!single)
            }
            // A region reads on: the container after the last planned one (or one the plan
            // skipped) is judged by its own header.
            _ if single => {
                (self.limit, self.in_plan) = (self.at.saturating_add(HEADER_PEEK), false);
                Some(false)
            }
            _ => None,
        })
    }

    /// The next container whose records are wanted, as stored: its header, its body and the
    /// body's offset; `None` at the end of the file or of the range.
    pub(super) fn next_stored(&mut self) -> Result<Option<(ContainerHeader, Vec<u8>, u64)>, Error> {
        loop {
            if self.range_done && (self.planned.is_none() || !self.next_range()) {
                return Ok(None);
            }
            let Some(led) = self.position()? else {
                // The plan is read (or the range has no container): the next range, as a pass
                // of its own would have read it.
                self.range_done = true;
                continue;
            };
            if self.planned.is_some() {
                self.file.set_readahead_limit(Some(self.limit));
            }
            let at = self.at;
            let range = self.range;
            let lines = if led {
                self.index.get(&at).cloned()
            } else {
                None
            };
            // Neither a container the range skips nor one that ends it is wanted whole: read
            // ahead (threads), the container after a region's last would otherwise be fetched
            // in full only to be dropped.
            let skip = |h: &ContainerHeader| !matches!(fate(range, h), Fate::Keep);
            let Some((h, body)) = self.container(&skip)? else {
                if self.planned.is_some() {
                    // The rest of this range lies past the end.
                    self.range_done = true;
                    continue;
                }
                return Ok(None);
            };
            if h.records == 0 && h.landmarks.is_empty() {
                // A stream's EOF container is known as its last only when nothing follows.
                if self.at >= self.file_len || self.stream {
                    self.eof_marker = true;
                }
                continue;
            }
            self.eof_marker = false;
            if let Some(lines) = &lines {
                check_led(lines, &h, at)?;
            }
            match fate(range, &h) {
                Fate::End => self.range_done = true,
                Fate::Skip => {}
                Fate::Keep => {
                    if let Some((body, body_at)) = body {
                        return Ok(Some((h, body, body_at)));
                    }
                }
            }
        }
    }

    /// The container at `self.at`: its header, and its body unless `skip` says it is not
    /// wanted (then only the header is read); `None` at the end.
    pub(super) fn container(
        &mut self,
        skip: &dyn Fn(&ContainerHeader) -> bool,
    ) -> Result<Option<Read1>, Error> {
        if self.at >= self.file_len {
            return Ok(None);
        }
        let mut left = usize::try_from(self.file_len - self.at).unwrap_or(usize::MAX);
        // The first read stays within the container when its end is known; a longer header
        // or body is read on exactly.
        let bound = usize::try_from(self.limit.saturating_sub(self.at)).unwrap_or(usize::MAX);
        let mut want = left.min(HEADER_GUESS).min(bound.max(1));
        loop {
            let mut buf = vec![0u8; want];
            let n = read_at(self.file.as_mut(), self.at, &mut buf)?;
            buf.truncate(n);
            if n == 0 && self.stream {
                self.file_len = self.at;
                return Ok(None);
            }
            if n < want {
                // The end is in sight (a stream's, or a file that shrank): nothing more to
                // read for a longer header.
                left = n;
            }
            match ContainerHeader::parse_header(&buf, self.at, self.version) {
                // A container whose blocks ran past its length (read leniently: see
                // `blocks_length`) may be followed by more such: those are read, not skipped
                // by their length.
                Ok(h) if skip(&h) && !self.stream && !self.long_blocks => {
                    self.at = self.at.saturating_add((h.header_len + h.length) as u64);
                    return Ok(Some((h, None)));
                }
                Ok(h) => {
                    // Then exactly the rest of the container (no more than the file holds:
                    // a length past its end is refused by the full parse below).
                    let total = h.header_len.saturating_add(h.length).min(left);
                    if total > buf.len() {
                        if self.limit != u64::MAX {
                            // Exact reads (opening, planned containers): a remote file is
                            // asked for the container's bytes and none past them.
                            self.file.set_readahead_limit(Some(self.at + total as u64));
                        }
                        // In steps, so that a length a stream does not hold costs no more
                        // memory than its bytes.
                        let mut have = buf.len();
                        while have < total {
                            let step = (total - have).min(READ_STEP);
                            buf.resize(have + step, 0);
                            let at = self.at + have as u64;
                            let n = read_at(self.file.as_mut(), at, &mut buf[have..])?;
                            buf.truncate(have + n);
                            have += n;
                            if n < step {
                                break;
                            }
                        }
                    }
                    let h = ContainerHeader::parse(&buf, self.at, self.version)?;
                    let body_at = self.at + h.header_len as u64;
                    let length = self.blocks_length(&h, &mut buf, left)?;
                    let body = buf[h.header_len..h.header_len + length].to_vec();
                    self.at = body_at + length as u64;
                    return Ok(Some((h, Some((body, body_at)))));
                }
                // A header longer than guessed: read more.
                Err(_) if buf.len() == want && want < left => want = (want * 4).min(left),
                Err(e) => return Err(e),
            }
        }
    }

    /// How many bytes of blocks follow the container's header in `buf` (which holds at least
    /// its length): the length, or where the blocks end when they run past it, read on from
    /// the file (`container::blocks_end`): in the header container, as htslib reads it, and
    /// in 3.x, where every block's CRC32 shows it is one.
    fn blocks_length(
        &mut self,
        h: &ContainerHeader,
        buf: &mut Vec<u8>,
        left: usize,
    ) -> Result<usize, Error> {
        if self.first_container != 0 && !self.version.has_crc() {
            return Ok(h.length);
        }
        let mut end = crate::container::blocks_end(h, &buf[h.header_len..], self.version);
        let most = (h.header_len + h.length)
            .saturating_add(crate::container::slack(h))
            .min(left);
        if end.is_none() && buf.len() < most {
            let have = buf.len();
            buf.resize(most, 0);
            let n = read_at(self.file.as_mut(), self.at + have as u64, &mut buf[have..])?;
            buf.truncate(have + n);
            end = crate::container::blocks_end(h, &buf[h.header_len..], self.version);
        }
        let length = end.filter(|&e| e > h.length).unwrap_or(h.length);
        self.long_blocks |= length > h.length;
        Ok(length)
    }
}

/// What `range` makes of a container by its header: htslib skips one that cannot hold its
/// records unread, and ends the range at one of another single reference or starting past
/// its end (`cram_next_slice`).
fn fate(range: Option<Range>, h: &ContainerHeader) -> Fate {
    let Some(r) = range else {
        return Fate::Keep;
    };
    if h.reference_id == crate::slice::MULTI_REF {
        return Fate::Keep;
    }
    let start = i64::from(h.start);
    let end = start + i64::from(h.span) - 1;
    if h.reference_id < r.ref_id || (r.ref_id >= 0 && h.reference_id == r.ref_id && end < r.start) {
        return Fate::Skip;
    }
    if h.reference_id != r.ref_id || (r.ref_id >= 0 && start > r.end) {
        return Fate::End;
    }
    Fate::Keep
}

/// A container the index led to, checked against the index's lines for it: a disagreement (a
/// stale or damaged index) is an error. (Reading on from the container would be htslib's way,
/// but whether containers before it hold records of the range, only an index that is right
/// about them could say.)
fn check_led(lines: &[CraiEntry], h: &ContainerHeader, at: u64) -> Result<(), Error> {
    if crate::crai::agrees(lines, h) {
        return Ok(());
    }
    let e = &lines[0];
    let end = |start: i64, span: i64| start.saturating_add(span).saturating_sub(1);
    Err(Error::at(
        at,
        format!(
            "the .crai says the container here holds reference {} {}-{}; its header says \
             reference {} {}-{} (the index is stale or damaged)",
            e.ref_id,
            e.start,
            end(e.start, e.span),
            h.reference_id,
            h.start,
            end(i64::from(h.start), i64::from(h.span)),
        ),
    ))
}
