//! One BAM alignment record, decoded and checked as htslib 1.16's `bam_read1` and `sam_read1` do.
//!
//! A [`Record`] owns its bytes; a [`RecordRef`] is the same record read in place from a block
//! buffer (no copy, no allocation), with the same accessors.
//!
//! Longer than most files: the owned and the in-place record share one generic type and its
//! accessors, which would otherwise be written twice.

use crate::aux;

mod batch;
mod set;

pub use batch::Batch;

use crate::cigar::{self, Cigar, Op};
use crate::error::RecordError;
use crate::flags::Flags;
use region::{Position, RefId};

/// Bytes of the fixed fields, from `refID` to `tlen`.
const FIXED: usize = 32;

/// The coordinates as the file stores them (-1, or another negative value, for unset): for
/// formats that print them as stored (SAM text, samtools' filter expressions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredCoordinates {
    /// `refID`.
    pub ref_id: i32,
    /// `pos` (0-based).
    pub pos: i32,
    /// `next_refID`.
    pub mate_ref_id: i32,
    /// `next_pos` (0-based).
    pub mate_pos: i32,
}

/// A decoded alignment record: its bytes (`D`: owned by default, or borrowed, see
/// [`RecordRef`]) and where each part of them is.
#[derive(Debug, Clone)]
pub struct Record<D = Vec<u8>> {
    data: D,
    ref_id: i32,
    pos: i32,
    bin: u16,
    mapq: u8,
    flag: u16,
    next_ref_id: i32,
    next_pos: i32,
    tlen: i32,
    name_len: usize,
    cigar_start: usize,
    n_cigar: usize,
    seq_start: usize,
    seq_len: usize,
    qual_start: usize,
    aux_start: usize,
}

/// A record decoded in place: its bytes borrowed from the buffer they were read into.
pub type RecordRef<'a> = Record<&'a [u8]>;

/// Where a record's `CG:B:I` array (the real CIGAR of a long-CIGAR record) lies in its aux data:
/// the index of the tag's type byte, and the operation count.
struct LongCigar {
    at: usize,
    n: usize,
}

impl Record<Vec<u8>> {
    /// Decodes the bytes of one record after its `block_size` (the caller reads `block_size`,
    /// rejects values below 32 and reads that many bytes). `n_ref` is the header's reference
    /// count, for the `refID`/`next_refID` range check.
    ///
    /// Checks, as htslib: `l_read_name` not 0; read name, CIGAR, SEQ and QUAL inside the record;
    /// `l_seq` not negative; the CIGAR's query length equal to `l_seq` (when the read is mapped
    /// and both are present); both reference ids in `-1..n_ref`. A CIGAR stored as `kSmN` with
    /// the real one in a `CG:B:I` tag is swapped back and the tag removed. Aux data is checked
    /// only when printed ([`crate::sam::write_sam`]) or by [`Record::check_aux`], as samtools
    /// does, so that `view -c` counts a record with bad aux data.
    pub fn decode(data: Vec<u8>, n_ref: usize) -> Result<Record, RecordError> {
        let mut r = Record::layout(data)?;
        if let Some(long) = r.long_cigar()? {
            let mut out = Vec::with_capacity(r.data.len() + 4 * long.n);
            r.restore_long_cigar(&long, &mut out);
            r.data = out;
        }
        r.check(n_ref)?;
        Ok(r)
    }

    /// Gives back the record bytes (possibly rewritten for a `CG` CIGAR), to reuse the buffer.
    pub fn into_data(self) -> Vec<u8> {
        self.data
    }
}

impl<'a> Record<&'a [u8]> {
    /// [`Record::decode`] in place: the record borrows `data`. A long-CIGAR record (its CIGAR in
    /// a `CG` tag) is rewritten into `scratch` and borrows that instead.
    #[inline]
    pub fn decode_in(
        data: &'a [u8],
        n_ref: usize,
        scratch: &'a mut Vec<u8>,
    ) -> Result<RecordRef<'a>, RecordError> {
        let mut r = Record::layout(data)?;
        if let Some(long) = r.long_cigar()? {
            scratch.clear();
            r.restore_long_cigar(&long, scratch);
            r.data = scratch.as_slice();
        }
        r.check(n_ref)?;
        Ok(r)
    }
}

