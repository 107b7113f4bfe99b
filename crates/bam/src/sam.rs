//! SAM text, byte-identical to htslib 1.16's `sam_format1` (as used by `samtools view`): one
//! record with [`write_sam`], a stream of records with [`SamWriter`] (in large writes, formatted
//! on worker threads when asked).

mod writer;

pub use writer::{SamWriteError, SamWriter, DEFAULT_WRITE_SIZE};

use crate::error::RecordError;
use crate::header::Header;
use crate::record::Record;
use region::RefId;

/// The 16 base codes of BAM's 4-bit sequence encoding.
const BASES: &[u8; 16] = b"=ACMGRSVTWYHKDBN";

/// Both bases of every packed sequence byte, so decoding is one lookup per two bases.
static BASE_PAIRS: [[u8; 2]; 256] = {
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [BASES[i >> 4], BASES[i & 0xf]];
        i += 1;
    }
    t
};

/// Appends one SAM line for `record` (owned or read in place), ending in `\n`, to `out`.
///
/// The only failure is corrupt aux data (htslib: "Corrupted aux data for read ..."); `out` is then
/// left as it was, so everything before this record can still be written.
///
/// ```
/// use bam::header::{Header, Reference};
/// use bam::record::Record;
///
/// let refs = vec![Reference { name: b"chr1".to_vec(), len: 1000 }];
/// let header = Header::from_parts(Vec::new(), refs).unwrap();
/// // refID 0, pos 9, l_read_name 2, MAPQ 60, bin 4681, 1 CIGAR op, flag 0, l_seq 2,
/// // no mate, tlen 0, name "r", CIGAR 2M, SEQ "AC", QUAL 30 30, NM:C:0.
/// let mut data = Vec::new();
/// for word in [0u32, 9, 4681 << 16 | 60 << 8 | 2, 1, 2, u32::MAX, u32::MAX, 0] {
///     data.extend_from_slice(&word.to_le_bytes());
/// }
/// data.extend_from_slice(b"r\0");
/// data.extend_from_slice(&(2u32 << 4).to_le_bytes());
/// data.extend_from_slice(&[0x12, 30, 30]);
/// data.extend_from_slice(b"NMC\0");
/// let record = Record::decode(data, header.refs().len()).unwrap();
/// let mut out = Vec::new();
/// bam::sam::write_sam(&record, &header, &mut out).unwrap();
/// assert_eq!(out, b"r\t0\tchr1\t10\t60\t2M\t*\t0\t0\tAC\t??\tNM:i:0\n");
/// ```
pub fn write_sam<D: AsRef<[u8]>>(
    record: &Record<D>,
    header: &Header,
    out: &mut Vec<u8>,
) -> Result<(), RecordError> {
    let start = out.len();
    let seq_len = record.seq_len();
    let cigar = record.cigar();
    let stored = record.stored_coordinates();
    let ref_id = record.ref_id();
    // One reservation for the whole line: the fixed fields take at most ~120 bytes beside the
    // names, each CIGAR operation at most 11, each aux byte at most ~4 (a B:c array element).
    out.reserve(
        record.name().len()
            + 2 * seq_len
            + 11 * cigar.len()
            + 4 * record.aux().len()
            + 2 * header_name_len(header, ref_id)
            + 128,
    );

    out.extend_from_slice(record.name());
    out.push(b'\t');
    push_u32(out, u32::from(record.flags().bits()));
    out.push(b'\t');
    push_ref_name(out, header, ref_id);
    out.push(b'\t');
    push_i64(out, i64::from(stored.pos) + 1);
    out.push(b'\t');
    push_u32(out, u32::from(record.mapq()));
    out.push(b'\t');

    if cigar.is_empty() {
        out.push(b'*');
    } else {
        for op in cigar.iter() {
            push_u32(out, op.len());
            out.push(op.letter());
        }
    }
    out.push(b'\t');

    match record.mate_ref_id() {
        None => out.push(b'*'),
        mate if mate == ref_id => out.push(b'='),
        mate => push_ref_name(out, header, mate),
    }
    out.push(b'\t');
    push_i64(out, i64::from(stored.mate_pos) + 1);
    out.push(b'\t');
    push_i64(out, i64::from(record.tlen()));
    out.push(b'\t');

    if seq_len == 0 {
        out.extend_from_slice(b"*\t*");
    } else {
        push_seq(out, record.seq_packed(), seq_len);
        out.push(b'\t');
        let qual = record.qual();
        if qual.first() == Some(&0xff) {
            out.push(b'*');
        } else {
            push_qual(out, qual);
        }
    }

    if let Err(offset) = crate::aux::format(record.aux(), out) {
        out.truncate(start);
        return Err(RecordError::CorruptAux {
            read_name: crate::error::printable(record.name()),
            offset: record.aux_offset() + offset,
        });
    }
    out.push(b'\n');
    Ok(())
}

