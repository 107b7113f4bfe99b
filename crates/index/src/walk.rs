//! Walking the BAI and CSI formats field by field, with htslib's acceptance rules (`idx_read`
//! and `idx_read_core` in hts.c): references that are wanted are kept, the others are checked
//! the same way and skipped.
//!
//! Nothing is allocated from a count in the file beyond a small step: lists grow as their
//! items arrive, and when the stored size of an uncompressed index is known a count that
//! needs more bytes than remain fails at once, naming its offset.

use std::io::{self, Read};

use byteorder::{LittleEndian, ReadBytesExt};

use crate::binning::{self, MAX_DEPTH};
use crate::bins;
use crate::decompress::{Failure, Stream};
use crate::linear::{fill_linear, set_bai_loffsets};
use crate::refs::Refs;
use crate::seen::Seen;
use crate::tbi;
use crate::{Error, Index, Kind, Part, Reference, Wanted};

/// The most values a list is given room for before they arrive.
const STEP: usize = 4096;

/// The fields of a chunk and of a linear-index entry, for errors.
const CHUNK: [&str; 2] = ["chunk start", "chunk end"];
const LINEAR: [&str; 1] = ["linear index offset"];

/// Whether bytes cut short could be the start of an index: of a magic, or of a gzip header.
pub(crate) fn could_start_an_index(bytes: &[u8]) -> bool {
    [&b"BAI\x01"[..], b"CSI\x01", b"TBI\x01", &[0x1f, 0x8b]]
        .iter()
        .any(|m| m.starts_with(bytes) || bytes.starts_with(m))
}

/// Why parsing stopped early.
pub(crate) enum Stop {
    Fail(Error),
    /// A prefix ended at the field starting at `offset`.
    More {
        offset: u64,
        part: Part,
        input_read: u64,
    },
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Fail(e)
    }
}

/// The parser: reads fields in file order and knows where it is, for errors.
pub(crate) struct Walker<'a, R> {
    name: &'a str,
    s: Stream<R>,
    compressed: bool,
    prefix: bool,
    len: Option<u64>,
    limit: u64,
    part: Part,
    /// Bin numbers of the reference being read, for the duplicate check and their order.
    seen: Seen,
    /// Chunk offsets as read, before they are paired (reused).
    scratch: Vec<u64>,
}