impl<D> Record<D> {
    /// Where the record's bytes are: the buffer, or for a record kept apart from its bytes
    /// (a formatting batch), their range.
    pub(crate) fn storage(&self) -> &D {
        &self.data
    }

    /// Where the aux data starts within the record bytes (for error offsets).
    pub fn aux_offset(&self) -> usize {
        self.aux_start
    }

    /// The same fields over other storage holding the same bytes.
    pub(crate) fn with_data<E>(&self, data: E) -> Record<E> {
        Record {
            data,
            ref_id: self.ref_id,
            pos: self.pos,
            bin: self.bin,
            mapq: self.mapq,
            flag: self.flag,
            next_ref_id: self.next_ref_id,
            next_pos: self.next_pos,
            tlen: self.tlen,
            name_len: self.name_len,
            cigar_start: self.cigar_start,
            n_cigar: self.n_cigar,
            seq_start: self.seq_start,
            seq_len: self.seq_len,
            qual_start: self.qual_start,
            aux_start: self.aux_start,
        }
    }
}

impl<D: AsRef<[u8]>> Record<D> {
    /// Reads the fixed fields and places the variable ones, checking that they fit.
    #[inline]
    fn layout(data: D) -> Result<Record<D>, RecordError> {
        let bytes = data.as_ref();
        crate::lengths::check_fixed(bytes, bytes.len())?;
        let fixed = &bytes[..FIXED];
        let word =
            |i: usize| u32::from_le_bytes([fixed[i], fixed[i + 1], fixed[i + 2], fixed[i + 3]]);
        let ref_id = word(0) as i32;
        let pos = word(4) as i32;
        let bin_mq_nl = word(8);
        let flag_nc = word(12);
        let l_seq = word(16) as i32;
        let next_ref_id = word(20) as i32;
        let next_pos = word(24) as i32;
        let tlen = word(28) as i32;

        let l_read_name = (bin_mq_nl & 0xff) as usize;
        let n_cigar = (flag_nc & 0xffff) as usize;
        let seq_len = l_seq as usize;
        // htslib adds a NUL to an unterminated name, so then every stored byte is printed.
        let name_len = if bytes[FIXED + l_read_name - 1] == 0 {
            l_read_name - 1
        } else {
            l_read_name
        };
        let cigar_start = FIXED + l_read_name;
        let seq_start = cigar_start + 4 * n_cigar;
        let qual_start = seq_start + seq_len.div_ceil(2);
        let aux_start = qual_start + seq_len;
        Ok(Record {
            data,
            ref_id,
            pos,
            bin: (bin_mq_nl >> 16) as u16,
            mapq: (bin_mq_nl >> 8) as u8,
            flag: (flag_nc >> 16) as u16,
            next_ref_id,
            next_pos,
            tlen,
            name_len,
            cigar_start,
            n_cigar,
            seq_start,
            seq_len,
            qual_start,
            aux_start,
        })
    }

    /// The checks that need the final CIGAR: its query length against `l_seq`, and the
    /// reference ids; the bin is recomputed from the CIGAR as htslib does.
    #[inline]
    fn check(&mut self, n_ref: usize) -> Result<(), RecordError> {
        if self.n_cigar > 0 {
            let (rlen, qlen) = self.cigar().lengths();
            let span = if self.flags().is_unmapped() || rlen == 0 {
                1
            } else {
                rlen as i64
            };
            // htslib recomputes the bin of every record with a CIGAR.
            let (beg, end) = (i64::from(self.pos), i64::from(self.pos) + span);
            self.bin = index::binning::reg2bin_signed(beg, end, 14, 5) as u16;
            if self.seq_len > 0 && !self.flags().is_unmapped() && qlen != self.seq_len as u64 {
                return Err(RecordError::CigarSeqMismatch {
                    read_name: self.name_lossy(),
                    cigar_len: qlen,
                    seq_len: self.seq_len as u64,
                });
            }
        }
        for id in [self.ref_id, self.next_ref_id] {
            if id < -1 || (id >= 0 && id as usize >= n_ref) {
                return Err(RecordError::RefIdOutOfRange { ref_id: id, n_ref });
            }
        }
        Ok(())
    }

