//! Tests of record decoding and the field accessors.

use super::*;

struct Raw {
    ref_id: i32,
    pos: i32,
    flag: u16,
    name: Vec<u8>,
    cigar: Vec<u32>,
    l_seq: i32,
    seq_qual: Vec<u8>,
    next_ref_id: i32,
    aux: Vec<u8>,
}

impl Raw {
    fn new() -> Raw {
        Raw {
            ref_id: 0,
            pos: 10,
            flag: 0,
            name: b"r\0".to_vec(),
            cigar: vec![4 << 4],
            l_seq: 4,
            seq_qual: vec![0x12, 0x48, 30, 30, 30, 30],
            next_ref_id: -1,
            aux: Vec::new(),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&self.ref_id.to_le_bytes());
        v.extend_from_slice(&self.pos.to_le_bytes());
        v.push(self.name.len() as u8);
        v.push(60);
        v.extend_from_slice(&0u16.to_le_bytes());
        v.extend_from_slice(&(self.cigar.len() as u16).to_le_bytes());
        v.extend_from_slice(&self.flag.to_le_bytes());
        v.extend_from_slice(&self.l_seq.to_le_bytes());
        v.extend_from_slice(&self.next_ref_id.to_le_bytes());
        v.extend_from_slice(&(-1i32).to_le_bytes());
        v.extend_from_slice(&0i32.to_le_bytes());
        v.extend_from_slice(&self.name);
        for c in &self.cigar {
            v.extend_from_slice(&c.to_le_bytes());
        }
        v.extend_from_slice(&self.seq_qual);
        v.extend_from_slice(&self.aux);
        v
    }

    fn decode(&self) -> Result<Record, RecordError> {
        Record::decode(self.bytes(), 3)
    }
}

#[test]
fn decodes_fields() {
    let mut raw = Raw::new();
    raw.aux = b"NMC\x02".to_vec();
    let r = raw.decode().unwrap();
    assert_eq!(r.ref_id(), Some(RefId::new(0)));
    assert_eq!(r.pos(), Some(Position::new(10)));
    assert_eq!(r.mate_ref_id(), None);
    assert_eq!(r.mate_pos(), None);
    assert_eq!(r.mapq(), 60);
    assert_eq!(r.name(), b"r");
    assert_eq!(r.seq(), b"ACGT");
    assert_eq!(r.qual(), [30; 4]);
    assert_eq!(r.aux(), b"NMC\x02");
    assert_eq!(r.end_pos(), Position::new(14));
    assert_eq!(r.bin(), 4681);
    assert!(r.check_aux().is_ok());
}

#[test]
fn end_pos_rules() {
    let mut raw = Raw::new();
    raw.cigar = vec![4 << 4 | 1];
    assert_eq!(raw.decode().unwrap().end_pos().get(), 11);
    raw.cigar = vec![2 << 4, 100 << 4 | 3, 2 << 4];
    assert_eq!(raw.decode().unwrap().end_pos().get(), 114);
    raw.flag = Flags::UNMAPPED.bits();
    assert_eq!(raw.decode().unwrap().end_pos().get(), 11);
    raw.cigar.clear();
    raw.flag = 0;
    assert_eq!(raw.decode().unwrap().end_pos().get(), 11);
}

#[test]
fn unset_coordinates_are_none_and_stored_as_they_were() {
    let mut raw = Raw::new();
    (raw.ref_id, raw.pos, raw.flag) = (-1, -1, Flags::UNMAPPED.bits());
    let r = raw.decode().unwrap();
    assert_eq!((r.ref_id(), r.pos(), r.mate_ref_id()), (None, None, None));
    assert!(r.flags().is_unmapped() && !r.flags().is_paired());
    // htslib's bam_endpos: -1 + 1.
    assert_eq!((r.end_pos(), r.stored_end_pos()), (Position::ZERO, 0));
    let stored = r.stored_coordinates();
    assert_eq!((stored.ref_id, stored.pos, stored.mate_pos), (-1, -1, -1));
    // A position stored below -1 is no position, and is kept as stored for SAM text.
    (raw.ref_id, raw.pos) = (0, -5);
    let r = raw.decode().unwrap();
    assert_eq!((r.pos(), r.stored_coordinates().pos), (None, -5));
    assert_eq!((r.end_pos(), r.stored_end_pos()), (Position::ZERO, -4));
}

#[test]
fn rejects_bad_lengths() {
    let mut raw = Raw::new();
    raw.name = Vec::new();
    assert_eq!(raw.decode().unwrap_err(), RecordError::EmptyReadName);
    let mut raw = Raw::new();
    raw.l_seq = -1;
    assert_eq!(
        raw.decode().unwrap_err(),
        RecordError::NegativeSeqLength(-1)
    );
    let mut bytes = Raw::new().bytes();
    bytes[8] = 250;
    assert!(matches!(
        Record::decode(bytes, 3),
        Err(RecordError::FieldsPastEnd { .. })
    ));
    let mut raw = Raw::new();
    raw.seq_qual.pop();
    assert!(matches!(
        raw.decode(),
        Err(RecordError::FieldsPastEnd {
            needed: 12,
            available: 11
        })
    ));
    assert!(matches!(
        Record::decode(vec![0; 31], 3),
        Err(RecordError::TooShort { block_size: 31 })
    ));
}

