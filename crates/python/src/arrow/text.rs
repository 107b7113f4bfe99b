//! A string column written straight into its value buffer: a read's bases, qualities, CIGAR
//! and name go into one growing buffer with no allocation a record (Arrow's string builder
//! takes a `&str`, which would cost each a conversion or a copy first).

use std::sync::Arc;

use arrow_array::{ArrayRef, StringArray};
use arrow_buffer::{Buffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};

use crate::Error;

/// The bases of BAM's 4-bit codes.
const BASES: &[u8; 16] = b"=ACMGRSVTWYHKDBN";

/// The two bases of each packed byte.
const PAIRS: [[u8; 2]; 256] = {
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [BASES[i >> 4], BASES[i & 15]];
        i += 1;
    }
    t
};

/// A string column being built.
pub(crate) struct Text {
    values: Vec<u8>,
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
}

impl Text {
    pub(crate) fn new() -> Text {
        Text {
            values: Vec::new(),
            offsets: vec![0],
            nulls: NullBufferBuilder::new(0),
        }
    }

    /// Bytes held so far (a batch is cut once a column passes 1 GiB, so that only one record
    /// larger than about 1 GiB of text could take an offset past `i32::MAX`: `finish` refuses
    /// that column).
    pub(crate) fn bytes(&self) -> usize {
        self.values.len()
    }

    pub(crate) fn push_null(&mut self) {
        self.offsets.push(self.offsets[self.offsets.len() - 1]);
        self.nulls.append_null();
    }

    /// Ends the value written since the last one.
    fn end(&mut self) {
        // Past i32::MAX the offset saturates (never wraps) and `finish` refuses the column.
        self.offsets
            .push(i32::try_from(self.values.len()).unwrap_or(i32::MAX));
        self.nulls.append_non_null();
    }

    /// Text from a file: kept as it is when it is UTF-8, else with U+FFFD for the bytes that
    /// are not (a read name is free bytes in BAM).
    pub(crate) fn push_bytes(&mut self, b: &[u8]) {
        // Read names are ASCII: the ASCII test is a fraction of UTF-8 validation's cost on
        // names this short.
        if b.is_ascii() || std::str::from_utf8(b).is_ok() {
            self.values.extend_from_slice(b);
        } else {
            self.values
                .extend_from_slice(String::from_utf8_lossy(b).as_bytes());
        }
        self.end();
    }

    /// `len` bases from BAM's packed 4-bit codes.
    pub(crate) fn push_bases(&mut self, packed: &[u8], len: usize) {
        // `packed` holds (len + 1) / 2 bytes (the record's layout was checked when it was
        // decoded); a shorter one gives as many bases as it holds.
        let len = len.min(2 * packed.len());
        let start = self.values.len();
        // Written in place, two bases a byte, rather than pushed two bytes at a time.
        self.values.resize(start + len, 0);
        let out = &mut self.values[start..];
        let mut pairs = out.chunks_exact_mut(2);
        for (two, &pair) in (&mut pairs).zip(packed) {
            two.copy_from_slice(&PAIRS[usize::from(pair)]);
        }
        if let ([last], Some(&pair)) = (pairs.into_remainder(), packed.get(len / 2)) {
            *last = BASES[usize::from(pair >> 4)];
        }
        self.end();
    }

    /// Phred qualities as text (+33); a quality past 93 (printable no more) as U+FFFD.
    pub(crate) fn push_qualities(&mut self, qual: &[u8]) {
        // The largest quality in one pass the compiler vectorises (`all` stops early, and so
        // goes a byte at a time).
        if qual.iter().fold(0, |m, &q| m.max(q)) <= 93 {
            self.values.extend(qual.iter().map(|q| q + 33));
        } else {
            for &q in qual {
                match q {
                    0..=93 => self.values.push(q + 33),
                    _ => self.values.extend_from_slice("\u{fffd}".as_bytes()),
                }
            }
        }
        self.end();
    }

