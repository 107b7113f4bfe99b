//! `samtools view -P` (`--fetch-pairs`): the records of the regions and their mates wherever
//! they are, in two multi-region passes as samtools' `fetch_pairs_collect_mates` makes them.
//! The second pass is one query over the regions plus every mate position, so on a remote file
//! the mates are more spans of the same plan.

use std::collections::HashSet;

use crate::filter::bed::Targets;
use crate::filter::Selection;
use crate::multi::RegionSet;
use crate::{Header, Reader, Record, Result};

/// Flag bits used here.
const PAIRED: u16 = 0x1;
const MATE_UNMAPPED: u16 = 0x8;

/// Runs both passes and hands every record samtools would print to `emit`, in file order.
/// `targets` are the regions as samtools' region hash holds them (after `-L` and command-line
/// regions were merged), `regions` the same resolved to reference ids.
pub fn fetch_pairs(
    reader: &mut Reader,
    targets: &Targets,
    regions: RegionSet,
    selection: &mut Selection,
    mut emit: impl FnMut(&mut Record, &Header) -> Result<()>,
) -> Result<()> {
    let header = reader.header().clone();
    let name_of = |tid: i32| usize::try_from(tid).ok().and_then(|t| header.ref_name(t));
    let mut mates: HashSet<Vec<u8>> = HashSet::new();
    let mut second = regions.clone();
    let mut any_unplaced = false;
    {
        let mut q = reader.query_regions(regions)?;
        while let Some(mut r) = q.next_record()? {
            if r.flag() & PAIRED == 0 {
                continue;
            }
            let mate_pos = i64::from(r.next_pos());
            if let Some(mate_ref) = name_of(r.next_ref_id()) {
                if targets.overlaps(mate_ref, mate_pos, mate_pos) {
                    continue;
                }
            }
            if !selection.select(&mut r, &header) {
                continue;
            }
            mates.insert(c_name(r.name()).to_vec());
            if r.next_ref_id() < 0 || r.flag() & MATE_UNMAPPED != 0 {
                any_unplaced = true;
            }
            if let Ok(tid) = usize::try_from(r.next_ref_id()) {
                second.add(tid, mate_pos, mate_pos + 1);
            }
        }
    }
    if any_unplaced {
        second.unplaced = true;
    }
    let mut q = reader.query_regions(second)?;
    while let Some(mut r) = q.next_record()? {
        let in_region = name_of(r.ref_id())
            .is_some_and(|name| targets.overlaps(name, i64::from(r.pos()), r.end_pos()));
        if !in_region && !mates.contains(c_name(r.name())) {
            continue;
        }
        if selection.select(&mut r, &header) {
            emit(&mut r, &header)?;
        }
    }
    Ok(())
}

/// The read name as a C string (up to a NUL).
fn c_name(name: &[u8]) -> &[u8] {
    &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())]
}
