//! Container headers (spec section 7): lengths and counts checked against the input, and the
//! CRC32 of 3.x headers verified.

use crate::num::Cursor;
use crate::{Error, Version};

/// A container's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerHeader {
    /// Bytes of blocks after the header.
    pub length: usize,
    /// The reference id of its records (-1: unplaced, -2: several).
    pub reference_id: i32,
    /// The 1-based start of its records' alignments.
    pub start: i32,
    /// The reference length its records cover.
    pub span: i32,
    /// The number of records.
    pub records: i32,
    /// The number of records in the file before this container.
    pub record_counter: i64,
    /// The number of read bases.
    pub bases: i64,
    /// The number of blocks.
    pub blocks: i32,
    /// Each slice's offset from the end of the header.
    pub landmarks: Vec<i32>,
    /// Size of the header itself in bytes.
    pub header_len: usize,
}

impl ContainerHeader {
    /// Parses the header at the start of `data` (at absolute offset `base`); `data` must hold
    /// the whole container, which the length is checked against.
    pub fn parse(data: &[u8], base: u64, version: Version) -> Result<Self, Error> {
        let h = ContainerHeader::parse_header(data, base, version)?;
        let left = data.len() - h.header_len;
        if h.length > left {
            return Err(Error::at(
                base + h.header_len as u64,
                format!(
                    "container length {} exceeds the {left} bytes left",
                    h.length
                ),
            ));
        }
        Ok(h)
    }

    /// Parses the header alone: `data` need not hold the body (a reader learns from it how
    /// many bytes to read).
    pub fn parse_header(data: &[u8], base: u64, version: Version) -> Result<Self, Error> {
        let mut c = Cursor::new(data, base);
        let length = c.i32_le("container length")?;
        let length = usize::try_from(length)
            .map_err(|_| Error::at(base, format!("negative container length {length}")))?;
        let reference_id = c.itf8("container reference id")?;
        let start = c.itf8("container start")?;
        let span = c.itf8("container span")?;
        let records = c.itf8("container record count")?;
        // 2.x stores the counter as ITF8, 3.x as LTF8.
        let record_counter = if version.major >= 3 {
            c.ltf8("container record counter")?
        } else {
            i64::from(c.itf8("container record counter")?)
        };
        let bases = c.ltf8("container bases")?;
        let blocks = c.itf8("container block count")?;
        let at = c.offset();
        let n = c.itf8("landmark count")?;
        // Each landmark takes at least one byte, so the count is bounded by what is left.
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= c.remaining())
            .ok_or_else(|| Error::at(at, format!("landmark count {n} exceeds the input")))?;
        let mut landmarks = Vec::with_capacity(n);
        for _ in 0..n {
            landmarks.push(c.itf8("landmark")?);
        }
        if version.has_crc() {
            let covered = c.position();
            let at = c.offset();
            let crc = c.u32_le("container header CRC32")?;
            let got = crc32fast::hash(&data[..covered]);
            if got != crc {
                return Err(Error::at(
                    at,
                    format!(
                        "container header CRC32 mismatch: stored {crc:08x}, computed {got:08x}"
                    ),
                ));
            }
        }
        let header_len = c.position();
        Ok(ContainerHeader {
            length,
            reference_id,
            start,
            span,
            records,
            record_counter,
            bases,
            blocks,
            landmarks,
            header_len,
        })
    }
}

/// How far a container's blocks reach past its length, when a writer left bytes out of it:
/// htsjdk's CRAM 2.1 header container is two bytes short of its block, and samtools 1.16's
/// `reheader` of a 2.1 file writes 3.0 containers with the 2.1 lengths, without their blocks'
/// CRC32s (samtools #1866). htslib reads a container's blocks one after another whatever its
/// length says; this finds where they end, within at most [`slack`] bytes past the length.
///
/// `body` is what follows the container's header. `Some(end)`: the blocks end `end` bytes into
/// it (3.x: each block that ends past the length passes its CRC32, so no byte of the next
/// container is taken for one); `None`: `body` does not hold them all within the slack, or they
/// are not blocks (then the length stands, and decoding reports what is wrong).
pub fn blocks_end(h: &ContainerHeader, body: &[u8], version: Version) -> Option<usize> {
    let limit = h.length.saturating_add(slack(h)).min(body.len());
    let mut c = Cursor::new(&body[..limit], 0);
    for _ in 0..h.blocks {
        let start = c.position();
        c.u8("block method").ok()?;
        c.u8("block content type").ok()?;
        c.itf8("block content id").ok()?;
        let size = usize::try_from(c.itf8("block size").ok()?).ok()?;
        c.itf8("block raw size").ok()?;
        c.take(size, "block data").ok()?;
        if version.has_crc() {
            let covered = c.position();
            let stored = c.u32_le("block CRC32").ok()?;
            if covered + 4 > h.length && crc32fast::hash(&body[start..covered]) != stored {
                return None;
            }
        }
    }
    Some(c.position())
}

/// The most a container's blocks may run past its length and still be read: four bytes a
/// block (the CRC32s a 2.1 length leaves out), and four more (htsjdk's two).
pub fn slack(h: &ContainerHeader) -> usize {
    usize::try_from(h.blocks)
        .unwrap_or(0)
        .saturating_add(1)
        .saturating_mul(4)
}

#[cfg(test)]
mod tests {
    use super::{blocks_end, ContainerHeader};
    use crate::Version;

    /// A raw external block holding `data`, with its CRC32 in 3.x.
    fn block(data: &[u8], crc: bool) -> Vec<u8> {
        let mut b = vec![0, 4, 1, data.len() as u8, data.len() as u8];
        b.extend_from_slice(data);
        if crc {
            let sum = crc32fast::hash(&b);
            b.extend_from_slice(&sum.to_le_bytes());
        }
        b
    }

    fn header(length: usize, blocks: i32) -> ContainerHeader {
        ContainerHeader {
            length,
            reference_id: 0,
            start: 1,
            span: 1,
            records: 1,
            record_counter: 0,
            bases: 1,
            blocks,
            landmarks: vec![0],
            header_len: 0,
        }
    }

    #[test]
    fn blocks_past_the_length_are_found_within_the_slack() {
        let v3 = Version { major: 3, minor: 0 };
        let body = [block(b"abc", true), block(b"defg", true)].concat();
        // The length as a 2.1 writer counts it: without the two CRC32s.
        let h = header(body.len() - 8, 2);
        assert_eq!(blocks_end(&h, &body, v3), Some(body.len()));
        // A block whose CRC32 fails past the length is not one: the length stands.
        let mut bad = body.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert_eq!(blocks_end(&h, &bad, v3), None);
        // More than four bytes a block (and four) past the length: not read on.
        let h = header(body.len() - 13, 2);
        assert_eq!(blocks_end(&h, &body, v3), None);
        // 2.1: no CRC32s, htsjdk's header container two bytes short.
        let v21 = Version { major: 2, minor: 1 };
        let body = block(b"@HD\tVN:1.6\n", false);
        assert_eq!(
            blocks_end(&header(body.len() - 2, 1), &body, v21),
            Some(body.len())
        );
    }
}
