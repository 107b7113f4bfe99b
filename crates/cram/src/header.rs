//! The SAM header a CRAM file keeps in its first container, and what decoding needs from it:
//! each reference's name and length (`@SQ SN`, `LN`), and the read groups in order (the RG
//! data series stores an index into them).

use crate::block::Block;
use crate::num::Cursor;
use crate::{Error, Version};

/// The SAM header a CRAM file carries in its first container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamHeader {
    /// The header text as stored (up to the first NUL).
    pub text: Vec<u8>,
    /// `@SQ` lines in order: name and length.
    pub references: Vec<(Vec<u8>, u64)>,
    /// `@RG` IDs in order.
    pub read_groups: Vec<Vec<u8>>,
}

impl SamHeader {
    /// Reads the header from the blocks of the first container (`body`, at offset `base`).
    pub fn read(body: &[u8], base: u64, version: Version) -> Result<SamHeader, Error> {
        let mut c = Cursor::new(body, base);
        let b = Block::read(&mut c, version)?;
        let data = b.decode()?;
        let mut d = Cursor::new(&data, b.offset);
        let at = d.offset();
        let len = d.i32_le("header text length")?;
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= d.remaining())
            .ok_or_else(|| Error::at(at, format!("header text length {len} exceeds its block")))?;
        let mut text = d.take(len, "header text")?.to_vec();
        if let Some(nul) = text.iter().position(|&b| b == 0) {
            text.truncate(nul);
        }
        Ok(SamHeader::from_text(text))
    }

    /// A header from its text, with the references its `@SQ` lines name.
    pub fn from_text(text: Vec<u8>) -> SamHeader {
        let mut references = Vec::new();
        let mut read_groups = Vec::new();
        for line in text.split(|&b| b == b'\n') {
            let mut fields = line.split(|&b| b == b'\t');
            let kind = fields.next().unwrap_or_default();
            let tag = |k: &[u8]| {
                line.split(|&b| b == b'\t')
                    .skip(1)
                    .find(|f| f.len() >= 3 && &f[..2] == k && f[2] == b':')
                    .map(|f| f[3..].to_vec())
            };
            match kind {
                b"@SQ" => {
                    if let Some(name) = tag(b"SN") {
                        let len = tag(b"LN")
                            .and_then(|l| String::from_utf8(l).ok())
                            .and_then(|l| l.parse().ok())
                            .unwrap_or(0);
                        references.push((name, len));
                    }
                }
                b"@RG" => {
                    if let Some(id) = tag(b"ID") {
                        read_groups.push(id);
                    }
                }
                _ => {}
            }
        }
        SamHeader {
            text,
            references,
            read_groups,
        }
    }

    /// The length `@SQ LN` gives reference `id`, or 0; at most htslib's `HTS_POS_MAX`, so a
    /// hostile `LN` leaves room for the position arithmetic done against it.
    pub fn reference_len(&self, id: i32) -> i64 {
        usize::try_from(id)
            .ok()
            .and_then(|i| self.references.get(i))
            .map_or(0, |r| r.1.min(region::Position::MAX.get()) as i64)
    }

    /// A tag of the `@SQ` line of reference `name` (`M5`, `UR`).
    pub fn sq_tag(&self, name: &[u8], tag: &[u8; 2]) -> Option<String> {
        self.text.split(|&b| b == b'\n').find_map(|line| {
            let mut fields = line.split(|&b| b == b'\t');
            if fields.next() != Some(b"@SQ") {
                return None;
            }
            let fields: Vec<&[u8]> = fields.collect();
            let named = fields
                .iter()
                .any(|f| f.len() > 3 && &f[..3] == b"SN:" && &f[3..] == name);
            if !named {
                return None;
            }
            fields
                .iter()
                .find(|f| f.len() > 3 && &f[..2] == tag && f[2] == b':')
                .map(|f| String::from_utf8_lossy(&f[3..]).into_owned())
        })
    }

    /// The references whose `@SQ LN` the FASTA contradicts: name, the header's length and
    /// the FASTA's (htslib's `sanitise_SQ_lines`, run when `-T` or a `UR` FASTA is loaded: it
    /// warns of each, and decodes with the FASTA's length).
    pub fn length_mismatches(&self, fasta: &crate::Fasta) -> Vec<(Vec<u8>, u64, u64)> {
        self.references
            .iter()
            .filter_map(|(name, len)| {
                let found = fasta.entry(name)?.length;
                (found != 0 && found != *len).then(|| (name.clone(), *len, found))
            })
            .collect()
    }

    /// This header with each `@SQ` length the FASTA contradicts taken from the FASTA, as
    /// htslib decodes (the text is kept: samtools prints the header as stored).
    pub fn with_lengths_of(&self, fasta: &crate::Fasta) -> SamHeader {
        let mut h = self.clone();
        for (name, len) in &mut h.references {
            if let Some(found) = fasta.entry(name).map(|e| e.length).filter(|&l| l != 0) {
                *len = found;
            }
        }
        h
    }

    /// The name of reference `id`, if there is one.
    pub fn reference_name(&self, id: i32) -> Option<&[u8]> {
        usize::try_from(id)
            .ok()
            .and_then(|i| self.references.get(i))
            .map(|r| r.0.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::SamHeader;

    #[test]
    fn lengths_the_fasta_contradicts_are_taken_from_it() {
        let h = SamHeader::from_text(b"@SQ\tSN:a\tLN:1000\n@SQ\tSN:b\tLN:4\n".to_vec());
        let fasta = crate::Fasta::in_memory("ref.fa", b"a", b"ACGTACGT".to_vec());
        assert_eq!(h.length_mismatches(&fasta), vec![(b"a".to_vec(), 1000, 8)]);
        let fixed = h.with_lengths_of(&fasta);
        assert_eq!((fixed.reference_len(0), fixed.reference_len(1)), (8, 4));
        // The text is kept: samtools prints the header as stored.
        assert_eq!(fixed.text, h.text);
    }

    #[test]
    fn hostile_lengths_are_capped() {
        let h = SamHeader::from_text(
            b"@SQ\tSN:a\tLN:9223372036854775808\n@SQ\tSN:b\tLN:100\n@SQ\tSN:c\tLN:x\n".to_vec(),
        );
        assert_eq!(h.reference_len(0), 0x7fff_ffff_7fff_ffff);
        assert_eq!(h.reference_len(1), 100);
        assert_eq!(h.reference_len(2), 0);
        assert_eq!(h.reference_len(3), 0);
        assert_eq!(h.reference_len(-1), 0);
    }
}
