//! The rest of a BGZF file after a gzip member that is not a BGZF block (no extra field, or no
//! `BC` subfield in it). htslib 1.16 reads on from such a member as one plain gzip stream, the
//! BGZF members after it included, and refuses to seek from then on; so does the reader. The
//! stream is handed out in chunks of at most 64 KiB, each with the compressed offset where its
//! input began, so virtual offsets and messages still say where in the file the data is.

use flate2::{Crc, Decompress, FlushDecompress, Status};

use crate::block::{self, FIXED_HEADER_LEN, MAX_BLOCK_SIZE, TRAILER_LEN};
use crate::input::Input;
use crate::{Error, Result, Source};

/// Compressed bytes read from the source at a time.
const READ_SIZE: usize = 64 * 1024;

const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At a member boundary: a header or the end of the file comes next.
    Header,
    /// Inside a member's deflate data.
    Body,
    /// After the deflate data: CRC32 and ISIZE.
    Trailer,
    Done,
}

pub(crate) struct GzipTail {
    /// Where the plain gzip data began.
    start: u64,
    /// Compressed bytes read and not yet consumed, and the offset of the first.
    window: Vec<u8>,
    window_at: u64,
    /// The source has no bytes past the window.
    at_end: bool,
    inflater: Decompress,
    crc: Crc,
    member_start: u64,
    state: State,
}

impl GzipTail {
    /// Plain gzip from compressed offset `start` (a member's first byte) on.
    pub(crate) fn new(start: u64) -> GzipTail {
        GzipTail {
            start,
            window: Vec::new(),
            window_at: start,
            at_end: false,
            inflater: Decompress::new(false),
            crc: Crc::new(),
            member_start: start,
            state: State::Header,
        }
    }

    /// Where the plain gzip data began.
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    /// Reads more compressed bytes after the window; false at the end of the source.
    fn refill<S: Source>(&mut self, input: &mut Input<S>, name: &str) -> Result<bool> {
        if self.at_end {
            return Ok(false);
        }
        let have = self.window.len();
        self.window.resize(have + READ_SIZE, 0);
        let at = self.window_at + have as u64;
        let n = input.read_at(at, &mut self.window[have..], None, name);
        let n = match n {
            Ok(n) => n,
            Err(e) => {
                self.window.truncate(have);
                return Err(e);
            }
        };
        self.window.truncate(have + n);
        if n == 0 {
            self.at_end = true;
        }
        Ok(n > 0)
    }

