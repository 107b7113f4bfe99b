//! Loading BAI and CSI from any `Read` as bytes arrive, keeping only the references asked for:
//! the public side (what to load, what came of it); `walk` reads the format, `source` the
//! bytes.

use std::io::Read;

use bgzf::sniff;
use bgzf::Format;

use crate::decompress::Stream;
use crate::walk::{could_start_an_index, Stop, Walker};
use crate::{Error, Index, Wanted};

/// An index stream (after decompression) longer than this is refused. Real indexes of very
/// large BAMs are tens of MB; this guards against gzip bombs and endless streams.
pub const MAX_DECOMPRESSED: u64 = 1 << 30;

/// Loads an index from any [`Read`], keeping only the references asked for.
///
/// The format is told by its first bytes as htslib does: `BAI\1` or `CSI\1`, possibly inside
/// BGZF or plain gzip (htslib writes CSI as BGZF), inflated as it is read. The magic is checked
/// before anything else is read, so a stream that is not an index fails at once.
///
/// [`Loader::read`] takes a stream that is the whole file; [`Loader::read_prefix`] one that
/// may be only its first bytes, and says when more are needed instead of calling the end a
/// truncation. A prefix is extended by reading it again once more bytes have been appended
/// (parsing is fast: the 2.6 MB BAI of a 12.5 M-read BAM takes a few milliseconds).
///
/// ```
/// use index::{Loader, Outcome, Wanted};
/// let bytes = std::fs::read("../../fixtures/conformance/data/rand.bam.bai")?;
/// let loader = Loader::new("rand.bam.bai").wanted(Wanted::refs([1]));
///
/// // The first 100 bytes do not reach the end of reference 1: more are needed.
/// let Outcome::NeedMore(more) = loader.read_prefix(&bytes[..100])? else { panic!() };
/// assert_eq!(more.part, index::Part::Reference(0));
///
/// // The whole file does; parsing stopped right after reference 1.
/// let Outcome::Loaded(loaded) = loader.read_prefix(&bytes[..])? else { panic!() };
/// assert!(loaded.consumed < bytes.len() as u64);
/// assert_eq!(loaded.consumed_input, Some(loaded.consumed));
/// let index = loaded.index;
/// assert!(index.query_loaded(1, 0, 1000)?.is_some());
/// assert!(index.query_loaded(0, 0, 1000).is_err(), "reference 0 was skipped");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Loader {
    name: String,
    wanted: Wanted,
    len: Option<u64>,
    limit: u64,
    /// The references not wanted are walked to the end too.
    to_the_end: bool,
}

/// An index loaded from a stream, and how much of the stream it took.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The index, holding the references asked for.
    pub index: Index,
    /// Bytes of the index stream (decompressed, for a compressed index) parsed: through the
    /// last reference asked for, or for [`Wanted::all`] through `n_no_coor` (or the end).
    pub consumed: u64,
    /// Bytes of the stored file those came from: the same as `consumed` for an uncompressed
    /// index, through the end of the BGZF block holding the last byte parsed for a BGZF one,
    /// `None` for other gzip. A cache or a fetch of this prefix loads the same index again.
    pub consumed_input: Option<u64>,
}

/// What [`Loader::read_prefix`] made of the bytes it was given.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The prefix holds everything asked for.
    Loaded(Loaded),
    /// The prefix ends before the last byte needed.
    NeedMore(NeedMore),
}

/// Where a prefix ran out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeedMore {
    /// Offset in the index stream (decompressed) of the field that was cut short.
    pub offset: u64,
    /// The part of the index that field belongs to.
    pub part: Part,
    /// Bytes of the input that were read (the length of the prefix given).
    pub input_read: u64,
}

/// A part of an index file, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The magic, the CSI scheme and aux data, `n_ref`.
    Header,
    /// The bins (and BAI linear index) of reference `tid`.
    Reference(usize),
    /// The trailing `n_no_coor`.
    Tail,
}

impl Loader {
    /// A loader for the index called `name` (used in errors), keeping every reference.
    pub fn new(name: impl Into<String>) -> Loader {
        Loader {
            name: name.into(),
            wanted: Wanted::all(),
            len: None,
            limit: MAX_DECOMPRESSED,
            to_the_end: false,
        }
    }