#[test]
fn unterminated_name_is_kept_whole() {
    let mut raw = Raw::new();
    raw.name = b"abc".to_vec();
    assert_eq!(raw.decode().unwrap().name(), b"abc");
}

#[test]
fn cigar_seq_mismatch_only_when_both_present_and_mapped() {
    let mut raw = Raw::new();
    raw.cigar = vec![100 << 4];
    assert!(matches!(
        raw.decode(),
        Err(RecordError::CigarSeqMismatch {
            cigar_len: 100,
            seq_len: 4,
            ..
        })
    ));
    raw.flag = Flags::UNMAPPED.bits();
    assert!(raw.decode().is_ok());
    raw.flag = 0;
    raw.l_seq = 0;
    raw.seq_qual.clear();
    assert!(raw.decode().is_ok());
}

#[test]
fn ref_id_range() {
    let mut raw = Raw::new();
    raw.ref_id = 3;
    assert_eq!(
        raw.decode().unwrap_err(),
        RecordError::RefIdOutOfRange {
            ref_id: 3,
            n_ref: 3
        }
    );
    raw.ref_id = -1;
    raw.next_ref_id = -2;
    assert_eq!(
        raw.decode().unwrap_err(),
        RecordError::RefIdOutOfRange {
            ref_id: -2,
            n_ref: 3
        }
    );
    raw.next_ref_id = 2;
    assert!(raw.decode().is_ok());
}

fn cg_raw(real: &[u32]) -> Raw {
    let mut raw = Raw::new();
    let rlen: u32 = 7;
    raw.cigar = vec![4 << 4 | 4, rlen << 4 | 3];
    raw.aux = b"XAAx".to_vec();
    raw.aux.extend_from_slice(b"CGBI");
    raw.aux
        .extend_from_slice(&(real.len() as u32).to_le_bytes());
    for op in real {
        raw.aux.extend_from_slice(&op.to_le_bytes());
    }
    raw.aux.extend_from_slice(b"NMC\x01");
    raw
}

#[test]
fn cg_tag_becomes_the_cigar() {
    let real = [1 << 4, 1 << 4 | 1, 5 << 4 | 2, 2 << 4];
    let r = cg_raw(&real).decode().unwrap();
    let ops: Vec<u32> = r.cigar().iter().map(|o| o.0).collect();
    assert_eq!(ops, real);
    assert_eq!(r.aux(), b"XAAxNMC\x01");
    assert_eq!(r.seq(), b"ACGT");
    assert_eq!(r.qual(), [30; 4]);
    assert_eq!(r.end_pos().get(), 10 + 8);
}

#[test]
fn in_place_decoding_matches_owned() {
    let real = [1 << 4, 1 << 4 | 1, 5 << 4 | 2, 2 << 4];
    let mut plain = Raw::new();
    plain.aux = b"NMC\x02".to_vec();
    for raw in [plain, cg_raw(&real)] {
        let bytes = raw.bytes();
        let owned = Record::decode(bytes.clone(), 3).unwrap();
        let mut scratch = Vec::new();
        let borrowed = Record::decode_in(&bytes, 3, &mut scratch).unwrap();
        assert_eq!(borrowed.data(), owned.data());
        let ops = |c: Cigar<'_>| c.iter().map(|o| o.0).collect::<Vec<u32>>();
        assert_eq!(ops(borrowed.cigar()), ops(owned.cigar()));
        assert_eq!(borrowed.aux(), owned.aux());
        assert_eq!(borrowed.bin(), owned.bin());
        let copy = borrowed.to_owned_record();
        assert_eq!(copy.data(), owned.data());
        assert_eq!(copy.end_pos(), owned.end_pos());
    }
    // Only a rewritten record uses the scratch buffer.
    let mut scratch = Vec::new();
    let bytes = Raw::new().bytes();
    Record::decode_in(&bytes, 3, &mut scratch).unwrap();
    assert!(scratch.is_empty());
    let mut bad = Raw::new();
    bad.l_seq = -1;
    let bytes = bad.bytes();
    assert_eq!(
        Record::decode_in(&bytes, 3, &mut scratch).unwrap_err(),
        RecordError::NegativeSeqLength(-1)
    );
}

#[test]
fn cg_tag_left_alone_when_rules_do_not_match() {
    // Fewer real operations than the placeholder has.
    let r = cg_raw(&[4 << 4]).decode().unwrap();
    assert_eq!(r.cigar().len(), 2);
    assert!(r.aux().windows(2).any(|w| w == b"CG"));
    // Unplaced records keep their CIGAR.
    let mut raw = cg_raw(&[1 << 4, 3 << 4]);
    raw.ref_id = -1;
    assert_eq!(raw.decode().unwrap().cigar().len(), 2);
    // Corrupt aux while looking for CG is an error, as in bam_read1.
    let mut raw = cg_raw(&[1 << 4, 3 << 4]);
    raw.aux[2] = b'Q';
    assert!(matches!(raw.decode(), Err(RecordError::CorruptAux { .. })));
}

#[test]
fn bad_aux_found_by_check() {
    let mut raw = Raw::new();
    raw.aux = b"XAAxXQQ1234".to_vec();
    let r = raw.decode().unwrap();
    assert!(matches!(
        r.check_aux(),
        Err(RecordError::CorruptAux { offset, .. }) if offset == r.aux_offset() + 4
    ));
}
