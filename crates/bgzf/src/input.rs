//! The byte source of a BGZF reader, with a read-ahead buffer: one large read serves several
//! blocks, and a block that lies whole in the buffer can be inflated where it is.
//!
//! The buffer never changes what is read from the source beyond a bound the caller gives (the
//! readahead limit): past it, only the bytes asked for are read. And it never waits for more
//! than the bytes asked for, so a slow remote source still hands each block up as soon as it
//! is in.

use std::io::{self, SeekFrom};

use crate::raw_block::source_error;
use crate::{Result, Source};

/// How much one refill reads at most: several blocks (real BAM blocks are 20-30 KB), and a
/// size the byte source passes straight through without copying (`HFile` does so from 64 KiB).
const CHUNK: usize = 256 * 1024;

/// The first refill's size: the buffer doubles from here up to [`CHUNK`] as it is used, so a
/// small file (an index of a few hundred bytes, a header, one region of a small BAM) does not
/// pay for zeroing and faulting in memory it never fills (start-up, issue 21); a long read is at
/// full size after four refills.
const FIRST_CHUNK: usize = 16 * 1024;

/// A source, where its read position is (so that sequential reads cost no seek), and the bytes
/// read ahead of the blocks that need them.
pub(crate) struct Input<S> {
    pub(crate) src: S,
    /// The source's position, when known.
    pos: Option<u64>,
    /// Bytes of the file from offset `ahead_at`: `ahead[..end]`.
    ahead: Vec<u8>,
    ahead_at: u64,
    end: usize,
}

impl<S: Source> Input<S> {
    pub(crate) fn new(src: S) -> Input<S> {
        Input {
            src,
            pos: None,
            ahead: Vec::new(),
            ahead_at: 0,
            end: 0,
        }
    }

    /// Forgets the source's position (after someone else moved it). The bytes read ahead stay
    /// valid: they are the file's.
    pub(crate) fn moved(&mut self) {
        self.pos = None;
    }

    /// Reads up to `buf.len()` bytes at `at` (fewer only at the end of the source). `bound`:
    /// read no byte at or past it unless asked for (see [`Input::window`]).
    pub(crate) fn read_at(
        &mut self,
        at: u64,
        buf: &mut [u8],
        bound: Option<u64>,
        name: &str,
    ) -> Result<usize> {
        let got = self.window(at, buf.len(), bound, name)?;
        let n = got.len().min(buf.len());
        buf[..n].copy_from_slice(&got[..n]);
        Ok(n)
    }

    /// The bytes from `at`: at least `need` of them unless the source ends first, more if they
    /// were read ahead. A refill reads ahead up to [`CHUNK`] bytes, but never at or past
    /// `bound` beyond the `need` bytes asked for, and waits only for those `need` bytes.
    pub(crate) fn window(
        &mut self,
        at: u64,
        need: usize,
        bound: Option<u64>,
        name: &str,
    ) -> Result<&[u8]> {
        let held = self.ahead_at..self.ahead_at + self.end as u64;
        if held.contains(&at) {
            let from = (at - self.ahead_at) as usize;
            if self.end - from >= need {
                return Ok(&self.ahead[from..self.end]);
            }
            // Keep what is there and read on after it.
            self.ahead.copy_within(from..self.end, 0);
            self.end -= from;
        } else {
            self.end = 0;
        }
        self.ahead_at = at;
        let chunk = (self.ahead.len() * 2).clamp(FIRST_CHUNK, CHUNK);
        let reach = match bound {
            Some(b) if b > at => (b - at).min(chunk as u64) as usize,
            Some(_) => 0,
            None => chunk,
        };
        let want = reach.max(need);
        if self.ahead.len() < want {
            self.ahead.resize(want, 0);
        }
        let next = at + self.end as u64;
        if self.pos != Some(next) {
            self.pos = None;
            self.src
                .seek(SeekFrom::Start(next))
                .map_err(|e| source_error(e, name, next))?;
            self.pos = Some(next);
        }
        while self.end < need {
            let n = match self.src.read(&mut self.ahead[self.end..want]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.pos = None;
                    let offset = at + self.end as u64;
                    return Err(source_error(e, name, offset));
                }
            };
            if n == 0 {
                break;
            }
            self.end += n;
            self.pos = Some(at + self.end as u64);
        }
        Ok(&self.ahead[..self.end])
    }
}
