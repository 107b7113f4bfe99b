//! Blocks (spec section 8): the unit every container and slice is made of. A block names its
//! compression method and content, holds its bytes, and in CRAM 3.x ends in a CRC32 of itself.

use std::borrow::Cow;

use crate::codec;
use crate::num::Cursor;
use crate::{Error, Version};

/// Largest decoded block accepted. samtools writes blocks of a few MB; the declared raw size
/// is checked against this before anything is allocated, so a hostile header cannot ask for
/// more memory than this.
pub const MAX_RAW_SIZE: usize = 256 << 20;

/// How a block's bytes are compressed (spec section 8: block compression methods).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Stored as is.
    Raw = 0,
    /// gzip (deflate).
    Gzip = 1,
    /// bzip2.
    Bzip2 = 2,
    /// xz (LZMA).
    Lzma = 3,
    /// rANS 4x8.
    Rans4x8 = 4,
    /// rANS Nx16.
    RansNx16 = 5,
    /// The adaptive arithmetic coder.
    Arith = 6,
    /// fqzcomp qualities.
    Fqzcomp = 7,
    /// The name tokeniser.
    NameTokeniser = 8,
}

impl Method {
    /// The method a block's first byte names; `at` is that byte's offset, for the error.
    pub fn from_byte(b: u8, at: u64) -> Result<Self, Error> {
        Ok(match b {
            0 => Method::Raw,
            1 => Method::Gzip,
            2 => Method::Bzip2,
            3 => Method::Lzma,
            4 => Method::Rans4x8,
            5 => Method::RansNx16,
            6 => Method::Arith,
            7 => Method::Fqzcomp,
            8 => Method::NameTokeniser,
            _ => {
                return Err(Error::at(
                    at,
                    format!("unknown block compression method {b}"),
                ))
            }
        })
    }
}

/// What a block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentType {
    /// The SAM header of the file.
    FileHeader,
    /// A container's compression header.
    CompressionHeader,
    /// A slice header.
    SliceHeader,
    /// An external data block (a data series or tag, by content id).
    External,
    /// The core bit stream of a slice.
    Core,
}

impl ContentType {
    fn from_byte(b: u8, at: u64) -> Result<Self, Error> {
        Ok(match b {
            0 => ContentType::FileHeader,
            1 => ContentType::CompressionHeader,
            // 2 is the mapped slice header; 3 (unmapped slices, CRAM 1.0) is reserved.
            2 => ContentType::SliceHeader,
            4 => ContentType::External,
            5 => ContentType::Core,
            _ => return Err(Error::at(at, format!("unknown block content type {b}"))),
        })
    }
}

/// One block as stored: its bytes borrowed from the container.
#[derive(Debug, Clone)]
pub struct Block<'a> {
    /// How its bytes are compressed.
    pub method: Method,
    /// What it holds.
    pub content_type: ContentType,
    /// The external block's id (the data series or tag it carries); 0 for the others.
    pub content_id: i32,
    /// Size once decoded, as the block declares it.
    pub raw_size: usize,
    /// The stored (compressed) bytes.
    pub data: &'a [u8],
    /// Absolute offset of the block's first byte, for errors.
    pub offset: u64,
}

impl<'a> Block<'a> {
    /// Reads one block at the cursor, checking its sizes against what is left and, for 3.x,
    /// its CRC32.
    pub fn read(c: &mut Cursor<'a>, version: Version) -> Result<Self, Error> {
        let offset = c.offset();
        let start = c.position();
        let method = Method::from_byte(c.u8("block method")?, offset)?;
        let content_type = ContentType::from_byte(c.u8("block content type")?, offset + 1)?;
        let content_id = c.itf8("block content id")?;
        let size = size(c, "block size")?;
        let raw_at = c.offset();
        let raw_size = size_of(c.itf8("block raw size")?, raw_at, "block raw size")?;
        if raw_size > MAX_RAW_SIZE {
            return Err(Error::at(
                raw_at,
                format!("block raw size {raw_size} exceeds the {MAX_RAW_SIZE}-byte limit"),
            ));
        }
        if method == Method::Raw && size != raw_size {
            return Err(Error::at(
                raw_at,
                format!("uncompressed block of {size} bytes declares {raw_size}"),
            ));
        }
        let data = c.take(size, "block data")?;
        if version.has_crc() {
            let covered = c.covered_since(start);
            let at = c.offset();
            let stored = c.u32_le("block CRC32")?;
            let got = crc32fast::hash(covered);
            if got != stored {
                return Err(Error::at(
                    at,
                    format!("block CRC32 mismatch: stored {stored:08x}, computed {got:08x}"),
                ));
            }
        }
        Ok(Block {
            method,
            content_type,
            content_id,
            raw_size,
            data,
            offset,
        })
    }

    /// The block's bytes decoded; exactly `raw_size` of them or an error.
    pub fn decode(&self) -> Result<Cow<'a, [u8]>, Error> {
        // htslib's "blank block": nothing is decoded, whatever the method and its bytes.
        if self.raw_size == 0 {
            return Ok(Cow::Borrowed(&[]));
        }
        if self.method == Method::Raw && self.data.len() == self.raw_size {
            return Ok(Cow::Borrowed(self.data));
        }
        let out = codec::decode(self.method, self.data, self.raw_size)
            .map_err(|e| Error::at(self.offset, format!("{:?} block: {e}", self.method)))?;
        if out.len() != self.raw_size {
            return Err(Error::at(
                self.offset,
                format!(
                    "{:?} block decodes to {} bytes, declares {}",
                    self.method,
                    out.len(),
                    self.raw_size
                ),
            ));
        }
        Ok(Cow::Owned(out))
    }
}

fn size(c: &mut Cursor<'_>, what: &str) -> Result<usize, Error> {
    let at = c.offset();
    size_of(c.itf8(what)?, at, what)
}

fn size_of(v: i32, at: u64, what: &str) -> Result<usize, Error> {
    usize::try_from(v).map_err(|_| Error::at(at, format!("negative {what} {v}")))
}

#[cfg(test)]
mod tests {
    use super::{Block, ContentType, Method};

    #[test]
    fn a_block_of_no_bytes_is_blank_whatever_its_method() {
        // htslib decodes nothing when a block declares no bytes, so its data cannot fail it.
        for method in [Method::Gzip, Method::Lzma, Method::RansNx16, Method::Raw] {
            let b = Block {
                method,
                content_type: ContentType::External,
                content_id: 1,
                raw_size: 0,
                data: b"not compressed at all",
                offset: 0,
            };
            assert_eq!(b.decode().unwrap().len(), 0, "{method:?}");
        }
    }
}
