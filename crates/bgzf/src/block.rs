//! One BGZF block: a gzip member whose extra field carries a `BC` subfield with the member's
//! total size, so that a reader can find the next block without inflating this one.
//!
//! Layout: a 12-byte fixed gzip header (`1f 8b 08 04`, MTIME, XFL, OS, XLEN), XLEN bytes of extra
//! subfields (one of them `BC`, length 2, holding BSIZE = total block size - 1), the raw deflate
//! data, then CRC32 and ISIZE of the uncompressed data (little-endian u32 each).
//!
//! The functions here are pure: they work on bytes already in memory, and name the file and the
//! block's compressed offset in their errors.

use libdeflater::{Compressor, DecompressionError, Decompressor};

use crate::Error;

/// The most bytes a block may take in the file, and the most it may inflate to.
pub const MAX_BLOCK_SIZE: usize = 65536;

/// The most uncompressed bytes the writer puts in one block (htslib's `BGZF_BLOCK_SIZE`), chosen
/// so that even incompressible data fits in [`MAX_BLOCK_SIZE`] once deflated.
pub const MAX_BLOCK_DATA: usize = 0xff00;

/// Length of the gzip header before the extra subfields.
pub const FIXED_HEADER_LEN: usize = 12;

/// Length of a BGZF header written by htslib (extra field holding only `BC`).
pub const HEADER_LEN: usize = 18;

/// Length of the CRC32 + ISIZE trailer.
pub const TRAILER_LEN: usize = 8;

/// The empty block that ends a well-formed BGZF file.
pub const EOF_MARKER: [u8; 28] = [
    0x1f, 0x8b, 0x08, 0x04, 0, 0, 0, 0, 0, 0xff, 0x06, 0, b'B', b'C', 0x02, 0, 0x1b, 0, 0x03, 0, 0,
    0, 0, 0, 0, 0, 0, 0,
];

/// Room past ISIZE in the inflate output: libdeflate leaves its fast loop this near the end of
/// the output buffer (its longest write per step is a match of 258 bytes plus a few words).
const ISIZE_SLACK: usize = 320;

const GZIP_ID1: u8 = 0x1f;
const GZIP_ID2: u8 = 0x8b;
const CM_DEFLATE: u8 = 8;
const FLG_FTEXT: u8 = 0x01;
const FLG_FEXTRA: u8 = 0x04;

/// True when `bytes` starts with the gzip magic.
pub fn has_gzip_magic(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && bytes[0] == GZIP_ID1 && bytes[1] == GZIP_ID2
}

/// Checks the fixed part of a block header and returns XLEN, the length of the extra field.
pub fn parse_fixed_header(
    bytes: &[u8; FIXED_HEADER_LEN],
    name: &str,
    offset: u64,
) -> Result<usize, Error> {
    let bad = |reason: &str| Error::BadHeader {
        name: name.to_string(),
        offset,
        reason: reason.to_string(),
    };
    if !has_gzip_magic(bytes) {
        return Err(Error::BadMagic {
            name: name.to_string(),
            offset,
        });
    }
    if bytes[2] != CM_DEFLATE {
        return Err(bad(&format!(
            "compression method {} is not deflate (8)",
            bytes[2]
        )));
    }
    let flags = bytes[3];
    if flags & FLG_FEXTRA == 0 {
        return Err(bad("no extra field (FLG.FEXTRA is not set)"));
    }
    // FNAME, FCOMMENT and FHCRC would put more header bytes before the deflate data; BGZF writers
    // never set them, and accepting them would misplace the data.
    if flags & !(FLG_FEXTRA | FLG_FTEXT) != 0 {
        return Err(bad(&format!("unsupported gzip flags {flags:#04x}")));
    }
    Ok(usize::from(u16::from_le_bytes([bytes[10], bytes[11]])))
}

