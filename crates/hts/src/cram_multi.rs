//! `-M`, `--region-file` and `-P` on CRAM: htslib's multi-region iterator over a CRAM
//! (`hts_itr_multi_cram`, `hts_itr_multi_next`). The containers of every interval come from
//! the `.crai` (as a single region's do), each read once, in file order; a record is kept when
//! it overlaps an interval not yet passed (the iterator's `curr_intv` walk, shared with BAM's:
//! [`region::MultiCursor`]); `*` adds the unplaced reads at the end, `.` reads every record.

use std::ops::Range;

use cram::crai::CraiEntry;
use region::{MultiCursor, Region, RegionSet};

use crate::cram_layout::reference_len;

/// What a multi-region pass reads, and how it judges the records.
pub struct Multi {
    /// The containers, in file order; `None`: the whole file (`.`).
    pub containers: Option<Vec<Range<u64>>>,
    /// Which of their records the iterator returns.
    pub filter: Filter,
}

/// The iterator's walk over the regions (`reg_list` and its `curr_*` fields), and its special
/// regions.
pub struct Filter {
    cursor: MultiCursor,
    unplaced: bool,
    all: bool,
}

/// The pass for `set` over a CRAM whose index holds `entries` (`data_end`: where its EOF
/// container begins); an error when the index's lines reaching a region are out of order
/// (`cram::crai::check_order`).
pub fn plan(entries: &[CraiEntry], set: &RegionSet, data_end: u64) -> Result<Multi, cram::Error> {
    let mut containers: Vec<Range<u64>> = Vec::new();
    let mut ranges: Vec<cram::reader::Range> = set
        .iter()
        .flat_map(|r| {
            r.intervals
                .iter()
                .filter(|i| i.end >= i.beg)
                .filter_map(move |&i| cram::reader::Range::from_region(&Region::of(r.tid, i)))
        })
        .collect();
    if set.unplaced {
        ranges.extend(cram::reader::Range::from_region(&Region::Unplaced));
    }
    for range in &ranges {
        cram::crai::check_order(entries, range)?;
        match cram::crai::containers_for(entries, range, data_end) {
            Some(c) => containers.extend(c),
            None if range.ref_id >= 0 => eprintln!(
                "[W::hts_itr_multi_cram] No index entry for region {}:{}-{}",
                range.ref_id,
                range.start - 1,
                range.end
            ),
            None => eprintln!("[W::hts_itr_multi_cram] No index entry for NOCOOR region"),
        }
    }
    containers.sort_by_key(|c| (c.start, c.end));
    // One byte range each, overlaps joined (the unplaced reads' range runs to the end).
    let mut joined: Vec<Range<u64>> = Vec::with_capacity(containers.len());
    for c in containers {
        match joined.last_mut() {
            Some(last) if c.start < last.end => last.end = last.end.max(c.end),
            _ => joined.push(c),
        }
    }
    let containers = joined;
    Ok(Multi {
        containers: (!set.all).then_some(containers),
        filter: Filter {
            cursor: MultiCursor::at_first_region(set),
            unplaced: set.unplaced,
            all: set.all,
        },
    })
}

/// Where a record lies as BAM gives it: reference id, 0-based start and the end `bam_endpos`
/// gives (its CIGAR's reference length, at least 1, after the start), from the CRAM record
/// itself, before it is laid out as BAM.
fn placement(a: &cram::Alignment) -> (i32, i64, i64) {
    // As BAM stores them: 32 bits.
    let beg = i64::from((a.pos - 1) as i32);
    (a.ref_id, beg, beg + reference_len(a).max(1))
}

impl Filter {
    /// Whether the iterator returns `a` (read in file order from the planned containers).
    pub fn keeps(&mut self, a: &cram::Alignment) -> bool {
        let (tid, beg, end) = placement(a);
        self.keeps_at(tid, beg, end)
    }

    /// Whether the iterator returns `r`, a record already laid out as BAM: the same judgement
    /// from the same stored fields.
    pub fn keeps_record(&mut self, r: &bam::Record) -> bool {
        let tid = r.stored_coordinates().ref_id;
        let beg = i64::from(r.stored_coordinates().pos);
        self.keeps_at(tid, beg, r.stored_end_pos())
    }

    fn keeps_at(&mut self, tid: i32, beg: i64, end: i64) -> bool {
        if self.all {
            return true;
        }
        if tid < 0 {
            return self.unplaced;
        }
        self.cursor.keeps(tid, beg, end)
    }
}
