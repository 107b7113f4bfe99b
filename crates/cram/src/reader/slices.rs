//! A container's slices read in order, and what they held checked against the container's
//! header.

use super::*;

/// The slices of a container body, read in order: the compression header, then each slice's
/// header and blocks. Once the last slice the landmarks count is read, what the slices held
/// is checked against the container's header: a header naming fewer slices than the
/// container holds (records read from the listed ones alone, the rest lost) is an error.
pub(super) struct Slices<'a> {
    c: Cursor<'a>,
    left: usize,
    version: Version,
    /// The container's header offset, and the records and blocks its header counts.
    at: u64,
    records: i64,
    blocks: i64,
    /// What the slices read so far hold: records, blocks (the compression header's
    /// included), slices.
    seen: (i64, i64, i64),
}

impl<'a> Slices<'a> {
    pub(super) fn new(
        h: &ContainerHeader,
        body: &'a [u8],
        body_at: u64,
        version: Version,
    ) -> Result<(CompressionHeader, Slices<'a>), Error> {
        let mut c = Cursor::new(body, body_at);
        let b = Block::read(&mut c, version)?;
        if b.content_type != ContentType::CompressionHeader {
            return Err(Error::at(
                b.offset,
                format!(
                    "a container's first block is {:?}, not its compression header",
                    b.content_type
                ),
            ));
        }
        let ch = CompressionHeader::parse(&b.decode()?, b.offset)?;
        let left = h.landmarks.len();
        let slices = Slices {
            c,
            left,
            version,
            at: body_at.saturating_sub(h.header_len as u64),
            records: i64::from(h.records),
            blocks: i64::from(h.blocks),
            seen: (0, 1, 0),
        };
        Ok((ch, slices))
    }

    /// The next slice: its header, its blocks (not decoded) and the header block's offset.
    pub(super) fn next_slice(
        &mut self,
    ) -> Result<Option<(SliceHeader, Vec<Block<'a>>, u64)>, Error> {
        if self.left == 0 {
            self.check_counts()?;
            return Ok(None);
        }
        self.left -= 1;
        let b = Block::read(&mut self.c, self.version)?;
        let at = b.offset;
        if b.content_type != ContentType::SliceHeader {
            return Err(Error::at(
                at,
                format!(
                    "a container's landmark names a {:?} block, not a slice header",
                    b.content_type
                ),
            ));
        }
        let sh = SliceHeader::parse(&b.decode()?, b.offset, self.version)?;
        let mut blocks = Vec::new();
        for _ in 0..sh.blocks {
            blocks.push(Block::read(&mut self.c, self.version)?);
        }
        self.seen.0 += i64::from(sh.records);
        self.seen.1 += 1 + i64::from(sh.blocks);
        self.seen.2 += 1;
        Ok(Some((sh, blocks, at)))
    }

    /// The container's header against what its slices held. Its block count is taken as
    /// the spec counts it (every block) or as htsjdk writes it (the slices' own blocks, without
    /// the compression and slice headers): neither loses a record; a record count the slices
    /// do not hold does.
    fn check_counts(&self) -> Result<(), Error> {
        let (records, blocks, slices) = self.seen;
        let htsjdk = blocks - 1 - slices;
        if records == self.records && (self.blocks == blocks || self.blocks == htsjdk) {
            return Ok(());
        }
        Err(Error::at(
            self.at,
            format!(
                "the container's header counts {} records in {} blocks; the {slices} slices its \
                 landmarks name hold {records} records in {blocks} blocks",
                self.records, self.blocks
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(records: i64, blocks: i64, seen: (i64, i64, i64)) -> Result<(), Error> {
        let s = Slices {
            c: Cursor::new(&[], 0),
            left: 0,
            version: Version { major: 3, minor: 0 },
            at: 579,
            records,
            blocks,
            seen,
        };
        s.check_counts()
    }

    #[test]
    fn a_container_counts_what_its_slices_hold() {
        // Two slices of 30 records in 10 and 20 blocks, with the compression header: 33 blocks.
        let seen = (60, 33, 2);
        assert!(read(60, 33, seen).is_ok());
        // htsjdk counts the slices' own blocks alone (not the compression and slice headers).
        assert!(read(60, 30, seen).is_ok());
        let e = read(90, 33, seen).unwrap_err();
        assert_eq!(e.offset, 579);
        assert!(e.what.contains("90 records"), "{e}");
        assert!(read(60, 31, seen).is_err());
    }
}
