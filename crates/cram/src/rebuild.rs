//! A stored record made whole (htslib's `cram_decode_seq`): bases from the reference with the
//! read features applied, the CIGAR they imply, qualities, and MD/NM made as htslib makes them
//! when it has the reference and the record does not keep its own.

use crate::compression::CompressionHeader;
use crate::record::{cf, FeatureKind, Record, Stored};
use crate::Error;

mod features;

/// BAM CIGAR operation codes.
const M: u32 = 0;
const I: u32 = 1;
const D: u32 = 2;
const N: u32 = 3;
const S: u32 = 4;
const H: u32 = 5;
const P: u32 = 6;

/// The reference bases a slice may use: `bases[0]` is 1-based position `start`, the last one
/// `end`.
#[derive(Debug, Clone, Copy)]
pub struct RefView<'a> {
    /// The bases, upper-case.
    pub bases: &'a [u8],
    /// The 1-based position of `bases[0]`.
    pub start: i64,
    /// The 1-based position of the last base.
    pub end: i64,
}

/// What `cram_decode_seq` makes of one mapped record. Given to [`rebuild`] too, for its
/// buffers: a slice's records are made in the buffers of those before them.
#[derive(Debug, Clone, Default)]
pub struct Rebuilt {
    /// The bases.
    pub seq: Vec<u8>,
    /// Qualities from the read features; empty when the record stores them as an array (the
    /// caller takes the record's own).
    pub qual: Vec<u8>,
    /// BAM-coded operations (`len << 4 | op`).
    pub cigar: Vec<u32>,
    /// 1-based last reference position covered.
    pub end: i64,
    /// Tags in BAM's binary layout: given with the record's own, MD and NM appended.
    pub aux: Vec<u8>,
}

/// Index of a base in the substitution matrix (htslib's `L1`).
fn base_index(b: u8) -> usize {
    match b {
        b'A' | b'a' => 0,
        b'C' | b'c' => 1,
        b'G' | b'g' => 2,
        b'T' | b't' => 3,
        _ => 4,
    }
}