    /// With [`Loader::wanted`], still reads the rest of the index to its end (the references
    /// not wanted parsed and dropped, then `n_no_coor`), so that damage past the last wanted
    /// reference is the error a whole load would give, as htslib, which loads every index
    /// whole, gives it: for a local index, whose bytes cost nothing to read.
    pub fn to_the_end(mut self) -> Loader {
        self.to_the_end = true;
        self
    }

    /// Keeps only these references and stops reading after the last of them.
    pub fn wanted(mut self, wanted: Wanted) -> Loader {
        self.wanted = wanted;
        self
    }

    /// The stored size of the whole index file, when known (a local file's size, or the total
    /// of a `Content-Range`). For an uncompressed index, a count that needs more bytes than
    /// remain is then an error at once; for a prefix, an end of input at this size is the end
    /// of the file (a truncation), not a need for more.
    pub fn file_len(mut self, len: u64) -> Loader {
        self.len = Some(len);
        self
    }

    /// Refuses an index stream longer than `limit` bytes (default [`MAX_DECOMPRESSED`]).
    pub fn limit(mut self, limit: u64) -> Loader {
        self.limit = limit;
        self
    }

    /// Loads from a stream that is the whole file: its end is the end of the index.
    ///
    /// # Errors
    /// [`Error::BadMagic`], [`Error::Truncated`], [`Error::Invalid`], [`Error::Decompress`],
    /// [`Error::TooLarge`] or [`Error::Io`], each naming the index and, where it applies, the
    /// offset (in the decompressed stream for a compressed index).
    pub fn read<R: Read>(&self, input: R) -> Result<Loaded, Error> {
        self.read_with(input, &mut |_, _| {})
    }

    /// As [`Loader::read`], showing `each` the index so far after each wanted reference is
    /// loaded (with its id), so that a caller can act on the references at the start of the
    /// file while the rest arrives. References not reached yet look empty in it.
    ///
    /// # Errors
    /// As [`Loader::read`].
    pub fn read_with<R: Read>(
        &self,
        input: R,
        each: &mut dyn FnMut(usize, &Index),
    ) -> Result<Loaded, Error> {
        match self.run(input, false, each) {
            Ok(loaded) => Ok(loaded),
            Err(Stop::Fail(e)) => Err(e),
            // Only a prefix asks for more; kept total for safety.
            Err(Stop::More { offset, .. }) => Err(Error::Truncated {
                name: self.name.clone(),
                offset,
                what: "index data",
                compressed: false,
            }),
        }
    }

    /// Loads from a stream that may be only the first bytes of the file. An end of input before
    /// the last byte needed is [`Outcome::NeedMore`] (unless [`Loader::file_len`] says the
    /// input was the whole file); damage before that point is still an error.
    ///
    /// # Errors
    /// As [`Loader::read`].
    pub fn read_prefix<R: Read>(&self, input: R) -> Result<Outcome, Error> {
        match self.run(input, true, &mut |_, _| {}) {
            Ok(loaded) => Ok(Outcome::Loaded(loaded)),
            Err(Stop::Fail(e)) => Err(e),
            Err(Stop::More {
                offset,
                part,
                input_read,
            }) => Ok(Outcome::NeedMore(NeedMore {
                offset,
                part,
                input_read,
            })),
        }
    }

    fn run<R: Read>(
        &self,
        mut input: R,
        prefix: bool,
        each: &mut dyn FnMut(usize, &Index),
    ) -> Result<Loaded, Stop> {
        let name = self.name.as_str();
        let sniffed = sniff::sniff(&mut input).map_err(|source| Error::Io {
            name: name.to_string(),
            source,
        })?;
        if sniffed.short {
            let n = sniffed.peeked.len() as u64;
            let more_may_come = prefix && self.len.is_none_or(|l| n < l);
            if more_may_come && could_start_an_index(&sniffed.peeked) {
                return Err(Stop::More {
                    offset: 0,
                    part: Part::Header,
                    input_read: n,
                });
            }
            if sniffed.format == Format::Raw {
                return Err(Stop::Fail(Error::BadMagic {
                    name: name.to_string(),
                    found: sniffed.peeked,
                }));
            }
        }
        let stream = Stream::new(name, sniffed, input, self.limit);
        let mut w = Walker::new(name, stream, prefix, self.len, self.limit);
        let index = w.index(&self.wanted, self.to_the_end, each)?;
        let (consumed, consumed_input) = w.consumed();
        Ok(Loaded {
            index,
            consumed,
            consumed_input,
        })
    }
}
