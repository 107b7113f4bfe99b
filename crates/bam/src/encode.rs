//! A record back into BAM bytes, as htslib 1.16's `bam_write1` writes it: the stored bytes as
//! they are, with the fixed fields as htslib holds them after `bam_read1` (the bin recomputed
//! from the CIGAR, a NUL added to an unterminated read name), and a CIGAR of more than 65535
//! operations moved back into a `CG:B:I` tag behind a `<l_seq>S<rlen>N` placeholder.

use std::fmt;

use crate::cigar;
use crate::record::Record;

/// Why a record cannot be written as BAM (htslib's `bam_write1` refusals).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// The read name needs more than 254 characters.
    NameTooLong {
        /// The read name.
        name: String,
    },
    /// A CIGAR too long for the record's own field covers more reference than a placeholder
    /// operation can say.
    CigarTooLong {
        /// The read name.
        name: String,
        /// CIGAR operations in the record.
        ops: usize,
        /// The reference bases the CIGAR covers.
        reference_len: u64,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::NameTooLong { name } => {
                write!(f, "QNAME \"{name}\" is longer than 254 characters")
            }
            EncodeError::CigarTooLong {
                name,
                ops,
                reference_len,
            } => write!(
                f,
                "record {name} with {ops} CIGAR operations and reference length {reference_len} cannot be written in BAM"
            ),
        }
    }
}

impl std::error::Error for EncodeError {}

/// The CIGAR operations a BAM record's own field can hold.
const MAX_INLINE_CIGAR: usize = 0xffff;

/// One record laid out for writing: the 4-byte `block_size` plus the 32 fixed bytes, then
/// borrowed pieces of the record's own bytes.
pub(crate) struct Encoded<'r> {
    pub head: [u8; 36],
    pub pieces: [&'r [u8]; 4],
    /// The long CIGAR's `CG:B:I` header (type, count) when the CIGAR moves to a tag.
    pub cg: Option<[u8; 8]>,
    pub placeholder: Option<[u8; 8]>,
    /// `block_size` (the record's length after its first 4 bytes).
    pub block_len: usize,
    /// `block_size` htslib uses for its first "will it fit" test when indexing (it leaves out
    /// the 16 bytes a long CIGAR adds).
    pub index_block_len: usize,
}

const NUL: &[u8] = &[0];

impl Encoded<'_> {
    /// Calls `put` with each piece in order.
    pub fn for_each_piece(
        &self,
        mut put: impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        put(&self.head)?;
        let [name, nul, a, b] = self.pieces;
        put(name)?;
        put(nul)?;
        if let Some(p) = &self.placeholder {
            put(p)?;
        }
        put(a)?;
        if let Some(cg) = &self.cg {
            put(cg)?;
        }
        put(b)
    }
}