/// Copies `bytes` into `dst` at `index`; false when they do not fit.
fn place(dst: &mut [u8], index: i64, bytes: &[u8]) -> bool {
    let Ok(from) = usize::try_from(index) else {
        return false;
    };
    match dst.get_mut(from..from.saturating_add(bytes.len())) {
        Some(d) => {
            d.copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

/// Appends `v` in decimal (a negative number with its sign), as `to_string` would, without
/// allocating: MD is written once a record.
fn push_decimal(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// A record being rebuilt: what its features have made so far, and where they have got to.
struct State<'a> {
    ch: &'a CompressionHeader,
    stored: &'a Stored,
    r: &'a Record,
    reference: Option<RefView<'a>>,
    /// A reference is given and the record is on one.
    with_ref: bool,
    ref_len: i64,
    at: u64,
    /// The read's length.
    len: i64,
    /// The next read position (1-based) and reference position (0-based) to cover.
    seq_pos: i64,
    ref_pos: i64,
    seq: Vec<u8>,
    qual: Vec<u8>,
    cigar: Vec<u32>,
    cig_op: u32,
    cig_len: u32,
    md: Vec<u8>,
    md_dist: i64,
    nm: u32,
    decode_md: bool,
    decode_nm: bool,
    /// Qualities are stored as an array: the features' are checked, not kept.
    preserve: bool,
}

impl<'a> State<'a> {
    fn new(
        ch: &'a CompressionHeader,
        (stored, r): (&'a Stored, &'a Record),
        reference: Option<RefView<'a>>,
        ref_len: i64,
        (has_md, has_nm): (bool, bool),
        into: Rebuilt,
        at: u64,
    ) -> State<'a> {
        let Rebuilt {
            mut seq,
            mut qual,
            mut cigar,
            aux,
            ..
        } = into;
        let len = r.read_length as usize;
        let reference = reference.filter(|_| r.reference_id >= 0);
        let with_ref = reference.is_some();
        let no_seq = r.cram_flags & cf::NO_SEQUENCE != 0;
        let preserve = r.cram_flags & cf::QUALITY_ARRAY != 0;
        seq.clear();
        seq.resize(len, if with_ref { b'N' } else { b'=' });
        qual.clear();
        if !preserve {
            qual.resize(len, 255);
        }
        cigar.clear();
        cigar.reserve(2 * r.features.len() + 1);
        let mut st = State {
            ch,
            stored,
            r,
            reference,
            with_ref,
            ref_len,
            at,
            len: len as i64,
            seq_pos: 1,
            ref_pos: i64::from(r.position) - 1,
            seq,
            qual,
            cigar,
            cig_op: M,
            cig_len: 0,
            // MD is written straight after the record's tags; NM follows it.
            md: aux,
            md_dist: 0,
            nm: 0,
            decode_md: with_ref && !has_md && !no_seq,
            decode_nm: with_ref && !has_nm && !no_seq,
            preserve,
        };
        if st.decode_md {
            st.md.extend_from_slice(b"MDZ");
        }
        st
    }

    /// Adds `n` to the CIGAR operation `op` being built, the one before pushed if another.
    fn extend_op(&mut self, op: u32, n: u32) {
        self.flush_unless(op);
        self.cig_op = op;
        self.cig_len = self.cig_len.wrapping_add(n);
    }

    /// The last reference position the given bases hold (0 without any).
    fn ref_end(&self) -> i64 {
        self.reference.map_or(0, |v| v.end)
    }

    fn bad(&self, what: String) -> Error {
        Error::at(self.at, format!("record {}: {what}", self.name()))
    }

    /// The record's name, for errors.
    fn name(&self) -> std::borrow::Cow<'a, str> {
        String::from_utf8_lossy(self.stored.name(self.r))
    }

    fn flush_unless(&mut self, op: u32) {
        if self.cig_len != 0 && self.cig_op != op {
            self.cigar.push((self.cig_len << 4) | self.cig_op);
            self.cig_len = 0;
        }
    }

    fn beyond(&self) -> Error {
        Error::at(
            self.at,
            format!(
                "record {}: CIGAR extends beyond slice reference extents",
                self.name()
            ),
        )
    }

    /// The reference base at 0-based position `p`.
    fn ref_base(&self, p: i64) -> Result<u8, Error> {
        let v = self.reference.ok_or_else(|| self.beyond())?;
        usize::try_from(p + 1 - v.start)
            .ok()
            .and_then(|i| v.bases.get(i).copied())
            .ok_or_else(|| self.beyond())
    }

    /// Reference bases `p..p + n` (0-based), borrowed from the reference, not from `self`.
    fn ref_run(&self, p: i64, n: i64) -> Result<&'a [u8], Error> {
        let v = self.reference.ok_or_else(|| self.beyond())?;
        let from = usize::try_from(p + 1 - v.start).map_err(|_| self.beyond())?;
        let n = usize::try_from(n).map_err(|_| self.beyond())?;
        v.bases.get(from..from + n).ok_or_else(|| self.beyond())
    }

    fn put_seq(&mut self, index: i64, bytes: &[u8]) -> Result<(), Error> {
        if self.seq.is_empty() {
            return Ok(());
        }
        if !place(&mut self.seq, index, bytes) {
            return Err(self.past_read("read feature"));
        }
        Ok(())
    }

    fn put_qual(&mut self, index: i64, bytes: &[u8]) -> Result<(), Error> {
        if self.preserve {
            let fits = usize::try_from(index)
                .ok()
                .and_then(|from| from.checked_add(bytes.len()))
                .is_some_and(|end| end <= self.seq.len());
            if !fits {
                return Err(self.past_read("quality feature"));
            }
            return Ok(());
        }
        if self.r.cram_flags & cf::QUALITY_ARRAY == 0 && self.qual.first() == Some(&255) {
            self.qual.fill(30);
        }
        if !place(&mut self.qual, index, bytes) {
            return Err(self.past_read("quality feature"));
        }
        Ok(())
    }

    fn past_read(&self, what: &str) -> Error {
        Error::at(
            self.at,
            format!(
                "record {}: {what} past the read's {} bases",
                self.name(),
                self.seq.len()
            ),
        )
    }

    fn md_number(&mut self) {
        if self.md_dist >= 0 && self.decode_md {
            push_decimal(&mut self.md, self.md_dist);
        }
    }

    /// htslib's `add_md_char`.
    fn md_char(&mut self, c: u8) {
        if self.decode_md {
            push_decimal(&mut self.md, self.md_dist);
            self.md.push(c);
            self.md_dist = 0;
        }
    }

    /// Reference bases for read positions `seq_pos..pos` (1-based) matched from 0-based
    /// reference position `ref_pos`; `to_end` for the implicit match at the end of the read.
    fn matched(&mut self, seq_pos: i64, n: i64, ref_pos: i64, to_end: bool) -> Result<(), Error> {
        let Some(v) = self.reference else {
            return Ok(());
        };
        let len = self.seq.len() as i64;
        if ref_pos + n > self.ref_len {
            let rlen = self.ref_len - ref_pos;
            if rlen > 0 {
                if !to_end && ref_pos + rlen > v.end {
                    return Err(self.beyond());
                }
                if !to_end || seq_pos - 1 + rlen < len {
                    let run = self.ref_run(ref_pos, rlen)?;
                    self.put_seq(seq_pos - 1, run)?;
                }
                if n - rlen > 0 {
                    self.put_seq(seq_pos - 1 + rlen, &vec![b'N'; (n - rlen) as usize])?;
                }
            } else {
                let rest = if to_end { n } else { len - seq_pos + 1 };
                if rest > 0 {
                    self.put_seq(seq_pos - 1, &vec![b'N'; rest as usize])?;
                }
            }
            if self.md_dist >= 0 {
                self.md_dist += n;
            }
            return Ok(());
        }
        if ref_pos + n > v.end {
            return Err(self.beyond());
        }
        let run = self.ref_run(ref_pos, n)?;
        if (self.decode_md || self.decode_nm) && (!to_end || run.contains(&b'N')) {
            for &base in run {
                if base == b'N' {
                    self.md_char(b'N');
                    self.nm = self.nm.wrapping_add(1);
                } else {
                    self.md_dist += 1;
                }
            }
        } else if self.decode_md || self.decode_nm {
            self.md_dist += n;
        }
        self.put_seq(seq_pos - 1, run)
    }
}