    /// htslib's `bam_tag2cigar` rule: a record whose CIGAR starts with `<l_seq>S` and that
    /// carries a `CG:B:I` (or `B:i`) array of at least as many operations gets that array as its
    /// CIGAR. Returns where the array is when the rule applies.
    #[inline]
    fn long_cigar(&self) -> Result<Option<LongCigar>, RecordError> {
        if self.n_cigar == 0 || self.ref_id < 0 || self.pos < 0 {
            return Ok(None);
        }
        let first = self.cigar().get(0).unwrap_or(Op(0));
        if first.code() != cigar::SOFT_CLIP || first.len() as usize != self.seq_len {
            return Ok(None);
        }
        self.find_long_cigar()
    }

    /// The rare part of [`Record::long_cigar`]: looking for the `CG` tag.
    #[cold]
    fn find_long_cigar(&self) -> Result<Option<LongCigar>, RecordError> {
        let aux = self.aux();
        let at = match aux::find(aux, *b"CG") {
            Ok(Some(at)) => at,
            Ok(None) => return Ok(None),
            Err(offset) => {
                return Err(RecordError::CorruptAux {
                    read_name: self.name_lossy(),
                    offset: self.aux_start + offset,
                })
            }
        };
        if aux[at] != b'B' || !(aux[at + 1] == b'I' || aux[at + 1] == b'i') {
            return Ok(None);
        }
        let n = u32::from_le_bytes([aux[at + 2], aux[at + 3], aux[at + 4], aux[at + 5]]) as usize;
        if n < self.n_cigar || n >= 1 << 29 {
            return Ok(None);
        }
        Ok(Some(LongCigar { at, n }))
    }

    /// Writes the record's bytes to `out` with the `CG` array as the CIGAR and the tag removed,
    /// and moves the offsets to match `out` (which the caller then makes the record's data).
    fn restore_long_cigar(&mut self, long: &LongCigar, out: &mut Vec<u8>) {
        let data = self.data.as_ref();
        let aux = &data[self.aux_start..];
        // `find` checked that the array lies inside the record.
        let ops = long.at + 6..long.at + 6 + 4 * long.n;
        let tag_start = long.at - 2;
        out.extend_from_slice(&data[..self.cigar_start]);
        out.extend_from_slice(&aux[ops.clone()]);
        out.extend_from_slice(&data[self.seq_start..self.aux_start]);
        out.extend_from_slice(&aux[..tag_start]);
        out.extend_from_slice(&aux[ops.end..]);

        let grown = 4 * long.n - 4 * self.n_cigar;
        self.n_cigar = long.n;
        self.seq_start += grown;
        self.qual_start += grown;
        self.aux_start += grown;
    }

    /// The record's bytes as decoded (after `block_size`; a `CG` CIGAR already moved in place).
    pub fn data(&self) -> &[u8] {
        self.data.as_ref()
    }

    /// A copy that owns its bytes.
    pub fn to_owned_record(&self) -> Record {
        self.with_data(self.data().to_vec())
    }

