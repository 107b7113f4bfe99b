//! CIGAR operations as BAM stores them: little-endian `u32`s, `len << 4 | op`.

/// The SAM letter of each 4-bit operation code (htslib's `BAM_CIGAR_STR` plus `?` padding).
const OP_CHARS: &[u8; 16] = b"MIDNSHP=XB??????";

/// Bit 0: consumes the query; bit 1: consumes the reference (htslib's `BAM_CIGAR_TYPE`).
const OP_TYPES: u32 = 0x3C1A7;

/// Operation code of `S` (soft clip).
pub const SOFT_CLIP: u8 = 4;
/// Operation code of `N` (reference skip).
pub const REF_SKIP: u8 = 3;

/// One CIGAR operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op(pub u32);

impl Op {
    /// The operation length.
    pub fn len(self) -> u32 {
        self.0 >> 4
    }

    /// True for a zero-length operation.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The 4-bit operation code (0 = `M` ... 8 = `X`; 9..15 are not in the spec).
    pub fn code(self) -> u8 {
        (self.0 & 0xf) as u8
    }

    /// The SAM letter (`?` for codes without one, `B` for 9, as htslib prints them).
    pub fn letter(self) -> u8 {
        OP_CHARS[usize::from(self.code())]
    }

    /// True if the operation consumes query bases (`M I S = X`).
    pub fn consumes_query(self) -> bool {
        (OP_TYPES >> (u32::from(self.code()) << 1)) & 1 != 0
    }

    /// True if the operation consumes reference bases (`M D N = X`).
    pub fn consumes_reference(self) -> bool {
        (OP_TYPES >> (u32::from(self.code()) << 1)) & 2 != 0
    }
}

/// The operations of a CIGAR stored as `4 * n` little-endian bytes.
#[derive(Debug, Clone, Copy)]
pub struct Cigar<'a> {
    bytes: &'a [u8],
}

impl<'a> Cigar<'a> {
    /// Wraps raw CIGAR bytes; a trailing partial operation is ignored.
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Cigar<'a> {
        let whole = bytes.len() / 4 * 4;
        Cigar {
            bytes: &bytes[..whole],
        }
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.bytes.len() / 4
    }

    /// True when there are no operations.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Operation `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<Op> {
        let b = self.bytes.get(i * 4..i * 4 + 4)?;
        Some(Op(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
    }

    /// The operations in order.
    pub fn iter(&self) -> impl Iterator<Item = Op> + 'a {
        self.bytes
            .chunks_exact(4)
            .map(|b| Op(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
    }

    /// Query length (htslib `bam_cigar2qlen`).
    pub fn query_len(&self) -> u64 {
        self.iter()
            .filter(|op| op.consumes_query())
            .map(|op| u64::from(op.len()))
            .sum()
    }

    /// Reference and query lengths in one pass (htslib `bam_cigar2rqlens`), branch-free: the
    /// reader computes both for every record.
    #[inline]
    pub(crate) fn lengths(&self) -> (u64, u64) {
        let (mut rlen, mut qlen) = (0u64, 0u64);
        for b in self.bytes.chunks_exact(4) {
            let op = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let kind = u64::from((OP_TYPES >> ((op & 0xf) << 1)) & 3);
            let len = u64::from(op >> 4);
            qlen += len * (kind & 1);
            rlen += len * (kind >> 1);
        }
        (rlen, qlen)
    }

    /// Reference length (htslib `bam_cigar2rlen`).
    pub fn reference_len(&self) -> u64 {
        self.iter()
            .filter(|op| op.consumes_reference())
            .map(|op| u64::from(op.len()))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(ops: &[(u32, u8)]) -> Vec<u8> {
        ops.iter()
            .flat_map(|&(l, c)| (l << 4 | u32::from(c)).to_le_bytes())
            .collect()
    }

    #[test]
    fn letters_and_types() {
        let letters: Vec<u8> = (0..16).map(|c| Op(16 | c).letter()).collect();
        assert_eq!(&letters, b"MIDNSHP=XB??????");
        let q: Vec<bool> = (0..10).map(|c| Op(c).consumes_query()).collect();
        assert_eq!(
            q,
            [true, true, false, false, true, false, false, true, true, false]
        );
        let r: Vec<bool> = (0..10).map(|c| Op(c).consumes_reference()).collect();
        assert_eq!(
            r,
            [true, false, true, true, false, false, false, true, true, false]
        );
    }

    #[test]
    fn lengths() {
        let b = bytes(&[
            (5, 4),
            (10, 0),
            (3, 1),
            (7, 2),
            (100, 3),
            (2, 5),
            (4, 7),
            (1, 8),
        ]);
        let c = Cigar::new(&b);
        assert_eq!(c.len(), 8);
        assert_eq!(c.query_len(), 5 + 10 + 3 + 4 + 1);
        assert_eq!(c.reference_len(), 10 + 7 + 100 + 4 + 1);
        assert_eq!(c.lengths(), (c.reference_len(), c.query_len()));
        assert_eq!(c.get(4), Some(Op(100 << 4 | 3)));
        assert_eq!(c.get(8), None);
        assert_eq!(Cigar::new(&b[..9]).len(), 2);
    }
}