    /// Makes at least `n` bytes available in the window; false if the file ends first.
    fn ensure<S: Source>(&mut self, input: &mut Input<S>, name: &str, n: usize) -> Result<bool> {
        while self.window.len() < n {
            if !self.refill(input, name)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn consume(&mut self, n: usize) {
        self.window.drain(..n);
        self.window_at += n as u64;
    }

    fn truncated(&self, name: &str, needed: usize) -> Error {
        Error::TruncatedBlock {
            name: name.to_string(),
            offset: self.member_start,
            needed,
            available: (self.window_at + self.window.len() as u64 - self.member_start) as usize,
        }
    }

    /// Parses the header of the member at the window's start (magic, method, and the optional
    /// extra field, name, comment and header CRC).
    fn header<S: Source>(&mut self, input: &mut Input<S>, name: &str) -> Result<()> {
        self.member_start = self.window_at;
        if !self.ensure(input, name, FIXED_HEADER_LEN)? {
            return Err(self.truncated(name, FIXED_HEADER_LEN));
        }
        let member_start = self.member_start;
        let bad = |reason: String| Error::BadHeader {
            name: name.to_string(),
            offset: member_start,
            reason,
        };
        if !block::has_gzip_magic(&self.window) {
            return Err(Error::BadMagic {
                name: name.to_string(),
                offset: self.member_start,
            });
        }
        if self.window[2] != 8 {
            return Err(bad(format!(
                "compression method {} is not deflate (8)",
                self.window[2]
            )));
        }
        let flags = self.window[3];
        let mut len = FIXED_HEADER_LEN;
        if flags & FEXTRA != 0 {
            len += usize::from(u16::from_le_bytes([self.window[10], self.window[11]]));
        } else {
            len -= 2;
        }
        for field in [FNAME, FCOMMENT] {
            if flags & field == 0 {
                continue;
            }
            // A zero-terminated string, of any length.
            loop {
                if let Some(nul) = self
                    .window
                    .get(len..)
                    .and_then(|w| w.iter().position(|&b| b == 0))
                {
                    len += nul + 1;
                    break;
                }
                if self.window.len() > (1 << 20) {
                    return Err(bad("a gzip name or comment longer than 1 MiB".to_string()));
                }
                if !self.refill(input, name)? {
                    return Err(self.truncated(name, len + 1));
                }
            }
        }
        if flags & FHCRC != 0 {
            len += 2;
        }
        if !self.ensure(input, name, len)? {
            return Err(self.truncated(name, len));
        }
        self.consume(len);
        self.inflater.reset(false);
        self.crc.reset();
        Ok(())
    }

    /// The member's CRC32 and ISIZE, checked against what it inflated to.
    fn trailer<S: Source>(&mut self, input: &mut Input<S>, name: &str) -> Result<()> {
        if !self.ensure(input, name, TRAILER_LEN)? {
            return Err(self.truncated(name, TRAILER_LEN));
        }
        let word = |w: &[u8], i: usize| u32::from_le_bytes([w[i], w[i + 1], w[i + 2], w[i + 3]]);
        let (stored_crc, stored_len) = (word(&self.window, 0), word(&self.window, 4));
        if stored_crc != self.crc.sum() {
            return Err(Error::CrcMismatch {
                name: name.to_string(),
                offset: self.member_start,
                stored: stored_crc,
                computed: self.crc.sum(),
            });
        }
        if stored_len != self.crc.amount() {
            return Err(Error::IsizeMismatch {
                name: name.to_string(),
                offset: self.member_start,
                stored: stored_len,
                inflated: self.crc.amount() as usize,
            });
        }
        self.consume(TRAILER_LEN);
        Ok(())
    }

    /// The next chunk of the stream: (compressed offset where its input began, compressed bytes
    /// it consumed, the data); `None` at the end of the file.
    pub(crate) fn next_chunk<S: Source>(
        &mut self,
        input: &mut Input<S>,
        name: &str,
    ) -> Result<Option<(u64, u64, Vec<u8>)>> {
        let from = self.window_at;
        let mut out: Vec<u8> = Vec::with_capacity(MAX_BLOCK_SIZE);
        while out.len() < MAX_BLOCK_SIZE {
            match self.state {
                State::Done => break,
                State::Header => {
                    if !self.ensure(input, name, 1)? {
                        self.state = State::Done;
                        break;
                    }
                    self.header(input, name)?;
                    self.state = State::Body;
                }
                State::Trailer => {
                    self.trailer(input, name)?;
                    self.state = State::Header;
                }
                State::Body => {
                    if self.window.is_empty() && !self.refill(input, name)? {
                        return Err(self.truncated(name, TRAILER_LEN + 1));
                    }
                    let (in_before, out_before) = (self.inflater.total_in(), out.len());
                    let status = self
                        .inflater
                        .decompress_vec(&self.window, &mut out, FlushDecompress::None)
                        .map_err(|_| Error::Inflate {
                            name: name.to_string(),
                            offset: self.member_start,
                            reason: "invalid deflate data in a plain gzip member",
                        })?;
                    let used = (self.inflater.total_in() - in_before) as usize;
                    self.crc.update(&out[out_before..]);
                    self.consume(used);
                    match status {
                        Status::StreamEnd => self.state = State::Trailer,
                        // Nothing moved: the inflater needs input that is not there yet.
                        _ if used == 0
                            && out.len() == out_before
                            && !self.refill(input, name)? =>
                        {
                            return Err(self.truncated(name, TRAILER_LEN + 1));
                        }
                        _ => {}
                    }
                }
            }
        }
        if out.is_empty() && self.state == State::Done {
            return Ok(None);
        }
        Ok(Some((from, self.window_at - from, out)))
    }
}