/// Appends `seq_len` bases decoded from their packed 4-bit form: 32 at a time with a SIMD
/// table lookup where the CPU has one, else two per table lookup, 16 at a time through a fixed
/// buffer (constant-size copies, nothing zeroed first).
fn push_seq(out: &mut Vec<u8>, packed: &[u8], seq_len: usize) {
    let mut pairs = packed.get(..seq_len / 2).unwrap_or(packed);
    #[cfg(target_arch = "x86_64")]
    if pairs.len() >= 16 && std::arch::is_x86_feature_detected!("ssse3") {
        let whole = pairs.len() / 16 * 16;
        let mut buf = [0u8; 32];
        for chunk in pairs[..whole].chunks_exact(16) {
            if let Ok(chunk) = <&[u8; 16]>::try_from(chunk) {
                // SAFETY: SSSE3 is present (checked above).
                unsafe { simd::decode16(chunk, &mut buf) };
                out.extend_from_slice(&buf);
            }
        }
        pairs = &pairs[whole..];
    }
    let mut chunks = pairs.chunks_exact(8);
    for chunk in &mut chunks {
        let mut buf = [0u8; 16];
        for (d, &b) in buf.chunks_exact_mut(2).zip(chunk) {
            d.copy_from_slice(&BASE_PAIRS[usize::from(b)]);
        }
        out.extend_from_slice(&buf);
    }
    for &b in chunks.remainder() {
        out.extend_from_slice(&BASE_PAIRS[usize::from(b)]);
    }
    if seq_len % 2 == 1 {
        if let Some(&b) = packed.get(seq_len / 2) {
            out.push(BASES[usize::from(b >> 4)]);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_loadu_si128, _mm_set1_epi8, _mm_shuffle_epi8, _mm_srli_epi16,
        _mm_storeu_si128, _mm_unpackhi_epi8, _mm_unpacklo_epi8,
    };

    /// Decodes 16 packed bytes (32 bases, high nibble first) into `out` with two byte shuffles
    /// of the 16-letter table.
    ///
    /// # Safety
    /// The CPU must have SSSE3.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn decode16(packed: &[u8; 16], out: &mut [u8; 32]) {
        let table = _mm_loadu_si128(super::BASES.as_ptr().cast::<__m128i>());
        let low_nibbles = _mm_set1_epi8(0x0f);
        let v = _mm_loadu_si128(packed.as_ptr().cast::<__m128i>());
        let hi = _mm_and_si128(_mm_srli_epi16::<4>(v), low_nibbles);
        let lo = _mm_and_si128(v, low_nibbles);
        let hi = _mm_shuffle_epi8(table, hi);
        let lo = _mm_shuffle_epi8(table, lo);
        _mm_storeu_si128(
            out.as_mut_ptr().cast::<__m128i>(),
            _mm_unpacklo_epi8(hi, lo),
        );
        _mm_storeu_si128(
            out.as_mut_ptr().add(16).cast::<__m128i>(),
            _mm_unpackhi_epi8(hi, lo),
        );
    }
}

/// Appends base qualities as SAM text (+33 each).
fn push_qual(out: &mut Vec<u8>, qual: &[u8]) {
    let mut chunks = qual.chunks_exact(16);
    for chunk in &mut chunks {
        let mut buf = [0u8; 16];
        for (d, &q) in buf.iter_mut().zip(chunk) {
            *d = q.wrapping_add(33);
        }
        out.extend_from_slice(&buf);
    }
    out.extend(chunks.remainder().iter().map(|&q| q.wrapping_add(33)));
}

fn header_name_len(header: &Header, ref_id: Option<RefId>) -> usize {
    ref_id
        .and_then(|t| header.ref_name(t))
        .map_or(1, <[u8]>::len)
}

