//! Mates within a slice (htslib's `cram_decode_slice_xref`): records linked by NF get each
//! other's position, reference and strand, and a template length from the leftmost start to
//! the rightmost end of the chain; and names for records stored without one (`cram_to_bam`).

use crate::alignment::Alignment;
use crate::Error;

const PAIRED: u16 = 0x1;
const UNMAPPED: u16 = 0x4;
const MATE_UNMAPPED: u16 = 0x8;
const REVERSE: u16 = 0x10;
const MATE_REVERSE: u16 = 0x20;
const READ1: u16 = 0x40;

/// Mate flags (MF) of a detached record.
const MF_REVERSE: i32 = 0x1;
const MF_UNMAPPED: i32 = 0x2;

/// What the resolution needs of each record beyond its alignment.
#[derive(Debug, Clone, Copy)]
pub struct Link {
    /// Index in the slice of the next record of the template, or -1.
    pub mate_line: i64,
    /// TLEN not yet known (htslib's `INT64_MIN`).
    pub tlen_unset: bool,
    pub detached: bool,
    pub mate_flags: i32,
}

/// Resolves the links of one slice's records, in place.
pub fn resolve(recs: &mut [Alignment], links: &mut [Link], at: u64) -> Result<(), Error> {
    let n = recs.len() as i64;
    for rec in 0..recs.len() {
        if links[rec].mate_line >= 0 {
            let ml = links[rec].mate_line;
            if ml < n {
                if links[rec].tlen_unset {
                    chain_tlen(recs, links, rec, at)?;
                }
                let ml = links[rec].mate_line as usize;
                let (mate_pos, mate_ref, mate_flags) =
                    (recs[ml].pos, recs[ml].ref_id, recs[ml].flags);
                let cr = &mut recs[rec];
                cr.mate_pos = mate_pos;
                cr.mate_ref_id = mate_ref;
                cr.flags |= PAIRED;
                if mate_flags & UNMAPPED != 0 {
                    cr.flags |= MATE_UNMAPPED;
                    cr.tlen = 0;
                }
                if cr.flags & UNMAPPED != 0 {
                    cr.tlen = 0;
                }
                if mate_flags & REVERSE != 0 {
                    cr.flags |= MATE_REVERSE;
                }
            }
        } else if links[rec].detached {
            let cr = &mut recs[rec];
            if links[rec].mate_flags & MF_REVERSE != 0 {
                cr.flags |= PAIRED | MATE_REVERSE;
            }
            if links[rec].mate_flags & MF_UNMAPPED != 0 {
                cr.flags |= MATE_UNMAPPED;
            }
            if cr.flags & PAIRED == 0 {
                cr.mate_ref_id = -1;
            }
        } else {
            // Neither detached nor linked: htslib leaves the mate unset.
            if recs[rec].flags & PAIRED == 0 {
                recs[rec].mate_ref_id = -1;
            }
        }
        if links[rec].tlen_unset {
            recs[rec].tlen = 0;
            links[rec].tlen_unset = false;
        }
    }
    Ok(())
}

/// The template length of the chain starting at `rec`, set on every member.
fn chain_tlen(
    recs: &mut [Alignment],
    links: &mut [Link],
    rec: usize,
    at: u64,
) -> Result<(), Error> {
    let n = recs.len() as i64;
    let (mut aleft, mut aright) = (recs[rec].pos, recs[rec].end);
    let mut reference = recs[rec].ref_id;
    let mut left_cnt = 0;
    let mut id2 = rec;
    let bad = || Error::at(at, "mate links of a slice do not form a chain");
    // Each step moves forward, so the walk ends within the slice.
    loop {
        let r = &recs[id2];
        if aleft > r.pos {
            aleft = r.pos;
            left_cnt = 1;
        } else if aleft == r.pos {
            left_cnt += 1;
        }
        aright = aright.max(r.end);
        let next = links[id2].mate_line;
        if next == -1 {
            links[id2].mate_line = rec as i64;
            break;
        }
        if next <= id2 as i64 || next >= n {
            return Err(bad());
        }
        id2 = next as usize;
        if recs[id2].ref_id != reference {
            reference = -1;
        }
        if id2 == rec {
            break;
        }
    }
    let tlen = aright - aleft + 1;
    let mut id = rec;
    loop {
        let r = &mut recs[id];
        r.tlen = if reference == -1 {
            0
        } else if r.pos == aleft && (left_cnt == 1 || r.flags & READ1 != 0) {
            tlen
        } else {
            -tlen
        };
        links[id].tlen_unset = false;
        id = links[id].mate_line as usize;
        if id == rec {
            break;
        }
    }
    Ok(())
}

/// Names for records stored without one: the mate's stored name (`stored_name` of its
/// index), else `prefix:N` with N the record's (or, for the later record of a pair, its
/// mate's) number in the file, from 1. Only the records `keep` marks are named: a generated
/// name is never copied to a mate.
pub fn name_unnamed<'a>(
    recs: &mut [Alignment],
    links: &[Link],
    (keep, stored_name): (&[bool], impl Fn(usize) -> &'a [u8]),
    prefix: &str,
    record_counter: i64,
) {
    for rec in 0..recs.len() {
        if recs[rec].name_stored || !keep.get(rec).copied().unwrap_or(true) {
            continue;
        }
        let ml = links[rec].mate_line;
        let mate = usize::try_from(ml).ok().filter(|&m| m < recs.len());
        if let Some(m) = mate.filter(|&m| recs[m].name_stored) {
            recs[rec].name.clear();
            recs[rec].name.extend_from_slice(stored_name(m));
            continue;
        }
        // The counter is the file's own LTF8: wrapping keeps a hostile one from overflowing.
        let number = match mate {
            Some(m) if m < rec => record_counter.wrapping_add(m as i64 + 1),
            _ => record_counter.wrapping_add(rec as i64 + 1),
        };
        recs[rec].name = format!("{prefix}:{number}").into_bytes();
    }
}
