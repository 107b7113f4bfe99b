//! A CRAM record laid out as a BAM record (htslib's `bam_set1`), and a CRAM header as a BAM
//! header: the one place that knows both formats, so that the facade answers BAM records for
//! either.

use bam::{Header, Record, Reference};

/// The CRAM record as a BAM record, as htslib's `bam_set1` lays it out.
pub fn to_bam(a: &cram::Alignment, n_ref: usize) -> Result<Record, String> {
    to_bam_in(a, n_ref, Vec::new())
}

/// [`to_bam`] laid out in `buf` (a record's bytes given back by `Record::into_data`, so that
/// a long read allocates nothing per record).
pub fn to_bam_in(a: &cram::Alignment, n_ref: usize, mut buf: Vec<u8>) -> Result<Record, String> {
    buf.clear();
    lay_out(a, &mut buf)?;
    Record::decode(buf, n_ref).map_err(|e| e.to_string())
}

/// The CRAM record's BAM bytes (after `block_size`), as htslib's `bam_set1` lays them out,
/// appended to `d`: the layout the reader's workers use ([`cram::Reader::set_layout`]).
pub fn lay_out(a: &cram::Alignment, d: &mut Vec<u8>) -> Result<(), String> {
    let name: &[u8] = if a.name.is_empty() { b"*" } else { &a.name };
    if name.len() > 254 {
        return Err(format!(
            "query name {} too long",
            String::from_utf8_lossy(name)
        ));
    }
    // A CIGAR too long for BAM's 16-bit count goes into a CG:B:I tag behind a `kSmN`
    // placeholder, as BAM stores it; `Record::decode` puts it back.
    let long = a.cigar.len() > 0xffff;
    let rlen = reference_len(a);
    let pos = a.pos - 1;
    let l_seq = a.seq.len();
    let placeholder = [((l_seq as u32) << 4) | 4, ((rlen as u32) << 4) | 3];
    let (cigar, n_cigar): (&[u32], u16) = if long {
        (&placeholder, 2)
    } else {
        (&a.cigar, a.cigar.len() as u16)
    };
    let bin = index::binning::reg2bin_signed(pos, pos + rlen.max(1), 14, 5) as u16;
    d.reserve(32 + name.len() + 1 + 4 * a.cigar.len() + l_seq * 2 + a.aux.len());
    d.extend_from_slice(&a.ref_id.to_le_bytes());
    d.extend_from_slice(&(pos as i32).to_le_bytes());
    d.push((name.len() + 1) as u8);
    d.push(a.mapq);
    d.extend_from_slice(&bin.to_le_bytes());
    d.extend_from_slice(&n_cigar.to_le_bytes());
    d.extend_from_slice(&a.flags.to_le_bytes());
    d.extend_from_slice(&(l_seq as i32).to_le_bytes());
    d.extend_from_slice(&a.mate_ref_id.to_le_bytes());
    d.extend_from_slice(&((a.mate_pos - 1) as i32).to_le_bytes());
    d.extend_from_slice(&(a.tlen as i32).to_le_bytes());
    d.extend_from_slice(name);
    d.push(0);
    for c in cigar {
        d.extend_from_slice(&c.to_le_bytes());
    }
    // Packed into bytes made room for first: an iterator extending `d` checks its capacity
    // a byte at a time.
    let packed = d.len();
    d.resize(packed + l_seq.div_ceil(2), 0);
    let mut pairs = a.seq.chunks_exact(2);
    for (o, p) in d[packed..].iter_mut().zip(&mut pairs) {
        *o = (NT16[usize::from(p[0])] << 4) | NT16[usize::from(p[1])];
    }
    if let ([last], Some(o)) = (pairs.remainder(), d.last_mut()) {
        *o = NT16[usize::from(*last)] << 4;
    }
    if a.qual.len() == l_seq {
        d.extend_from_slice(&a.qual);
    } else {
        d.extend(std::iter::repeat_n(0xff, l_seq));
    }
    d.extend_from_slice(&a.aux);
    if long {
        d.extend_from_slice(b"CGBI");
        d.extend_from_slice(&(a.cigar.len() as u32).to_le_bytes());
        for c in &a.cigar {
            d.extend_from_slice(&c.to_le_bytes());
        }
    }
    Ok(())
}

/// The reference bases a record's CIGAR covers (M, D, N, = and X); 0 for an unmapped one.
pub fn reference_len(a: &cram::Alignment) -> i64 {
    a.reference_len()
}

/// [`nt16`] of every byte, looked up once a base.
const NT16: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = nt16(i as u8);
        i += 1;
    }
    t
};

/// htslib's `seq_nt16_table`: a base letter as its 4-bit code (anything else is N).
const fn nt16(b: u8) -> u8 {
    match b.to_ascii_uppercase() {
        b'=' => 0,
        b'A' => 1,
        b'C' => 2,
        b'M' => 3,
        b'G' => 4,
        b'R' => 5,
        b'S' => 6,
        b'V' => 7,
        b'T' | b'U' => 8,
        b'W' => 9,
        b'Y' => 10,
        b'H' => 11,
        b'K' => 12,
        b'D' => 13,
        b'B' => 14,
        _ => 15,
    }
}

/// The CRAM's header as a BAM header: its text, and references from its `@SQ` lines.
pub fn bam_header(h: &cram::SamHeader) -> Result<Header, String> {
    let refs = h
        .references
        .iter()
        .map(|(name, len)| Reference {
            name: name.clone(),
            len: u32::try_from(*len).unwrap_or(u32::MAX),
        })
        .collect();
    Header::from_parts(h.text.clone(), refs).map_err(|e| e.to_string())
}