/// RNAME/RNEXT for a reference id that `Record::decode` has already range-checked.
fn push_ref_name(out: &mut Vec<u8>, header: &Header, ref_id: Option<RefId>) {
    match ref_id.and_then(|t| header.ref_name(t)) {
        Some(name) => out.extend_from_slice(name),
        None => out.push(b'*'),
    }
}

/// "00" to "99": two digits per division, as fast integer printers do.
static DIGIT_PAIRS: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// Appends the decimal form of `n`. The short numbers that fill a SAM line (flags, MAPQ, CIGAR
/// lengths, tag values) take one fixed-size store each.
#[inline]
pub(crate) fn push_u32(out: &mut Vec<u8>, n: u32) {
    if n < 10 {
        out.push(b'0' + n as u8);
    } else if n < 100 {
        out.extend_from_slice(&DIGIT_PAIRS[n as usize]);
    } else if n < 1000 {
        let [a, b] = DIGIT_PAIRS[(n % 100) as usize];
        out.extend_from_slice(&[b'0' + (n / 100) as u8, a, b]);
    } else {
        push_digits(out, u64::from(n));
    }
}

/// Appends the decimal form of `n`.
#[inline]
pub(crate) fn push_u64(out: &mut Vec<u8>, n: u64) {
    match u32::try_from(n) {
        Ok(n) => push_u32(out, n),
        Err(_) => push_digits(out, n),
    }
}

/// Appends the decimal form of `n`, with a `-` when negative.
#[inline]
pub fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Eight decimal digits of `n < 10^8`, leading zeros included: two independent halves of
/// two pairs each, so the divisions (multiplications, in fact) run in parallel.
fn eight_digits(n: u32) -> [u8; 8] {
    let (hi, lo) = (n / 10_000, n % 10_000);
    let [a, b] = DIGIT_PAIRS[(hi / 100) as usize];
    let [c, d] = DIGIT_PAIRS[(hi % 100) as usize];
    let [e, f] = DIGIT_PAIRS[(lo / 100) as usize];
    let [g, h] = DIGIT_PAIRS[(lo % 100) as usize];
    [a, b, c, d, e, f, g, h]
}

/// Appends `n < 10^8` without leading zeros: the eight digits are shifted to the front of one
/// machine word, appended whole (a constant-size copy, no call) and cut to length.
fn push_up_to_eight(out: &mut Vec<u8>, n: u32) {
    let len = n.checked_ilog10().map_or(1, |l| l as usize + 1);
    let word = u64::from_be_bytes(eight_digits(n)) << (8 * (8 - len));
    let start = out.len();
    out.extend_from_slice(&word.to_be_bytes());
    out.truncate(start + len);
}

