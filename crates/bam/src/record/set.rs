//! Changing a decoded record's fields. The record bytes are rewritten with the fields, so an
//! edited record encodes from [`Record::into_data`] as it is. Which edits to make is the
//! caller's policy (samtools' `view` edits are in the `samtools` crate); this keeps the bytes
//! and the field positions consistent.

use super::Record;
use crate::error::RecordError;
use crate::flags::Flags;

impl Record {
    /// Sets FLAG.
    pub fn set_flags(&mut self, flags: Flags) {
        let flag = flags.bits();
        self.flag = flag;
        self.data[14..16].copy_from_slice(&flag.to_le_bytes());
    }

    /// Sets MAPQ.
    pub fn set_mapq(&mut self, mapq: u8) {
        self.mapq = mapq;
        self.data[9] = mapq;
    }

    /// Sets TLEN.
    pub fn set_tlen(&mut self, tlen: i32) {
        self.tlen = tlen;
        self.data[28..32].copy_from_slice(&tlen.to_le_bytes());
    }

    /// Replaces CIGAR (raw BAM operations: length << 4 | code), SEQ (`packed`, two bases a byte)
    /// and QUAL (one byte a base; `0xff`s when absent); the aux data stays. The sequence length
    /// is `qual.len()`; `packed` must hold `qual.len().div_ceil(2)` bytes and the CIGAR fit
    /// BAM's 16-bit operation count, else nothing changes and the error says why.
    pub fn set_body(
        &mut self,
        cigar: &[u32],
        packed: &[u8],
        qual: &[u8],
    ) -> Result<(), RecordError> {
        let seq_len = qual.len();
        let (Ok(n_cigar), Ok(l_seq)) = (u16::try_from(cigar.len()), i32::try_from(seq_len)) else {
            return Err(RecordError::BodyLengths {
                ops: cigar.len(),
                packed: packed.len(),
                qual: seq_len,
            });
        };
        if packed.len() != seq_len.div_ceil(2) {
            return Err(RecordError::BodyLengths {
                ops: cigar.len(),
                packed: packed.len(),
                qual: seq_len,
            });
        }
        let aux = self.data[self.aux_start..].to_vec();
        self.data.truncate(self.cigar_start);
        for op in cigar {
            self.data.extend_from_slice(&op.to_le_bytes());
        }
        self.data.extend_from_slice(packed);
        self.data.extend_from_slice(qual);
        self.n_cigar = cigar.len();
        self.seq_len = seq_len;
        self.seq_start = self.cigar_start + 4 * cigar.len();
        self.qual_start = self.seq_start + packed.len();
        self.aux_start = self.qual_start + qual.len();
        self.data.extend_from_slice(&aux);
        self.data[12..14].copy_from_slice(&n_cigar.to_le_bytes());
        self.data[16..20].copy_from_slice(&l_seq.to_le_bytes());
        Ok(())
    }

    /// Replaces the aux data with `aux` (raw fields, as [`Record::aux`] gives them). It is not
    /// checked here, as htslib does not check it until it is printed ([`Record::check_aux`]).
    pub fn set_aux(&mut self, aux: &[u8]) {
        self.data.truncate(self.aux_start);
        self.data.extend_from_slice(aux);
    }
}

#[cfg(test)]
mod tests {
    use crate::Record;

    /// A record with CIGAR 4M, SEQ ACGT, QUAL 30s and `NM:C:1`.
    fn record() -> Record {
        let rec = testkit::builders::Rec {
            cigar: "4M",
            seq: "ACGT",
            qual: Some(vec![30; 4]),
            aux: b"NMC\x01".to_vec(),
            ..Default::default()
        };
        let bytes = testkit::builders::record_bytes(&rec);
        Record::decode(bytes[4..].to_vec(), 1).unwrap()
    }

    #[test]
    fn fields_are_rewritten_in_the_bytes() {
        let mut r = record();
        r.set_flags(crate::Flags::from_bits(0x41));
        r.set_mapq(7);
        r.set_tlen(-3);
        r.set_body(&[2 << 4, (1 << 4) | 4], &[0x12, 0x40], &[1, 2, 3])
            .unwrap();
        r.set_aux(b"XYZab\0");
        let again = Record::decode(r.clone().into_data(), 1).unwrap();
        for x in [&r, &again] {
            assert_eq!((x.flags().bits(), x.mapq(), x.tlen()), (0x41, 7, -3));
            let ops: Vec<(u32, u8)> = x.cigar().iter().map(|o| (o.len(), o.letter())).collect();
            assert_eq!(ops, vec![(2, b'M'), (1, b'S')]);
            assert_eq!(
                (x.seq(), x.qual(), x.aux()),
                (b"ACG".to_vec(), &[1, 2, 3][..], &b"XYZab\0"[..])
            );
        }
    }

    #[test]
    fn inconsistent_bodies_change_nothing() {
        let mut r = record();
        let before = r.data().to_vec();
        assert!(r.set_body(&[], &[0x12], &[1, 2, 3]).is_err());
        assert!(r.set_body(&vec![0u32; 70_000], &[], &[]).is_err());
        assert_eq!(r.data(), before);
    }
}