/// Finds the `BC` subfield among the extra subfields (in any position) and returns the total
/// size of the block (BSIZE + 1), checked to hold at least its header and trailer.
pub fn block_size(extra: &[u8], name: &str, offset: u64) -> Result<usize, Error> {
    let bad = |reason: &str| Error::BadHeader {
        name: name.to_string(),
        offset,
        reason: reason.to_string(),
    };
    let mut rest = extra;
    let mut found = None;
    while !rest.is_empty() {
        if rest.len() < 4 {
            return Err(bad("extra field ends inside a subfield header"));
        }
        let slen = usize::from(u16::from_le_bytes([rest[2], rest[3]]));
        let Some(data) = rest.get(4..4 + slen) else {
            return Err(bad("extra subfield runs past the end of the extra field"));
        };
        if rest[0] == b'B' && rest[1] == b'C' {
            if slen != 2 {
                return Err(bad(&format!("BC subfield has length {slen}, not 2")));
            }
            if found.is_some() {
                return Err(bad("more than one BC subfield"));
            }
            found = Some(usize::from(u16::from_le_bytes([data[0], data[1]])) + 1);
        }
        rest = &rest[4 + slen..];
    }
    let Some(size) = found else {
        return Err(bad("no BC subfield in the extra field"));
    };
    let minimum = FIXED_HEADER_LEN + extra.len() + TRAILER_LEN;
    if size < minimum {
        return Err(Error::BadBlockSize {
            name: name.to_string(),
            offset,
            block_size: size,
            minimum,
        });
    }
    Ok(size)
}

/// The lengths a block's header gives ([`whole_len`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLengths {
    /// The header's length (12 + XLEN).
    pub header_len: usize,
    /// The whole block's size (BSIZE + 1).
    pub total: usize,
}

/// For the first bytes of a block: its header length and total size, when they hold a whole
/// valid header; `None` otherwise (too short, or invalid: the full parse says why).
pub fn whole_len(prefix: &[u8]) -> Option<BlockLengths> {
    let fixed = <&[u8; FIXED_HEADER_LEN]>::try_from(prefix.get(..FIXED_HEADER_LEN)?).ok()?;
    let header_len = FIXED_HEADER_LEN + parse_fixed_header(fixed, "", 0).ok()?;
    let total = block_size(prefix.get(FIXED_HEADER_LEN..header_len)?, "", 0).ok()?;
    Some(BlockLengths { header_len, total })
}

/// True for the start of a gzip member that is not a BGZF block: gzip magic and deflate, but no
/// extra field (`FLG.FEXTRA` clear), or an extra field (`extra`, when read) without a `BC`
/// subfield. htslib reads on from such a member as plain gzip; other damage is an error.
pub fn is_plain_gzip(header: &[u8], extra: Option<&[u8]>) -> bool {
    if !has_gzip_magic(header) || header.get(2) != Some(&CM_DEFLATE) {
        return false;
    }
    let Some(&flags) = header.get(3) else {
        return false;
    };
    if flags & FLG_FEXTRA == 0 {
        return true;
    }
    let Some(mut rest) = extra else {
        return false;
    };
    // Subfields as far as they are well formed: a BC among them makes it (broken) BGZF.
    while rest.len() >= 4 {
        if rest[0] == b'B' && rest[1] == b'C' {
            return false;
        }
        let slen = usize::from(u16::from_le_bytes([rest[2], rest[3]]));
        rest = rest.get(4 + slen..).unwrap_or(&[]);
    }
    true
}

/// True for a gzip member header (deflate) with an extra field.
pub fn has_extra_field(header: &[u8]) -> bool {
    has_gzip_magic(header)
        && header.get(2) == Some(&CM_DEFLATE)
        && header.get(3).is_some_and(|f| f & FLG_FEXTRA != 0)
}

/// True when `prefix` (the first bytes of a file) is a complete BGZF block header.
pub fn is_bgzf_header(prefix: &[u8]) -> bool {
    whole_len(prefix).is_some()
}