    /// A CIGAR as text.
    pub(crate) fn push_cigar(&mut self, cigar: bam::cigar::Cigar<'_>) {
        for op in cigar.iter() {
            push_decimal(&mut self.values, op.len());
            self.values.push(op.letter());
        }
        self.end();
    }

    /// The column so far; the builder starts again empty.
    pub(crate) fn finish(&mut self) -> Result<ArrayRef, Error> {
        // The next batch is likely as large: room for it at once, not grown by doubling
        // (each doubling a copy of what was written).
        let mut next = Vec::with_capacity(self.offsets.len());
        next.push(0);
        let offsets = std::mem::replace(&mut self.offsets, next);
        let room = self.values.len();
        let values = std::mem::replace(&mut self.values, Vec::with_capacity(room));
        let nulls = self.nulls.finish();
        let rows = offsets.len() - 1;
        // `OffsetBuffer::new` checks the offsets rise from 0; the rest `try_new` would check
        // is checked here. Values within what 32-bit offsets address: then no offset
        // saturated in `end`, and each is exactly where its value ended. The last offset at
        // the values' end, and a null flag a value. `try_new` would also validate every byte
        // as UTF-8 again (a twentieth of a whole table's cost): every value was pushed whole,
        // and each is ASCII (bases, qualities, CIGAR) or valid UTF-8 (`push_bytes`, U+FFFD
        // for the bytes that are not; qualities past 93 as U+FFFD), so the values are UTF-8
        // and every offset is on a character's boundary.
        let last = offsets.last().map_or(0, |&o| o as usize);
        if values.len() > i32::MAX as usize
            || last != values.len()
            || nulls.as_ref().is_some_and(|n| n.len() != rows)
        {
            return Err(Error::Read(format!(
                "cannot make an Arrow string column of {rows} values and {} bytes (Arrow's \
                 strings hold at most {} bytes a batch)",
                values.len(),
                i32::MAX
            )));
        }
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        // SAFETY: as `try_new` requires: offsets rising from 0 (`OffsetBuffer::new`), none
        // past the values (each is where a value ended, none saturated: checked above),
        // `nulls` as long as the column, and every value valid UTF-8 that starts and ends on
        // a character boundary (above).
        let array = unsafe { StringArray::new_unchecked(offsets, Buffer::from_vec(values), nulls) };
        Ok(Arc::new(array))
    }
}

fn push_decimal(out: &mut Vec<u8>, mut n: u32) {
    let mut digits = [0u8; 10];
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    #[test]
    fn values_nulls_and_odd_lengths() {
        let mut t = Text::new();
        t.push_bases(&[0x12, 0x48, 0xf0], 5);
        t.push_null();
        t.push_qualities(&[0, 40, 93]);
        t.push_bytes(b"r\xff1");
        let cigar = [(100u32 << 4), (5 << 4) | 1];
        let bytes: Vec<u8> = cigar.iter().flat_map(|c| c.to_le_bytes()).collect();
        t.push_cigar(bam::cigar::Cigar::new(&bytes));
        let array = t.finish().unwrap();
        let s = array.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(s.value(0), "ACGTN");
        assert!(s.is_null(1));
        assert_eq!(s.value(2), "!I~");
        assert_eq!(s.value(3), "r\u{fffd}1");
        assert_eq!(s.value(4), "100M5I");
        assert_eq!(t.bytes(), 0);
    }

    #[test]
    fn a_column_past_32_bit_offsets_is_refused() {
        // 716 M qualities past 93, each U+FFFD (3 bytes): past i32::MAX, so the offset
        // saturated; the column must be refused, not cut inside a character.
        let mut t = Text::new();
        t.push_qualities(&vec![94u8; 716_000_000]);
        let e = t.finish().unwrap_err().to_string();
        assert!(e.contains("at most 2147483647 bytes"), "{e}");
    }
}