/// The 1-based last reference position a mapped record covers, as [`rebuild`] finds it, from
/// its features alone: what a range query needs of a record it drops (whether the range holds
/// it, its mate's template length). `with_ref`: [`rebuild`] is given a reference for it.
pub fn alignment_end(stored: &Stored, r: &Record, with_ref: bool, ref_len: i64) -> i64 {
    let mut seq_pos: i64 = 1;
    let mut ref_pos: i64 = i64::from(r.position) - 1;
    for f in stored.features(r) {
        let pos = i64::from(f.position);
        if pos > seq_pos {
            ref_pos += pos - seq_pos;
            seq_pos = pos;
        }
        match f.kind {
            FeatureKind::SoftClip(b) | FeatureKind::Insertion(b) => seq_pos += b.len() as i64,
            FeatureKind::InsertBase(_) => seq_pos += 1,
            FeatureKind::Substitution(_) | FeatureKind::Base { .. } => {
                seq_pos += 1;
                ref_pos += 1;
            }
            FeatureKind::Bases(b) => {
                seq_pos += b.len() as i64;
                ref_pos += b.len() as i64;
            }
            FeatureKind::Deletion(n) | FeatureKind::RefSkip(n) => ref_pos += i64::from(n),
            FeatureKind::Qualities(_)
            | FeatureKind::Quality(_)
            | FeatureKind::HardClip(_)
            | FeatureKind::Padding(_) => {}
        }
    }
    let len = i64::from(r.read_length.max(0));
    if len >= seq_pos {
        let n = len - seq_pos + 1;
        // With a reference, a read running off the reference's end stops there.
        if with_ref {
            if ref_pos + n <= ref_len {
                ref_pos += n;
            }
        } else if r.reference_id >= 0 {
            ref_pos += n;
        }
    }
    ref_pos.max(i64::from(r.position))
}

/// Rebuilds a mapped record of `stored`, in `into`'s buffers (its `aux` holding the record's
/// tags). `reference` is `None` without one (bases not covered by features stay `=`, as
/// htslib leaves them); `ref_len` is the `@SQ LN` of its reference. MD and NM are appended to
/// the tags in BAM's binary layout unless `has` says the record has them.
pub fn rebuild(
    ch: &CompressionHeader,
    record: (&Stored, &Record),
    reference: Option<RefView<'_>>,
    ref_len: i64,
    has: (bool, bool),
    into: Rebuilt,
    at: u64,
) -> Result<Rebuilt, Error> {
    let (stored, r) = record;
    let mut st = State::new(ch, record, reference, ref_len, has, into, at);
    for f in stored.features(r) {
        st.feature(f)?;
    }
    st.read_end()?;
    Ok(st.finish())
}
