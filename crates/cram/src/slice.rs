//! Slice headers (spec section 8.5): the records a slice holds, where, and in which blocks.

use crate::num::Cursor;
use crate::{Error, Version};

/// Reference id of a slice holding reads of several references.
pub const MULTI_REF: i32 = -2;

/// A slice's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceHeader {
    /// The reference id (-1: unplaced, -2: several).
    pub reference_id: i32,
    /// The 1-based start of its records' alignments.
    pub start: i32,
    /// The reference length they cover.
    pub span: i32,
    /// The number of records.
    pub records: i32,
    /// The number of records in the file before this slice.
    pub record_counter: i64,
    /// Blocks after the header that belong to this slice (core and external).
    pub blocks: i32,
    /// The content ids of its blocks.
    pub content_ids: Vec<i32>,
    /// Content id of the external block holding the reference bases, or -1.
    pub embedded_reference: i32,
    /// MD5 of the reference bases the slice covers (all zero when there is none).
    pub reference_md5: [u8; 16],
    /// Optional tags, in BAM's binary aux layout.
    pub tags: Vec<u8>,
}

impl SliceHeader {
    /// Parses a decoded slice header block.
    pub fn parse(data: &[u8], base: u64, version: Version) -> Result<Self, Error> {
        let mut c = Cursor::new(data, base);
        let reference_id = c.itf8("slice reference id")?;
        let start = c.itf8("slice start")?;
        let span = c.itf8("slice span")?;
        let records = c.itf8("slice record count")?;
        let record_counter = if version.major >= 3 {
            c.ltf8("slice record counter")?
        } else {
            i64::from(c.itf8("slice record counter")?)
        };
        let blocks = c.itf8("slice block count")?;
        let at = c.offset();
        let n = c.itf8("slice content id count")?;
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= c.remaining())
            .ok_or_else(|| {
                Error::at(at, format!("slice content id count {n} exceeds the input"))
            })?;
        let content_ids = (0..n)
            .map(|_| c.itf8("slice content id"))
            .collect::<Result<Vec<_>, _>>()?;
        let embedded_reference = c.itf8("embedded reference block id")?;
        let md5 = c.take(16, "slice reference MD5")?;
        let mut reference_md5 = [0u8; 16];
        reference_md5.copy_from_slice(md5);
        let rest = c.remaining();
        let tags = c.take(rest, "slice tags")?.to_vec();
        // htslib refuses these (`cram_decode_slice_header`), in unplaced slices too: Picard
        // writes unmapped slices starting at -1, which samtools cannot read either.
        if start < 0 || span < 0 {
            return Err(Error::at(
                base,
                format!("slice start {start} or span {span} is negative"),
            ));
        }
        if records < 0 || blocks < 0 {
            return Err(Error::at(
                base,
                format!("slice with {records} records in {blocks} blocks"),
            ));
        }
        Ok(SliceHeader {
            reference_id,
            start,
            span,
            records,
            record_counter,
            blocks,
            content_ids,
            embedded_reference,
            reference_md5,
            tags,
        })
    }
}
