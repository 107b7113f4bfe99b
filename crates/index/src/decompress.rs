//! The index byte stream: tells a compressed index from a plain one by its first bytes,
//! inflates as bytes arrive (BGZF block by block, other gzip through flate2), counts how far
//! the parser got in the stream and in the input, and keeps the reason a read failed so the
//! parser can tell a clean end of input from a damaged or failing one.

use std::io::{self, Chain, Cursor, Read};

use bgzf::sniff::Sniffed;
use bgzf::{BlockStream, Format};
use flate2::read::MultiGzDecoder;

/// Why the stream stopped delivering bytes (other than a clean end).
pub(crate) enum Failure {
    /// The input itself failed.
    Io(io::Error),
    /// The compressed data is damaged, or (`cut`) the input ended inside a gzip member or BGZF
    /// block, which for a prefix of a file means that more bytes are needed.
    Decompress { source: io::Error, cut: bool },
    /// The stream went past the size limit.
    TooLarge,
}

type Input<R> = Chain<Cursor<Vec<u8>>, R>;

/// Counts the bytes read from the input of a gzip decoder and notes how the input ended, since
/// flate2's errors do not say whether the data was damaged or cut short.
struct Counted<R> {
    inner: R,
    count: u64,
    eof: bool,
    failed: bool,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(0) if !buf.is_empty() => {
                self.eof = true;
                Ok(0)
            }
            Ok(n) => {
                self.count += n as u64;
                Ok(n)
            }
            Err(e) => {
                if e.kind() != io::ErrorKind::Interrupted {
                    self.failed = true;
                }
                Err(e)
            }
        }
    }
}

enum Decoder<R> {
    Plain(Input<R>),
    Bgzf(BlockStream<Input<R>>),
    Gzip(MultiGzDecoder<Counted<Input<R>>>),
}

/// The decompressed index stream, read by the parser through [`Read`] (with fast paths for the
/// small fixed-size reads that make up an index, and for skipping).
///
/// Bytes are decoded into a buffer only when the parser needs more than it holds, and a BGZF
/// block's data is taken at most to the block's end, so the input read never runs ahead of the
/// block holding the last byte delivered.
pub(crate) struct Stream<R> {
    decoder: Decoder<R>,
    /// Grows from [`FIRST_BUFFER`] to [`BUFFER`] as it is refilled: most indexes of small files
    /// are a few hundred bytes, and a full-size buffer would be zeroed and faulted in for them
    /// at every start (issue 21).
    buf: Vec<u8>,
    /// The bytes of `buf` not yet delivered.
    start: usize,
    end: usize,
    /// Stream bytes decoded (delivered or in `buf`).
    decoded: u64,
    limit: u64,
    failure: Option<Failure>,
}

/// How much is decoded at once: reads from a network stream return what has arrived, so this
/// bounds a read, not a wait.
const BUFFER: usize = 64 * 1024;

/// The buffer's size at the first fill.
const FIRST_BUFFER: usize = 4 * 1024;

impl<R: Read> Stream<R> {
    /// The stream over `input`, whose first bytes were taken by [`bgzf::sniff::sniff`]; it fails once more
    /// than `limit` bytes would be delivered.
    pub(crate) fn new(name: &str, sniffed: Sniffed, input: R, limit: u64) -> Stream<R> {
        let input = Cursor::new(sniffed.peeked).chain(input);
        let decoder = match sniffed.format {
            Format::Raw => Decoder::Plain(input),
            Format::Bgzf => Decoder::Bgzf(BlockStream::new(name, input)),
            Format::Gzip => Decoder::Gzip(MultiGzDecoder::new(Counted {
                inner: input,
                count: 0,
                eof: false,
                failed: false,
            })),
        };
        Stream {
            decoder,
            buf: Vec::new(),
            start: 0,
            end: 0,
            decoded: 0,
            limit,
            failure: None,
        }
    }

    /// Whether offsets in the stream differ from offsets in the input.
    pub(crate) fn compressed(&self) -> bool {
        !matches!(self.decoder, Decoder::Plain(_))
    }

    /// Stream bytes delivered so far.
    pub(crate) fn pos(&self) -> u64 {
        self.decoded - (self.end - self.start) as u64
    }

    /// Input bytes read so far (all of it, once the input has ended).
    pub(crate) fn input_read(&self) -> u64 {
        match &self.decoder {
            Decoder::Plain(_) => self.decoded,
            Decoder::Bgzf(b) => b.input_read(),
            Decoder::Gzip(g) => g.get_ref().count,
        }
    }