/// The decimal form of a number of four digits or more.
fn push_digits(out: &mut Vec<u8>, n: u64) {
    const E8: u64 = 100_000_000;
    if n < E8 {
        push_up_to_eight(out, n as u32);
    } else if n < E8 * E8 {
        push_up_to_eight(out, (n / E8) as u32);
        out.extend_from_slice(&eight_digits((n % E8) as u32));
    } else {
        push_up_to_eight(out, (n / (E8 * E8)) as u32);
        out.extend_from_slice(&eight_digits((n / E8 % E8) as u32));
        out.extend_from_slice(&eight_digits((n % E8) as u32));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::Reference;

    #[test]
    fn integers() {
        let mut v = Vec::new();
        push_i64(&mut v, 0);
        v.push(b' ');
        push_i64(&mut v, i64::MIN);
        v.push(b' ');
        push_u64(&mut v, u64::MAX);
        v.push(b' ');
        push_i64(&mut v, -7);
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "0 -9223372036854775808 18446744073709551615 -7"
        );
        // Every digit count, and the edges between them.
        let mut n: u64 = 1;
        for _ in 0..19 {
            for m in [n - 1, n, n + 1, 2 * n - 1, 5 * n + 3] {
                let mut v = Vec::new();
                push_u64(&mut v, m);
                assert_eq!(v, m.to_string().into_bytes(), "{m}");
                if let Ok(m32) = u32::try_from(m) {
                    let mut v = b"x".to_vec();
                    push_u32(&mut v, m32);
                    assert_eq!(v, format!("x{m}").into_bytes(), "{m}");
                }
            }
            n *= 10;
        }
    }

    #[test]
    fn sequences_of_every_length_and_byte() {
        let packed: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for seq_len in (0..=2 * packed.len()).filter(|n| n % 7 < 3 || *n > 500) {
            let mut got = b"x".to_vec();
            push_seq(&mut got, &packed, seq_len);
            let want: Vec<u8> = (0..seq_len)
                .map(|i| {
                    let b = packed[i / 2];
                    BASES[usize::from(if i % 2 == 0 { b >> 4 } else { b & 0xf })]
                })
                .collect();
            assert_eq!(got[1..], want[..], "{seq_len} bases");
        }
    }

    fn header() -> Header {
        Header::from_parts(
            Vec::new(),
            vec![
                Reference {
                    name: b"chr1".to_vec(),
                    len: 1000,
                },
                Reference {
                    name: b"chr2".to_vec(),
                    len: 1000,
                },
            ],
        )
        .unwrap()
    }

    #[allow(clippy::too_many_arguments)]
    fn raw(
        ref_id: i32,
        pos: i32,
        flag: u16,
        name: &[u8],
        cigar: &[u32],
        seq: &[u8],
        qual: &[u8],
        next: (i32, i32, i32),
        aux: &[u8],
    ) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&ref_id.to_le_bytes());
        v.extend_from_slice(&pos.to_le_bytes());
        v.push(name.len() as u8 + 1);
        v.push(60);
        v.extend_from_slice(&4680u16.to_le_bytes());
        v.extend_from_slice(&(cigar.len() as u16).to_le_bytes());
        v.extend_from_slice(&flag.to_le_bytes());
        v.extend_from_slice(&(qual.len() as i32).to_le_bytes());
        v.extend_from_slice(&next.0.to_le_bytes());
        v.extend_from_slice(&next.1.to_le_bytes());
        v.extend_from_slice(&next.2.to_le_bytes());
        v.extend_from_slice(name);
        v.push(0);
        for c in cigar {
            v.extend_from_slice(&c.to_le_bytes());
        }
        v.extend_from_slice(seq);
        v.extend_from_slice(qual);
        v.extend_from_slice(aux);
        v
    }

    fn line(data: Vec<u8>) -> String {
        let r = Record::decode(data, 2).unwrap();
        let mut out = Vec::new();
        write_sam(&r, &header(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn mapped_pair_on_same_and_other_ref() {
        let d = raw(
            0,
            99,
            99,
            b"r1",
            &[3 << 4, 1 << 4 | 1],
            &[0x12, 0x48],
            &[30, 31, 32, 33],
            (0, 199, 150),
            b"NMC\x01",
        );
        assert_eq!(
            line(d),
            "r1\t99\tchr1\t100\t60\t3M1I\t=\t200\t150\tACGT\t?@AB\tNM:i:1\n"
        );
        let d = raw(
            0,
            99,
            1,
            b"r2",
            &[1 << 4],
            &[0xf0],
            &[0xff],
            (1, 5, -3),
            b"",
        );
        assert_eq!(line(d), "r2\t1\tchr1\t100\t60\t1M\tchr2\t6\t-3\tN\t*\n");
    }

    #[test]
    fn unplaced_without_seq_or_cigar() {
        let d = raw(-1, -1, 4, b"u", &[], &[], &[], (-1, -1, 0), b"");
        assert_eq!(line(d), "u\t4\t*\t0\t60\t*\t*\t0\t0\t*\t*\n");
    }

    #[test]
    fn odd_seq_ignores_pad_nibble_and_qual_wraps() {
        let d = raw(
            0,
            0,
            0,
            b"o",
            &[3 << 4],
            &[0x12, 0x4f],
            &[0, 0xff, 93],
            (-1, -1, 0),
            b"",
        );
        assert_eq!(line(d), "o\t0\tchr1\t1\t60\t3M\t*\t0\t0\tACG\t! ~\n");
    }

    #[test]
    fn corrupt_aux_leaves_output_untouched() {
        let d = raw(0, 0, 0, b"III", &[], &[], &[], (-1, -1, 0), b"XAAxXQQ1234");
        let r = Record::decode(d, 2).unwrap();
        let mut out = b"before\n".to_vec();
        let err = write_sam(&r, &header(), &mut out).unwrap_err();
        assert_eq!(out, b"before\n");
        assert!(matches!(err, RecordError::CorruptAux { ref read_name, .. } if read_name == "III"));
    }
}