/// Inflates one whole block (`block`: its bytes from the magic to the end of ISIZE;
/// `header_len`: 12 + XLEN) into `out`, checking the CRC32 and the ISIZE.
pub fn inflate(
    block: &[u8],
    header_len: usize,
    out: &mut Vec<u8>,
    decompressor: &mut Decompressor,
    name: &str,
    offset: u64,
) -> Result<(), Error> {
    let inflate_error = |reason| Error::Inflate {
        name: name.to_string(),
        offset,
        reason,
    };
    let body_end = block
        .len()
        .checked_sub(TRAILER_LEN)
        .filter(|&end| end >= header_len)
        .ok_or_else(|| inflate_error("block too short for its header and trailer"))?;
    let trailer = &block[body_end..];
    let stored_crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let stored_isize = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);

    // The output is sized to what the block says it holds (ISIZE), with some slack so that
    // libdeflate's fast loop runs to the end of a full block: a small block (a header, an
    // index, the last of a file) then zeroes and faults in no more than it needs, and a reused
    // buffer is zeroed only where it grows. A block whose data inflates past that is inflated
    // again at the full size, so that damage gets the diagnosis it always had.
    let first = (stored_isize as usize)
        .saturating_add(ISIZE_SLACK)
        .min(MAX_BLOCK_SIZE);
    let payload = &block[header_len..body_end];
    out.resize(first, 0);
    let mut result = decompressor.deflate_decompress(payload, out);
    if first < MAX_BLOCK_SIZE && matches!(result, Err(DecompressionError::InsufficientSpace)) {
        out.resize(MAX_BLOCK_SIZE, 0);
        result = decompressor.deflate_decompress(payload, out);
    }
    let n = match result {
        Ok(n) => n,
        Err(DecompressionError::BadData) => {
            out.clear();
            return Err(inflate_error("invalid deflate data"));
        }
        Err(DecompressionError::InsufficientSpace) => {
            out.clear();
            return Err(inflate_error("data inflates to more than 65536 bytes"));
        }
    };
    out.truncate(n);
    // The CRC is checked before ISIZE, as htslib does, so damage in a shared field gets the same
    // diagnosis.
    let computed = libdeflater::crc32(out);
    if computed != stored_crc {
        out.clear();
        return Err(Error::CrcMismatch {
            name: name.to_string(),
            offset,
            stored: stored_crc,
            computed,
        });
    }
    if stored_isize as usize != n {
        out.clear();
        return Err(Error::IsizeMismatch {
            name: name.to_string(),
            offset,
            stored: stored_isize,
            inflated: n,
        });
    }
    Ok(())
}