/// Lays `record` out as `bam_write1` would write it.
pub(crate) fn encode<D: AsRef<[u8]>>(record: &Record<D>) -> Result<Encoded<'_>, EncodeError> {
    let (name_field, terminated) = record.name_field();
    let nul: &[u8] = if terminated { &[] } else { NUL };
    let l_qname = name_field.len() + nul.len();
    if l_qname > 255 {
        return Err(EncodeError::NameTooLong {
            name: crate::error::printable(record.name()),
        });
    }
    let n_cigar = record.cigar().len();
    let long = n_cigar > MAX_INLINE_CIGAR;
    let body = record.cigar_onwards();
    let index_block_len = 32 + l_qname + body.len();
    let mut block_len = index_block_len;
    let (placeholder, cg, pieces);
    if long {
        let reference_len = record.cigar().reference_len();
        if reference_len >= 1 << 28 {
            return Err(EncodeError::CigarTooLong {
                name: crate::error::printable(record.name()),
                ops: n_cigar,
                reference_len,
            });
        }
        block_len += 16;
        let mut p = [0u8; 8];
        p[..4].copy_from_slice(
            &((record.seq_len() as u32) << 4 | cigar::SOFT_CLIP as u32).to_le_bytes(),
        );
        p[4..]
            .copy_from_slice(&((reference_len as u32) << 4 | cigar::REF_SKIP as u32).to_le_bytes());
        let mut tag = [0u8; 8];
        tag[..4].copy_from_slice(b"CGBI");
        tag[4..].copy_from_slice(&(n_cigar as u32).to_le_bytes());
        placeholder = Some(p);
        cg = Some(tag);
        let ops = &body[..4 * n_cigar];
        pieces = [name_field, nul, record.seq_onwards(), ops];
    } else {
        placeholder = None;
        cg = None;
        pieces = [name_field, nul, body, &[][..]];
    }
    let stored = record.stored_coordinates();
    let mut head = [0u8; 36];
    let words: [u32; 9] = [
        block_len as u32,
        stored.ref_id as u32,
        stored.pos as u32,
        u32::from(record.bin()) << 16 | u32::from(record.mapq()) << 8 | l_qname as u32,
        u32::from(record.flags().bits()) << 16 | if long { 2 } else { n_cigar as u32 },
        record.seq_len() as u32,
        stored.mate_ref_id as u32,
        stored.mate_pos as u32,
        record.tlen() as u32,
    ];
    for (i, w) in words.iter().enumerate() {
        head[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    Ok(Encoded {
        head,
        pieces,
        cg,
        placeholder,
        block_len,
        index_block_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(e: &Encoded<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        e.for_each_piece(|p| {
            out.extend_from_slice(p);
            Ok(())
        })
        .unwrap();
        out
    }

    fn raw(name: &[u8], cigar: &[u32], bin: u16, aux: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&0i32.to_le_bytes());
        v.extend_from_slice(&100i32.to_le_bytes());
        v.extend_from_slice(&(u32::from(bin) << 16 | 30 << 8 | name.len() as u32).to_le_bytes());
        v.extend_from_slice(&(cigar.len() as u32).to_le_bytes());
        v.extend_from_slice(&4i32.to_le_bytes());
        v.extend_from_slice(&(-1i32).to_le_bytes());
        v.extend_from_slice(&(-1i32).to_le_bytes());
        v.extend_from_slice(&0i32.to_le_bytes());
        v.extend_from_slice(name);
        for c in cigar {
            v.extend_from_slice(&c.to_le_bytes());
        }
        v.extend_from_slice(&[0x12, 0x48, 1, 2, 3, 4]);
        v.extend_from_slice(aux);
        v
    }

    #[test]
    fn unchanged_record_is_written_as_read() {
        let data = raw(b"r1\0", &[4 << 4], 4681, b"NMC\x01");
        let r = Record::decode(data.clone(), 1).unwrap();
        let e = encode(&r).unwrap();
        let out = bytes(&e);
        assert_eq!(&out[..4], &(data.len() as u32).to_le_bytes());
        assert_eq!(&out[4..], &data[..]);
        assert_eq!(e.block_len, data.len());
    }

    #[test]
    fn stale_bin_and_missing_nul_are_fixed() {
        let data = raw(b"ab", &[4 << 4], 7, b"");
        let r = Record::decode(data.clone(), 1).unwrap();
        let out = bytes(&encode(&r).unwrap());
        assert_eq!(out.len(), 4 + data.len() + 1);
        let word = u32::from_le_bytes(out[12..16].try_into().unwrap());
        assert_eq!(word >> 16, 4681);
        assert_eq!(word & 0xff, 3);
        assert_eq!(&out[36..39], b"ab\0");
    }

    #[test]
    fn long_names_are_refused() {
        let mut name = vec![b'n'; 255];
        name[254] = b'x';
        let r = Record::decode(raw(&name, &[4 << 4], 0, b""), 1).unwrap();
        assert!(matches!(encode(&r), Err(EncodeError::NameTooLong { .. })));
    }
}
