//! SAM text for one record, byte-identical to htslib 1.16's `sam_format1` (as used by
//! `samtools view`).

use crate::error::RecordError;
use crate::header::Header;
use crate::record::Record;

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

/// Appends one SAM line for `record`, ending in `\n`, to `out`.
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
pub fn write_sam(record: &Record, header: &Header, out: &mut Vec<u8>) -> Result<(), RecordError> {
    let start = out.len();
    let seq_len = record.seq_len();
    out.reserve(
        record.name().len() + 2 * seq_len + 11 * record.cigar().len() + 3 * record.aux().len() + 96,
    );

    out.extend_from_slice(record.name());
    out.push(b'\t');
    push_u64(out, u64::from(record.flag()));
    out.push(b'\t');
    push_ref_name(out, header, record.ref_id());
    out.push(b'\t');
    push_i64(out, i64::from(record.pos()) + 1);
    out.push(b'\t');
    push_u64(out, u64::from(record.mapq()));
    out.push(b'\t');

    let cigar = record.cigar();
    if cigar.is_empty() {
        out.push(b'*');
    } else {
        for op in cigar.iter() {
            push_u64(out, u64::from(op.len()));
            out.push(op.letter());
        }
    }
    out.push(b'\t');

    let next = record.next_ref_id();
    if next < 0 {
        out.push(b'*');
    } else if next == record.ref_id() {
        out.push(b'=');
    } else {
        push_ref_name(out, header, next);
    }
    out.push(b'\t');
    push_i64(out, i64::from(record.next_pos()) + 1);
    out.push(b'\t');
    push_i64(out, i64::from(record.tlen()));
    out.push(b'\t');

    if seq_len == 0 {
        out.extend_from_slice(b"*\t*");
    } else {
        let packed = record.seq_packed();
        let start = out.len();
        out.resize(start + seq_len, 0);
        let dst = &mut out[start..];
        let (pair_dst, odd_dst) = dst.split_at_mut(seq_len / 2 * 2);
        for (d, &b) in pair_dst.chunks_exact_mut(2).zip(packed) {
            d.copy_from_slice(&BASE_PAIRS[usize::from(b)]);
        }
        if let (Some(d), Some(&b)) = (odd_dst.first_mut(), packed.get(seq_len / 2)) {
            *d = BASES[usize::from(b >> 4)];
        }
        out.push(b'\t');
        let qual = record.qual();
        if qual.first() == Some(&0xff) {
            out.push(b'*');
        } else {
            let start = out.len();
            out.resize(start + qual.len(), 0);
            for (d, &q) in out[start..].iter_mut().zip(qual) {
                *d = q.wrapping_add(33);
            }
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

/// RNAME/RNEXT for a reference id that `Record::decode` has already range-checked.
fn push_ref_name(out: &mut Vec<u8>, header: &Header, ref_id: i32) {
    match usize::try_from(ref_id)
        .ok()
        .and_then(|t| header.ref_name(t))
    {
        Some(name) => out.extend_from_slice(name),
        None => out.push(b'*'),
    }
}

/// Appends the decimal form of `n`.
pub(crate) fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    // Most numbers in a SAM line (flags, MAPQ, CIGAR lengths) are short; avoid a copy call.
    if n < 10 {
        out.push(b'0' + n as u8);
        return;
    }
    if n < 100 {
        out.extend_from_slice(&[b'0' + (n / 10) as u8, b'0' + (n % 10) as u8]);
        return;
    }
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends the decimal form of `n`, with a `-` when negative.
pub(crate) fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_u64(out, n.unsigned_abs());
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