    /// The input bytes that the stream delivered so far needed: the same count for an index
    /// stored plain, whole BGZF blocks for BGZF, unknown for other gzip.
    pub(crate) fn consumed_input(&self) -> Option<u64> {
        match &self.decoder {
            Decoder::Plain(_) => Some(self.pos()),
            Decoder::Bgzf(b) => Some(b.block_end()),
            Decoder::Gzip(_) => None,
        }
    }

    /// The decoded bytes not yet delivered (perhaps none): fixed-size fields are parsed from
    /// them in place when they hold all of them.
    pub(crate) fn buffered(&self) -> &[u8] {
        self.buf.get(self.start..self.end).unwrap_or_default()
    }

    /// Delivers `n` of the [`Stream::buffered`] bytes (at most all of them).
    pub(crate) fn consume(&mut self, n: usize) {
        self.start += n.min(self.end - self.start);
    }

    /// Why the last failed read failed, if not at a clean end of the stream.
    pub(crate) fn take_failure(&mut self) -> Option<Failure> {
        self.failure.take()
    }

    /// Skips up to `n` bytes; fewer only at the end of the stream.
    pub(crate) fn skip(&mut self, n: u64) -> io::Result<u64> {
        let mut done = 0;
        while done < n {
            if self.start == self.end && self.fill()? == 0 {
                break;
            }
            let k = (self.end - self.start).min(usize::try_from(n - done).unwrap_or(usize::MAX));
            self.start += k;
            done += k as u64;
        }
        Ok(done)
    }

    /// Decodes more bytes into the (empty) buffer; 0 at the end of the stream.
    fn fill(&mut self) -> io::Result<usize> {
        debug_assert_eq!(self.start, self.end);
        let room = self.limit.saturating_sub(self.decoded);
        // At the limit, one more byte (not an end of data) is what makes the stream too large.
        let size = (self.buf.len() * 2).clamp(FIRST_BUFFER, BUFFER);
        if self.buf.len() < size {
            // Empty now: a new buffer, not the old one grown (which would copy what it held).
            self.buf = vec![0; size];
        }
        let take = usize::try_from(room)
            .unwrap_or(usize::MAX)
            .clamp(1, self.buf.len());
        loop {
            let got = match &mut self.decoder {
                Decoder::Plain(r) => r.read(&mut self.buf[..take]).map_err(Failure::Io),
                Decoder::Bgzf(b) => b.read_some(&mut self.buf[..take]).map_err(bgzf_failure),
                Decoder::Gzip(g) => g.read(&mut self.buf[..take]).map_err(|source| {
                    let input = g.get_ref();
                    if input.failed {
                        Failure::Io(source)
                    } else {
                        Failure::Decompress {
                            source,
                            cut: input.eof,
                        }
                    }
                }),
            };
            return match got {
                Ok(n) if room == 0 && n > 0 => Err(self.fail(Failure::TooLarge)),
                Ok(n) => {
                    self.start = 0;
                    self.end = n;
                    self.decoded += n as u64;
                    Ok(n)
                }
                Err(Failure::Io(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(f) => Err(self.fail(f)),
            };
        }
    }

    fn fail(&mut self, f: Failure) -> io::Error {
        self.failure = Some(f);
        io::Error::other("index stream failed")
    }
}

fn bgzf_failure(e: bgzf::Error) -> Failure {
    match e {
        bgzf::Error::Io(hfile::Error::Io { source, .. }) => Failure::Io(source),
        e @ bgzf::Error::TruncatedBlock { .. } => Failure::Decompress {
            source: io::Error::from(e),
            cut: true,
        },
        e => Failure::Decompress {
            source: io::Error::from(e),
            cut: false,
        },
    }
}

impl<R: Read> Read for Stream<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.start == self.end && self.fill()? == 0 {
            return Ok(0);
        }
        let n = out.len().min(self.end - self.start);
        out[..n].copy_from_slice(&self.buf[self.start..self.start + n]);
        self.start += n;
        Ok(n)
    }

    #[inline]
    fn read_exact(&mut self, out: &mut [u8]) -> io::Result<()> {
        if let Some(bytes) = self.buf.get(self.start..self.start + out.len()) {
            if self.start + out.len() <= self.end {
                out.copy_from_slice(bytes);
                self.start += out.len();
                return Ok(());
            }
        }
        let mut got = 0;
        while got < out.len() {
            match self.read(&mut out[got..])? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => got += n,
            }
        }
        Ok(())
    }
}
