//! The quick check a count makes of each record: a record it accepts is one that
//! [`crate::record::Record::decode_in`] also accepts, so counting it without decoding gives the
//! same count. A record it does not accept is decoded in full, which finds the same error (and
//! message) a full read finds, or accepts it after all (a long CIGAR moved in from `CG`).
//!
//! What the count's result depends on is only whether each record decodes: the fixed fields'
//! lengths inside `block_size` (as [`crate::lengths::check_fixed`]), both reference ids in range
//! and, for a mapped read with a CIGAR and a sequence, the CIGAR's query length equal to `l_seq`.
//! The bin recomputed from the CIGAR, the read name's end and the record's field offsets are
//! what printing needs, not counting. A count of regions also needs where each record lies
//! ([`Span`]): its reference, start and end, which the same pass over the CIGAR gives.

use crate::cigar;
use crate::flags::Flags;
use crate::lengths::{check_fixed, FIXED};
use crate::record::RecordRef;
use crate::record_reader::RecordReader;
use crate::Result;
use bgzf::Source;
use region::{Position, RefId};

/// Where a record lies: what a region query looks at to place it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) ref_id: Option<RefId>,
    pub(crate) pos: Option<Position>,
    /// htslib's `bam_endpos` (as [`RecordRef::end_pos`]).
    pub(crate) end: Position,
}

impl Span {
    pub(crate) fn of(record: &RecordRef<'_>) -> Span {
        Span {
            ref_id: record.ref_id(),
            pos: record.pos(),
            end: record.end_pos(),
        }
    }
}

/// How a query's walk reads its next record: in full and held for the query to hand out
/// ([`Held`]), or only as far as a count needs ([`Counted`]). Both read the same records and
/// fail with the same errors.
pub(crate) trait Step {
    /// The next record in file order, `None` at the end.
    fn next<S: Source>(reader: &mut RecordReader<S>) -> Result<Option<Span>>;

    /// The next record in file order, where it lies not asked for (the rest of a file after
    /// `*` or `.`, which every record passes): false at the end.
    fn step<S: Source>(reader: &mut RecordReader<S>) -> Result<bool> {
        Ok(Self::next(reader)?.is_some())
    }
}

/// Each record decoded and held ([`RecordReader::last_record_ref`] gives it again).
pub(crate) struct Held;

impl Step for Held {
    #[inline]
    fn next<S: Source>(reader: &mut RecordReader<S>) -> Result<Option<Span>> {
        Ok(reader.read_record_ref_held()?.map(|r| Span::of(&r)))
    }

    /// No span: its end would cost a pass over each record's CIGAR.
    #[inline]
    fn step<S: Source>(reader: &mut RecordReader<S>) -> Result<bool> {
        Ok(reader.read_record_ref_held()?.is_some())
    }
}

/// A record the quick check accepts is stepped over undecoded; any other is decoded.
pub(crate) struct Counted;

impl Step for Counted {
    #[inline]
    fn next<S: Source>(reader: &mut RecordReader<S>) -> Result<Option<Span>> {
        reader.skip_record_span()
    }
}

/// True when `data` (one record's bytes after `block_size`) decodes without error and needs no
/// rewriting, in which case a count need not decode it.
#[inline(always)]
pub(crate) fn decodes_as_is(data: &[u8], n_ref: usize) -> bool {
    span_if_as_is(data, n_ref).is_some()
}

/// The record's [`Span`] when `data` decodes without error and needs no rewriting
/// ([`decodes_as_is`]); `None` when it must be decoded to tell.
#[inline(always)]
pub(crate) fn span_if_as_is(data: &[u8], n_ref: usize) -> Option<Span> {
    if check_fixed(data, data.len()).is_err() {
        return None;
    }
    let word = |i: usize| u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    let in_range = |id: i32| id == -1 || (id >= 0 && (id as usize) < n_ref);
    let ref_id = word(0) as i32;
    if !in_range(ref_id) || !in_range(word(20) as i32) {
        return None;
    }
    let pos = word(4) as i32;
    let flag_nc = word(12);
    let unmapped = Flags::from_bits((flag_nc >> 16) as u16).is_unmapped();
    let n_cigar = (flag_nc & 0xffff) as usize;
    // As `RecordRef::end_pos`: the stored position plus the reference length, at least 1.
    let span = |rlen: u64| Span {
        ref_id: RefId::from_stored(ref_id),
        pos: Position::from_stored(pos),
        end: Position::saturating_from(
            i64::from(pos) + if unmapped { 1 } else { (rlen as i64).max(1) },
        ),
    };
    if n_cigar == 0 {
        return Some(span(0));
    }
    let l_read_name = (word(8) & 0xff) as usize;
    let seq_len = u64::from(word(16));
    // check_fixed showed the CIGAR inside the record.
    let start = FIXED + l_read_name;
    let ops = &data[start..start + 4 * n_cigar];
    let first = cigar::Op(u32::from_le_bytes([ops[0], ops[1], ops[2], ops[3]]));
    // A CIGAR that may stand for one in a `CG` tag is left to the full decode.
    if first.code() == cigar::SOFT_CLIP && u64::from(first.len()) == seq_len {
        return None;
    }
    let (rlen, qlen) = cigar::Cigar::new(ops).lengths();
    (seq_len == 0 || unmapped || qlen == seq_len).then(|| span(rlen))
}
