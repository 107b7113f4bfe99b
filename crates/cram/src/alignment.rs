//! A CRAM record made whole: the fields of a SAM line, positions 1-based as CRAM keeps them.
//! Layers above turn it into their own record type (the CLI into a BAM record).

/// A record made whole, ready to be turned into a SAM line or a BAM record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Alignment {
    /// The read name.
    pub name: Vec<u8>,
    /// Whether the slice stored the name (a generated one is not copied to a mate).
    pub name_stored: bool,
    /// The SAM flags.
    pub flags: u16,
    /// The reference id (-1: none).
    pub ref_id: i32,
    /// 1-based start (0 for none).
    pub pos: i64,
    /// 1-based last reference position covered (the start when the read covers none).
    pub end: i64,
    /// The mapping quality.
    pub mapq: u8,
    /// BAM-coded CIGAR operations (`len << 4 | op`).
    pub cigar: Vec<u32>,
    /// The mate's reference id (-1: none).
    pub mate_ref_id: i32,
    /// 1-based mate start (0 for none).
    pub mate_pos: i64,
    /// The template length, as htslib computes it.
    pub tlen: i64,
    /// Bases as letters; empty for `*`.
    pub seq: Vec<u8>,
    /// Phred qualities, one per base; all 255 when there are none.
    pub qual: Vec<u8>,
    /// Tags in BAM's binary layout.
    pub aux: Vec<u8>,
    /// The offset of the slice it was read from (the byte an error about it names).
    pub slice: u64,
}

impl Alignment {
    /// The reference bases its CIGAR covers (M, D, N, = and X); 0 for an unmapped record.
    pub fn reference_len(&self) -> i64 {
        if self.flags & 0x4 != 0 {
            return 0;
        }
        self.cigar
            .iter()
            .filter(|&&c| matches!(c & 0xf, 0 | 2 | 3 | 7 | 8))
            .map(|c| i64::from(c >> 4))
            .sum()
    }

    /// Empties it for another record to be made in it, keeping its buffers.
    pub(crate) fn clear(&mut self) {
        for b in [&mut self.name, &mut self.seq, &mut self.qual, &mut self.aux] {
            b.clear();
        }
        self.cigar.clear();
        (self.name_stored, self.flags, self.ref_id) = (false, 0, 0);
        (self.pos, self.end, self.mapq) = (0, 0, 0);
        (self.mate_ref_id, self.mate_pos, self.tlen) = (-1, 0, 0);
        self.slice = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Alignment;

    #[test]
    fn a_cleared_alignment_is_a_new_one_with_no_mate() {
        let mut a = Alignment {
            name: b"r1".to_vec(),
            name_stored: true,
            flags: 99,
            ref_id: 2,
            pos: 100,
            end: 150,
            mapq: 60,
            cigar: vec![50 << 4],
            mate_ref_id: 2,
            mate_pos: 300,
            tlen: 250,
            seq: b"ACGT".to_vec(),
            qual: vec![30; 4],
            aux: b"NMC\x01".to_vec(),
            slice: 26,
        };
        let room = a.seq.capacity();
        a.clear();
        let fresh = Alignment {
            mate_ref_id: -1,
            ..Alignment::default()
        };
        assert_eq!(a, fresh);
        assert_eq!(a.seq.capacity(), room, "its buffers are kept");
    }
}