    /// The same record read in place over its bytes, for code written once for records read
    /// in place and records held (a CRAM's records, laid out as BAM, are held).
    pub fn as_record_ref(&self) -> RecordRef<'_> {
        self.with_data(self.data())
    }

    /// The reference the record is placed on (`None` for an unplaced read).
    #[inline]
    pub fn ref_id(&self) -> Option<RefId> {
        RefId::from_stored(self.ref_id)
    }

    /// The 0-based leftmost position (`None` when the record has none).
    #[inline]
    pub fn pos(&self) -> Option<Position> {
        Position::from_stored(self.pos)
    }

    /// Mapping quality.
    pub fn mapq(&self) -> u8 {
        self.mapq
    }

    /// The FLAG bits.
    #[inline]
    pub fn flags(&self) -> Flags {
        Flags::from_bits(self.flag)
    }

    /// The BAI bin: as stored, or recomputed from the CIGAR when there is one (as htslib does).
    pub fn bin(&self) -> u16 {
        self.bin
    }

    /// The mate's reference (`next_refID`; `None` when unset).
    #[inline]
    pub fn mate_ref_id(&self) -> Option<RefId> {
        RefId::from_stored(self.next_ref_id)
    }

    /// The mate's 0-based position (`next_pos`; `None` when unset).
    #[inline]
    pub fn mate_pos(&self) -> Option<Position> {
        Position::from_stored(self.next_pos)
    }

    /// The reference ids and positions as stored, -1 and all.
    #[inline]
    pub fn stored_coordinates(&self) -> StoredCoordinates {
        StoredCoordinates {
            ref_id: self.ref_id,
            pos: self.pos,
            mate_ref_id: self.next_ref_id,
            mate_pos: self.next_pos,
        }
    }

    /// Template length.
    pub fn tlen(&self) -> i32 {
        self.tlen
    }

    /// Read name, without its NUL.
    pub fn name(&self) -> &[u8] {
        &self.data.as_ref()[FIXED..FIXED + self.name_len]
    }

    fn name_lossy(&self) -> String {
        crate::error::printable(self.name())
    }

    /// CIGAR operations (the real ones when they were stored in a `CG` tag).
    #[inline]
    pub fn cigar(&self) -> Cigar<'_> {
        Cigar::new(&self.data.as_ref()[self.cigar_start..self.cigar_start + 4 * self.n_cigar])
    }

    /// Sequence length `l_seq`.
    pub fn seq_len(&self) -> usize {
        self.seq_len
    }

    /// The packed 4-bit sequence (two bases per byte, high nibble first).
    pub fn seq_packed(&self) -> &[u8] {
        &self.data.as_ref()[self.seq_start..self.qual_start]
    }

    /// The sequence as letters of `=ACMGRSVTWYHKDBN`.
    pub fn seq(&self) -> Vec<u8> {
        const BASES: &[u8; 16] = b"=ACMGRSVTWYHKDBN";
        let packed = self.seq_packed();
        (0..self.seq_len)
            .map(|i| {
                let b = packed[i / 2];
                BASES[usize::from(if i % 2 == 0 { b >> 4 } else { b & 0xf })]
            })
            .collect()
    }

    /// Base qualities without the +33 offset (`0xff` first when absent).
    pub fn qual(&self) -> &[u8] {
        &self.data.as_ref()[self.qual_start..self.aux_start]
    }

    /// Raw aux data (a `CG` tag whose array became the CIGAR is not in it).
    pub fn aux(&self) -> &[u8] {
        &self.data.as_ref()[self.aux_start..]
    }

    /// The aux fields in order; an `Err(offset)` item marks corrupt data.
    pub fn aux_fields(&self) -> aux::Fields<'_> {
        aux::fields(self.aux())
    }

    /// Checks the aux data with the rules of `sam_format1`, without formatting it.
    pub fn check_aux(&self) -> Result<(), RecordError> {
        aux::check(self.aux()).map_err(|offset| RecordError::CorruptAux {
            read_name: self.name_lossy(),
            offset: self.aux_start + offset,
        })
    }

    /// htslib's `bam_endpos`: one past the last reference base covered, or `pos + 1` when the
    /// read is unmapped or its CIGAR covers no reference bases; 0 for a record without a
    /// position whose CIGAR covers no bases (htslib computes from -1 and gets 0, or below 0
    /// for a position stored below -1: each compares alike with a region's bounds).
    #[inline]
    pub fn end_pos(&self) -> Position {
        Position::saturating_from(self.stored_end_pos())
    }

    /// [`Record::end_pos`] as htslib computes it, from the stored position: -1 plus the span
    /// for a record without a position (samtools' filter expressions print it so).
    #[inline]
    pub fn stored_end_pos(&self) -> i64 {
        let rlen = if self.flags().is_unmapped() {
            0
        } else {
            self.cigar().reference_len() as i64
        };
        i64::from(self.pos) + rlen.max(1)
    }

    /// The stored read-name field (`l_read_name` bytes, padding NULs included), and whether it
    /// ends in a NUL (htslib adds one when it does not).
    pub(crate) fn name_field(&self) -> (&[u8], bool) {
        let field = &self.data()[FIXED..self.cigar_start];
        (field, field.last() == Some(&0))
    }

    /// The bytes from the CIGAR to the end: CIGAR, SEQ, QUAL and aux data, as stored (with a
    /// `CG` CIGAR already moved in place).
    pub(crate) fn cigar_onwards(&self) -> &[u8] {
        &self.data()[self.cigar_start..]
    }

    /// The bytes from SEQ to the end.
    pub(crate) fn seq_onwards(&self) -> &[u8] {
        &self.data()[self.seq_start..]
    }
}

#[cfg(test)]
mod tests;