/// Compresses `data` (at most [`MAX_BLOCK_DATA`] bytes for a guaranteed fit) into one complete
/// block appended to `out`. Returns false, leaving `out` as it was, when the block would exceed
/// [`MAX_BLOCK_SIZE`].
pub fn deflate(data: &[u8], compressor: &mut Compressor, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    let bound = compressor.deflate_compress_bound(data.len());
    out.resize(start + HEADER_LEN + bound, 0);
    let Ok(clen) = compressor.deflate_compress(data, &mut out[start + HEADER_LEN..]) else {
        out.truncate(start);
        return false;
    };
    let total = HEADER_LEN + clen + TRAILER_LEN;
    if total > MAX_BLOCK_SIZE || data.len() > MAX_BLOCK_SIZE {
        out.truncate(start);
        return false;
    }
    out.truncate(start + HEADER_LEN + clen);
    out[start..start + 16].copy_from_slice(&EOF_MARKER[..16]);
    let bsize = (total - 1) as u16;
    out[start + 16..start + 18].copy_from_slice(&bsize.to_le_bytes());
    out.extend_from_slice(&libdeflater::crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    true
}

/// Appends `data` (at most 65535 bytes) to `out` as one complete block holding a single stored
/// (uncompressed) deflate block, byte for byte as htslib writes compression level 0.
pub fn store(data: &[u8], out: &mut Vec<u8>) {
    let len = data.len().min(usize::from(u16::MAX));
    let data = &data[..len];
    let total = HEADER_LEN + 5 + len + TRAILER_LEN;
    out.extend_from_slice(&EOF_MARKER[..16]);
    out.extend_from_slice(&((total - 1) as u16).to_le_bytes());
    // BFINAL=1, BTYPE=00, then LEN and its ones' complement (RFC 1951, 3.2.4).
    out.push(1);
    out.extend_from_slice(&(len as u16).to_le_bytes());
    out.extend_from_slice(&(!(len as u16)).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&libdeflater::crc32(data).to_le_bytes());
    out.extend_from_slice(&(len as u32).to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(bytes: &[u8]) -> [u8; FIXED_HEADER_LEN] {
        let mut f = [0u8; FIXED_HEADER_LEN];
        f.copy_from_slice(&bytes[..FIXED_HEADER_LEN]);
        f
    }

    fn one_block(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        assert!(deflate(data, &mut Compressor::default(), &mut out));
        out
    }

    #[test]
    fn eof_marker_parses_and_inflates_to_nothing() {
        assert_eq!(parse_fixed_header(&fixed(&EOF_MARKER), "f", 0).unwrap(), 6);
        assert_eq!(block_size(&EOF_MARKER[12..18], "f", 0).unwrap(), 28);
        let mut out = vec![1, 2, 3];
        inflate(&EOF_MARKER, 18, &mut out, &mut Decompressor::new(), "f", 0).unwrap();
        assert!(out.is_empty());
        assert!(is_bgzf_header(&EOF_MARKER));
    }

    #[test]
    fn fixed_header_errors() {
        let mut h = fixed(&EOF_MARKER);
        h[1] = 0x8c;
        let e = parse_fixed_header(&h, "x.bam", 77).unwrap_err();
        assert!(matches!(e, Error::BadMagic { offset: 77, .. }), "{e}");
        assert!(e.to_string().contains("x.bam") && e.to_string().contains("77"));
        let mut h = fixed(&EOF_MARKER);
        h[2] = 7;
        assert!(matches!(
            parse_fixed_header(&h, "x", 0),
            Err(Error::BadHeader { .. })
        ));
        let mut h = fixed(&EOF_MARKER);
        h[3] = 0;
        assert!(matches!(
            parse_fixed_header(&h, "x", 0),
            Err(Error::BadHeader { .. })
        ));
        let mut h = fixed(&EOF_MARKER);
        h[3] = 0x0c; // FEXTRA + FNAME
        assert!(matches!(
            parse_fixed_header(&h, "x", 0),
            Err(Error::BadHeader { .. })
        ));
    }

    #[test]
    fn bc_found_before_and_after_other_subfields() {
        // BC first, then a 3-byte subfield "XY".
        let after = [b'B', b'C', 2, 0, 0x40, 0x01, b'X', b'Y', 3, 0, 9, 9, 9];
        assert_eq!(block_size(&after, "f", 0).unwrap(), 0x141);
        // Another subfield first.
        let before = [b'X', b'Y', 1, 0, 7, b'B', b'C', 2, 0, 0x40, 0x01];
        assert_eq!(block_size(&before, "f", 0).unwrap(), 0x141);
    }

    #[test]
    fn extra_field_errors() {
        let e = |extra: &[u8]| block_size(extra, "f", 5).unwrap_err();
        assert!(matches!(e(&[b'X', b'Y', 0, 0]), Error::BadHeader { .. }));
        assert!(matches!(e(&[b'B', b'C', 2]), Error::BadHeader { .. }));
        assert!(matches!(
            e(&[b'B', b'C', 3, 0, 1, 2]),
            Error::BadHeader { .. }
        ));
        assert!(matches!(e(&[b'B', b'C', 1, 0, 1]), Error::BadHeader { .. }));
        // BSIZE+1 = 20 < 12 + 6 + 8.
        match e(&[b'B', b'C', 2, 0, 19, 0]) {
            Error::BadBlockSize {
                block_size,
                minimum,
                offset,
                ..
            } => assert_eq!((block_size, minimum, offset), (20, 26, 5)),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn round_trip_and_checks() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 13) as u8).collect();
        let block = one_block(&data);
        let bsize = u16::from_le_bytes([block[16], block[17]]) as usize + 1;
        assert_eq!(bsize, block.len());
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        inflate(&block, 18, &mut out, &mut d, "f", 0).unwrap();
        assert_eq!(out, data);

        let mut bad_crc = block.clone();
        let n = bad_crc.len();
        bad_crc[n - 8] ^= 0xff;
        let e = inflate(&bad_crc, 18, &mut out, &mut d, "f", 9).unwrap_err();
        assert!(matches!(e, Error::CrcMismatch { offset: 9, .. }), "{e}");

        let mut bad_isize = block.clone();
        bad_isize[n - 4] ^= 0x01;
        let e = inflate(&bad_isize, 18, &mut out, &mut d, "f", 9).unwrap_err();
        match e {
            Error::IsizeMismatch {
                stored, inflated, ..
            } => {
                assert_eq!(inflated, 5000);
                assert_eq!(stored, 5000 ^ 1);
            }
            other => panic!("{other}"),
        }

        let mut bad_data = block.clone();
        for b in &mut bad_data[18..26] {
            *b ^= 0xa5;
        }
        let e = inflate(&bad_data, 18, &mut out, &mut d, "f", 9).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Inflate { .. } | Error::CrcMismatch { .. } | Error::IsizeMismatch { .. }
            ),
            "{e}"
        );
    }

    #[test]
    fn output_is_sized_by_isize_and_damage_is_diagnosed_as_before() {
        let data: Vec<u8> = (0..1500u32).map(|i| (i * 31 % 17) as u8).collect();
        let block = one_block(&data);
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        inflate(&block, 18, &mut out, &mut d, "f", 0).unwrap();
        assert_eq!(out, data);
        assert!(
            out.capacity() < 4096,
            "a small block needs no 64 KiB buffer"
        );
        // ISIZE claiming less than the data holds (by more than the slack): the block is
        // inflated again at the full size, and the CRC (intact) passes, then ISIZE fails.
        let n = block.len();
        let mut small = block.clone();
        small[n - 4..].copy_from_slice(&100u32.to_le_bytes());
        match inflate(&small, 18, &mut out, &mut d, "f", 3).unwrap_err() {
            Error::IsizeMismatch {
                stored, inflated, ..
            } => assert_eq!((stored, inflated), (100, 1500)),
            other => panic!("{other}"),
        }
        // ISIZE claiming more than 64 KiB: inflated at the full size.
        let mut big = block.clone();
        big[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            inflate(&big, 18, &mut out, &mut d, "f", 3).unwrap_err(),
            Error::IsizeMismatch { .. }
        ));
    }

    #[test]
    fn stored_block_inflates() {
        let data: Vec<u8> = (0..MAX_BLOCK_DATA).map(|i| (i % 7) as u8).collect();
        let mut block = Vec::new();
        store(&data, &mut block);
        assert_eq!(block.len(), MAX_BLOCK_DATA + 31);
        assert_eq!(block_size(&block[12..18], "f", 0).unwrap(), block.len());
        let mut out = Vec::new();
        inflate(&block, 18, &mut out, &mut Decompressor::new(), "f", 0).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn incompressible_full_block_fits() {
        let mut x: u32 = 12345;
        let data: Vec<u8> = (0..MAX_BLOCK_DATA)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let block = one_block(&data);
        assert!(block.len() <= MAX_BLOCK_SIZE);
        let mut out = Vec::new();
        inflate(&block, 18, &mut out, &mut Decompressor::new(), "f", 0).unwrap();
        assert_eq!(out, data);
    }
}
