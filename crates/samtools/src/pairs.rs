//! `samtools view -P` (`--fetch-pairs`): the records of the regions and their mates wherever
//! they are, in two passes of htslib's multi-region iterator ([`hts::alignment::Reader::query_set`],
//! BAM or CRAM) as samtools' `fetch_pairs_collect_mates` makes them.
//! The second pass is one query over the regions plus every mate position, so on a remote file
//! the mates are more spans of the same plan.

use std::collections::HashSet;

use crate::filter::bed::Targets;
use crate::filter::Selection;
use bam::{Header, Record};
use hts::alignment::{Reader, Records};
use region::{Interval, Position, RefId, RegionSet};

/// Runs the first pass of `-P` on `reader`: what the second pass reads and keeps.
///
/// `targets` are the regions as samtools' region hash holds them (after `-L` and command-line
/// regions were merged), `regions` the same resolved to reference ids; `header` is the one
/// records are selected with (samtools' edited header). The first pass reads the paired
/// records of the regions whose mate lies outside them and that `selection` keeps: their names
/// are the mates to print, their mates' positions (and the unplaced reads, for a mate without
/// one) more regions of the second pass. htslib's CRAM iterator takes neither `.` nor `*`
/// into the second pass (mates without a position bring the unplaced reads back).
pub fn first_pass(
    reader: &mut Reader,
    header: &Header,
    targets: &Targets,
    regions: RegionSet,
    selection: &mut Selection,
) -> hts::Result<SecondPass> {
    let mut base = regions.clone();
    if reader.is_cram() {
        base.all = false;
        base.unplaced = false;
    }
    let mut q = reader.query_set(&regions)?;
    collect_mates(|| q.next_record(), header, targets, base, selection)
}

/// The second pass of `-P`: the records of the regions and the records named as mates, in
/// file order. Apply the selection to each (samtools runs `process_aln` on them again) before
/// printing.
pub fn second_pass(reader: &mut Reader, second: SecondPass) -> hts::Result<Records<'_>> {
    let SecondPass { regions, mates } = second;
    let keep = move |r: &bam::RecordRef<'_>| mates.keeps_at(r.ref_id(), placed_span(r), r.name());
    Ok(reader.query_set(&regions)?.retain(keep))
}

/// The first pass of `-P` over the records `next` gives (those of the multi-region iterator
/// over `regions`, of a BAM or a CRAM): the regions of the second pass, and what it keeps.
pub fn collect_mates<E>(
    mut next: impl FnMut() -> std::result::Result<Option<Record>, E>,
    header: &Header,
    targets: &Targets,
    regions: RegionSet,
    selection: &mut Selection,
) -> std::result::Result<SecondPass, E> {
    let name_of = |tid: Option<RefId>| tid.and_then(|t| header.ref_name(t));
    let mut names: HashSet<Vec<u8>> = HashSet::new();
    let mut second = regions;
    let mut mate_positions = Vec::new();
    let mut any_unplaced = false;
    while let Some(mut r) = next()? {
        if !r.flags().is_paired() {
            continue;
        }
        // samtools' region hash sees the mate position as stored.
        let mate_pos = i64::from(r.stored_coordinates().mate_pos);
        if let Some(mate_ref) = name_of(r.mate_ref_id()) {
            if targets.overlaps(mate_ref, mate_pos, mate_pos) {
                continue;
            }
        }
        if !selection.select(&mut r, header) {
            continue;
        }
        names.insert(c_name(r.name()).to_vec());
        if r.mate_ref_id().is_none() || r.flags().is_mate_unmapped() {
            any_unplaced = true;
        }
        if let Some(tid) = r.mate_ref_id() {
            // A mate without a position is looked for from the reference's start.
            let beg = r.mate_pos().unwrap_or(Position::ZERO);
            let end = Position::new(beg.get() + 1);
            mate_positions.push((tid, Interval::new(beg, end)));
        }
    }
    second.add_all(mate_positions);
    if any_unplaced {
        second.unplaced = true;
    }
    let mates = Mates {
        targets: targets.clone(),
        header: header.clone(),
        names,
    };
    Ok(SecondPass {
        regions: second,
        mates,
    })
}

/// What the first pass of `-P` finds ([`collect_mates`]): the second pass's regions, and what
/// it keeps.
pub struct SecondPass {
    /// The regions plus every mate position (and `*` for mates without one).
    pub regions: RegionSet,
    /// The records to keep.
    pub mates: Mates,
}

/// What the second pass of `-P` keeps: records overlapping a region, and the mates named in
/// the first.
pub struct Mates {
    targets: Targets,
    header: Header,
    names: HashSet<Vec<u8>>,
}

impl Mates {
    /// Whether the second pass keeps `r`.
    pub fn keeps(&self, r: &Record) -> bool {
        self.keeps_at(r.ref_id(), placed_span(r), r.name())
    }

    /// Whether the second pass keeps the record on `ref_id` over `span` named `name`.
    fn keeps_at(&self, ref_id: Option<RefId>, span: StoredSpan, name: &[u8]) -> bool {
        let in_region = ref_id
            .and_then(|t| self.header.ref_name(t))
            .is_some_and(|n| self.targets.overlaps(n, span.pos, span.end));
        in_region || self.names.contains(c_name(name))
    }
}

/// A record's position and end as samtools' region hash compares them: as stored (-1 for
/// none) and as `bam_endpos` computes it.
#[derive(Clone, Copy)]
struct StoredSpan {
    pos: i64,
    end: i64,
}

fn placed_span<D: AsRef<[u8]>>(r: &Record<D>) -> StoredSpan {
    StoredSpan {
        pos: i64::from(r.stored_coordinates().pos),
        end: r.stored_end_pos(),
    }
}

/// The read name as a C string (up to a NUL).
fn c_name(name: &[u8]) -> &[u8] {
    &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())]
}