impl<'a, R: Read> Walker<'a, R> {
    pub(crate) fn new(
        name: &'a str,
        s: Stream<R>,
        prefix: bool,
        len: Option<u64>,
        limit: u64,
    ) -> Walker<'a, R> {
        Walker {
            name,
            compressed: s.compressed(),
            s,
            prefix,
            len,
            limit,
            part: Part::Header,
            seen: Seen::default(),
            scratch: Vec::new(),
        }
    }

    /// Stream bytes parsed, and the stored bytes they came from (see [`crate::Loaded`]).
    pub(crate) fn consumed(&self) -> (u64, Option<u64>) {
        (self.s.pos(), self.s.consumed_input())
    }

    /// Reads the index, keeping the references `wanted` and stopping after the last of them
    /// (unless `to_the_end`); `each` sees the index so far after each wanted reference is in
    /// (with its id).
    pub(crate) fn index(
        &mut self,
        wanted: &Wanted,
        to_the_end: bool,
        each: &mut dyn FnMut(usize, &Index),
    ) -> Result<Index, Stop> {
        let mut magic = [0u8; 4];
        let n = self.read_up_to(&mut magic, "magic")?;
        let magic = &magic[..n];
        let (kind, min_shift, depth, aux) = match magic {
            b"BAI\x01" => (Kind::Bai, 14, 5, Vec::new()),
            b"TBI\x01" => (Kind::Tbi, 14, 5, Vec::new()),
            b"CSI\x01" => {
                let at = self.s.pos();
                let min_shift = self.u32("CSI min_shift")?;
                let depth = self.u32("CSI depth")?;
                if depth > MAX_DEPTH || min_shift > 62 || min_shift + 3 * depth > 62 {
                    return Err(self.invalid(
                        at,
                        format!(
                            "unsupported binning scheme min_shift {min_shift}, depth {depth} \
                             (depth must be at most {MAX_DEPTH} and min_shift + 3*depth at most 62)"
                        ),
                    ));
                }
                let l_aux = self.u32("CSI l_aux")?;
                (
                    Kind::Csi,
                    min_shift,
                    depth,
                    self.bytes(l_aux, "CSI aux data")?,
                )
            }
            other => {
                if n < 4 && self.more_may_come() && could_start_an_index(other) {
                    return Err(self.more(0));
                }
                return Err(Stop::Fail(Error::BadMagic {
                    name: self.name.to_string(),
                    found: other.to_vec(),
                }));
            }
        };

        let at = self.s.pos();
        let n_ref = self.u32("n_ref")?;
        if n_ref > i32::MAX as u32 {
            return Err(self.invalid(at, format!("n_ref {n_ref} is larger than 2^31-1")));
        }
        let n_ref = n_ref as usize;
        let min_ref_len = if kind.has_linear() { 8 } else { 4 };
        let tabix = match kind {
            Kind::Tbi => Some(self.tabix_meta()?),
            _ => None,
        };
        self.check_room(at, n_ref, min_ref_len, "n_ref")?;

        let mut index = Index {
            name: self.name.to_string(),
            kind,
            min_shift,
            depth,
            aux,
            tabix,
            refs: Refs::new(n_ref, wanted),
            n_no_coor: None,
        };
        // Stop after the last reference wanted; read the tail only for the whole index.
        let end = match wanted.tids() {
            None => n_ref,
            Some(_) if to_the_end => n_ref,
            Some(tids) => tids
                .iter()
                .rev()
                .find(|&&t| t < n_ref)
                .map_or(0, |&t| t + 1),
        };
        let n_bins = binning::bin_count(depth);
        for tid in 0..end {
            self.part = Part::Reference(tid);
            if wanted.contains(tid) {
                let r = self.reference(kind, depth, n_bins)?;
                index.refs.push(tid, r);
                each(tid, &index);
            } else {
                self.skip_reference(kind, n_bins)?;
            }
        }
        if wanted.is_all() || to_the_end {
            self.part = Part::Tail;
            index.n_no_coor = self.tail()?;
        }
        Ok(index)
    }

    fn reference(&mut self, kind: Kind, depth: u32, n_bins: u32) -> Result<Reference, Stop> {
        let n_bin = self.n_bin(kind)?;
        let mut bins = bins::Builder::with_room(n_bin.min(STEP));
        self.bins(kind, n_bin, n_bins, Some(&mut bins))?;
        let mut bins = bins.finish(self.seen.order(n_bin));

        let linear = if kind.has_linear() {
            let n_intv = self.n_intv()?;
            let mut offsets = Vec::new();
            self.u64s(n_intv, &LINEAR, Some(&mut offsets))?;
            fill_linear(&mut offsets);
            set_bai_loffsets(&mut bins, &offsets, depth, n_bins);
            Some(offsets)
        } else {
            None
        };
        Ok(Reference { bins, linear })
    }

    /// Reads past a reference that is not wanted, checking what a kept one would be checked
    /// for (counts, duplicate bins) but keeping nothing.
    fn skip_reference(&mut self, kind: Kind, n_bins: u32) -> Result<(), Stop> {
        let n_bin = self.n_bin(kind)?;
        self.bins(kind, n_bin, n_bins, None)?;
        if kind.has_linear() {
            let n_intv = self.n_intv()?;
            self.u64s(n_intv, &LINEAR, None)?;
        }
        Ok(())
    }

    /// Reads `n_bin` bins into `keep` (or past them), with htslib's check for a repeated
    /// number, in a scheme of `n_bins` real bins. A repeat of a number the scheme can hold is
    /// found as its bin is read ([`Seen`]); the other numbers are checked each time they have
    /// doubled, and before any other error is reported. So the error names the first repeat in
    /// file order, about where htslib finds it (a stream of zeros is refused at its second
    /// bin, not after gigabytes), and named the same.
    fn bins(
        &mut self,
        kind: Kind,
        n_bin: usize,
        n_bins: u32,
        mut keep: Option<&mut bins::Builder>,
    ) -> Result<(), Stop> {
        // The real bins and the pseudo-bin.
        self.seen.clear(n_bins.saturating_add(2));
        let mut next_check = 1024;
        for _ in 0..n_bin {
            if let Err(e) = self.bin(kind, keep.as_deref_mut()) {
                self.check_unique()?;
                return Err(e);
            }
            if self.seen.others() >= next_check {
                self.check_unique()?;
                next_check = self.seen.others() * 2;
            }
        }
        self.check_unique()
    }

    fn bin(&mut self, kind: Kind, mut keep: Option<&mut bins::Builder>) -> Result<(), Stop> {
        let (id, bin_at) = match self.bin_in_place(kind, keep.as_deref_mut()) {
            Some(read) => read,
            None => self.bin_by_fields(kind, keep)?,
        };
        if self.seen.insert(id, bin_at) {
            return Ok(());
        }
        // The first repeat of a number in the set; one among the others (all read before it)
        // comes first in the file.
        self.check_unique()?;
        Err(self.invalid(bin_at, format!("bin {id} appears twice")))
    }

    /// A bin parsed from the bytes already decoded, when they hold all of it and its counts
    /// are good (most bins of an index): its number and offset. `None` leaves the stream as it
    /// was, for [`Walker::bin_by_fields`], which reads the same fields and gives every error.
    fn bin_in_place(&mut self, kind: Kind, keep: Option<&mut bins::Builder>) -> Option<(u32, u64)> {
        let head = if kind == Kind::Csi { 16 } else { 8 };
        let bin_at = self.s.pos();
        let bytes = self.s.buffered();
        let field = |at: usize| bytes.get(at..at + 4).and_then(|b| b.try_into().ok());
        let id = u32::from_le_bytes(field(0)?);
        let n_chunk = usize::try_from(i32::from_le_bytes(field(head - 4)?)).ok()?;
        let end = n_chunk.checked_mul(16)?.checked_add(head)?;
        let chunks = bytes.get(head..end)?;
        let loffset = match kind {
            Kind::Csi => u64::from_le_bytes(bytes.get(4..12)?.try_into().ok()?),
            _ => 0,
        };
        // The room after the bin's head (the stream is still at its start); short of it, the
        // field-by-field read gives the error.
        let room = self.room().map(|r| r.saturating_sub(head as u64));
        if room.is_some_and(|room| n_chunk as u128 * 16 > u128::from(room)) {
            return None;
        }
        if let Some(bins) = keep {
            bins.push_bytes(id, loffset, chunks);
        }
        self.s.consume(end);
        Some((id, bin_at))
    }

    /// A bin read field by field: its number and offset.
    fn bin_by_fields(
        &mut self,
        kind: Kind,
        keep: Option<&mut bins::Builder>,
    ) -> Result<(u32, u64), Stop> {
        let bin_at = self.s.pos();
        let id = self.u32("bin number")?;
        let loffset = if kind == Kind::Csi {
            self.u64("bin loffset")?
        } else {
            0
        };
        let n_chunk = self.n_chunk()?;
        match keep {
            Some(bins) => {
                let mut raw = std::mem::take(&mut self.scratch);
                raw.clear();
                let read = self.u64s(n_chunk, &CHUNK, Some(&mut raw));
                if read.is_ok() {
                    bins.push(id, loffset, &raw);
                }
                self.scratch = raw;
                read?;
            }
            None => self.u64s(n_chunk, &CHUNK, None)?,
        }
        Ok((id, bin_at))
    }

    /// htslib's idx_read_core fails on a repeated bin number (kh_put says present): the error
    /// names the first repeat in file order. Repeats in the set are found as they are read;
    /// this checks the other numbers.
    fn check_unique(&mut self) -> Result<(), Stop> {
        match self.seen.first_other_repeat() {
            Some((id, at)) => Err(self.invalid(at, format!("bin {id} appears twice"))),
            None => Ok(()),
        }
    }

    fn n_bin(&mut self, kind: Kind) -> Result<usize, Stop> {
        let at = self.s.pos();
        let n_bin = self.count("n_bin")?;
        let min_bin_len = if kind.has_linear() { 8 } else { 16 };
        self.check_room(at, n_bin, min_bin_len, "n_bin")?;
        Ok(n_bin)
    }

    /// A TBI's column meta and sequence names, between `n_ref` and the first reference
    /// (`hts_idx_load_local`: `l_nm` read as int32, a negative one refused).
    fn tabix_meta(&mut self) -> Result<tbi::Meta, Stop> {
        let at = self.s.pos();
        let mut fixed = [0u8; tbi::FIXED_LEN];
        if self.read_up_to(&mut fixed, "tabix meta")? < fixed.len() {
            let e = io::ErrorKind::UnexpectedEof.into();
            return Err(self.ended(at, "tabix meta", e));
        }
        let f = tbi::fields(&fixed);
        let l_nm = tbi::l_nm(f[6]).map_err(|m| self.invalid(at + 24, m))?;
        let l_nm = u32::try_from(l_nm).map_err(|_| self.invalid(at + 24, "l_nm".into()))?;
        let names_at = self.s.pos();
        let names = self.bytes(l_nm, "tabix sequence names")?;
        tbi::Meta::new(f, &names).map_err(|m| self.invalid(names_at, m))
    }

    fn n_chunk(&mut self) -> Result<usize, Stop> {
        let at = self.s.pos();
        let n_chunk = self.count("n_chunk")?;
        self.check_room(at, n_chunk, 16, "n_chunk")?;
        Ok(n_chunk)
    }

    /// The linear index length: read unsigned, as htslib does.
    fn n_intv(&mut self) -> Result<usize, Stop> {
        let at = self.s.pos();
        let n_intv = self.u32("n_intv")? as usize;
        self.check_room(at, n_intv, 8, "n_intv")?;
        Ok(n_intv)
    }

    /// htslib treats a missing (or partial) `n_no_coor` as 0; we keep the distinction.
    fn tail(&mut self) -> Result<Option<u64>, Stop> {
        let mut b = [0u8; 8];
        let n = self.read_up_to(&mut b, "n_no_coor")?;
        if n == 8 {
            return Ok(Some(u64::from_le_bytes(b)));
        }
        if self.more_may_come() {
            let at = self.s.pos() - n as u64;
            return Err(self.more(at));
        }
        Ok(None)
    }

    /// Reads `n` items made of the 8-byte `fields` into `out` as u64s (or skips them, with no
    /// `out`), in steps of at most [`STEP`] values so that room is made only as they arrive. An
    /// end inside them names the field cut short, exactly as reading them one by one would.
    fn u64s(
        &mut self,
        n: usize,
        fields: &[&'static str],
        out: Option<&mut Vec<u64>>,
    ) -> Result<(), Stop> {
        let each = 8 * fields.len() as u64;
        let start = self.s.pos();
        let total = n as u64 * each;
        let result = match out {
            None => self.s.skip(total).map(|_| ()),
            Some(v) => {
                let mut left = n * fields.len();
                loop {
                    let k = left.min(STEP);
                    if k == 0 {
                        break Ok(());
                    }
                    let old = v.len();
                    v.resize(old + k, 0);
                    if let Err(e) = self.s.read_u64_into::<LittleEndian>(&mut v[old..]) {
                        v.truncate(old);
                        break Err(e);
                    }
                    left -= k;
                }
            }
        };
        let done = self.s.pos() - start;
        if done == total {
            return Ok(());
        }
        let field = (done % each / 8) as usize;
        let at = start + done - done % 8;
        let e = result
            .err()
            .unwrap_or_else(|| io::ErrorKind::UnexpectedEof.into());
        Err(self.ended(at, fields[field], e))
    }

    /// `l_aux` bytes, given room as they arrive.
    fn bytes(&mut self, n: u32, what: &'static str) -> Result<Vec<u8>, Stop> {
        let at = self.s.pos();
        let n = u64::from(n);
        if self.room().is_some_and(|room| n > room) {
            return Err(self.truncated(at, what));
        }
        let mut out = Vec::with_capacity((n as usize).min(STEP));
        if let Err(e) = (&mut self.s).take(n).read_to_end(&mut out) {
            return Err(self.ended(at, what, e));
        }
        if (out.len() as u64) < n {
            return Err(self.ended(at, what, io::ErrorKind::UnexpectedEof.into()));
        }
        Ok(out)
    }

    /// Fills as much of `buf` as the stream holds; fewer bytes only at its end.
    fn read_up_to(&mut self, buf: &mut [u8], what: &'static str) -> Result<usize, Stop> {
        let at = self.s.pos();
        let mut got = 0;
        while got < buf.len() {
            match self.s.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.ended(at, what, e)),
            }
        }
        Ok(got)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, Stop> {
        let at = self.s.pos();
        self.s
            .read_u32::<LittleEndian>()
            .map_err(|e| self.ended(at, what, e))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, Stop> {
        let at = self.s.pos();
        self.s
            .read_u64::<LittleEndian>()
            .map_err(|e| self.ended(at, what, e))
    }

    /// A signed 32-bit count; htslib rejects negative ones.
    fn count(&mut self, what: &'static str) -> Result<usize, Stop> {
        let at = self.s.pos();
        let v = self.u32(what)? as i32;
        usize::try_from(v).map_err(|_| self.invalid(at, format!("{what} is negative ({v})")))
    }

    /// Bytes left before the end of the file, when that is known in stream offsets.
    fn room(&self) -> Option<u64> {
        match self.len {
            Some(len) if !self.compressed => Some(len.saturating_sub(self.s.pos())),
            _ => None,
        }
    }

    /// Fails unless `n` items of at least `each` bytes can still follow, so that a hostile count
    /// is refused before its items are waited for.
    fn check_room(&self, at: u64, n: usize, each: usize, what: &str) -> Result<(), Stop> {
        let Some(room) = self.room() else {
            return Ok(());
        };
        let need = (n as u128) * (each as u128);
        if need > u128::from(room) {
            return Err(self.invalid(
                at,
                format!("{what} is {n}, which needs at least {need} bytes but only {room} remain"),
            ));
        }
        Ok(())
    }

    /// Whether an end of input may be the end of a prefix rather than of the file.
    fn more_may_come(&self) -> bool {
        self.prefix && self.len.is_none_or(|l| self.s.input_read() < l)
    }

    fn more(&self, offset: u64) -> Stop {
        Stop::More {
            offset,
            part: self.part,
            input_read: self.s.input_read(),
        }
    }

    /// The outcome of a read of the field `what` at `at` that failed with `e`.
    fn ended(&mut self, at: u64, what: &'static str, e: io::Error) -> Stop {
        let name = self.name.to_string();
        match self.s.take_failure() {
            Some(Failure::Io(source)) => Stop::Fail(Error::Io { name, source }),
            Some(Failure::TooLarge) => Stop::Fail(Error::TooLarge {
                name,
                limit: self.limit,
            }),
            Some(Failure::Decompress { cut: true, .. }) if self.more_may_come() => self.more(at),
            Some(Failure::Decompress { source, .. }) => Stop::Fail(Error::Decompress {
                name,
                offset: self.s.pos(),
                source,
            }),
            None if e.kind() == io::ErrorKind::UnexpectedEof => {
                if self.more_may_come() {
                    self.more(at)
                } else {
                    self.truncated(at, what)
                }
            }
            None => Stop::Fail(Error::Io { name, source: e }),
        }
    }

    fn truncated(&self, at: u64, what: &'static str) -> Stop {
        Stop::Fail(Error::Truncated {
            name: self.name.to_string(),
            offset: at,
            what,
            compressed: self.compressed,
        })
    }

    fn invalid(&self, at: u64, message: String) -> Stop {
        Stop::Fail(Error::Invalid {
            name: self.name.to_string(),
            offset: at,
            message,
            compressed: self.compressed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn could_start() {
        assert!(could_start_an_index(b""));
        assert!(could_start_an_index(b"BA"));
        assert!(could_start_an_index(b"CSI"));
        assert!(could_start_an_index(b"TBI\x01"));
        assert!(could_start_an_index(&[0x1f]));
        assert!(could_start_an_index(&[0x1f, 0x8b, 8, 4]));
        assert!(!could_start_an_index(b"BAJ"));
        assert!(!could_start_an_index(&[0, 0]));
    }
}
