//! htslib's multi-region iterator over a CRAM (`samtools view -M`, `--region-file`, `-P`)
//! (`hts_itr_multi_cram`, `hts_itr_multi_next`). The containers of every interval come from
//! the `.crai` (as a single region's do), each read once, in file order; a record is kept when
//! it overlaps an interval not yet passed (the iterator's `curr_intv` walk, shared with BAM's:
//! [`region::MultiCursor`]); `*` adds the unplaced reads at the end, `.` reads every record.

use std::ops::Range;

use region::{MultiCursor, Region, RegionSet};

use crate::crai::CraiEntry;

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
/// (`crate::crai::check_order`).
pub fn plan(entries: &[CraiEntry], set: &RegionSet, data_end: u64) -> Result<Multi, crate::Error> {
    let mut containers: Vec<Range<u64>> = Vec::new();
    let mut ranges: Vec<crate::reader::Range> = set
        .iter()
        .flat_map(|r| {
            r.intervals
                .iter()
                .filter(|i| i.end >= i.beg)
                .filter_map(move |&i| crate::reader::Range::from_region(&Region::of(r.tid, i)))
        })
        .collect();
    if set.unplaced {
        ranges.extend(crate::reader::Range::from_region(&Region::Unplaced));
    }
    for range in &ranges {
        crate::crai::check_order(entries, range)?;
        match crate::crai::containers_for(entries, range, data_end) {
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
fn placement(a: &crate::Alignment) -> (i32, i64, i64) {
    // As BAM stores them: 32 bits.
    let beg = i64::from((a.pos - 1) as i32);
    (a.ref_id, beg, beg + a.reference_len().max(1))
}

impl Filter {
    /// Whether the iterator returns `a` (read in file order from the planned containers).
    pub fn keeps(&mut self, a: &crate::Alignment) -> bool {
        let (tid, beg, end) = placement(a);
        self.keeps_at(tid, beg, end)
    }

    /// Whether the iterator returns a record on reference `tid` (as stored: -1 for none) at
    /// 0-based `beg`, ending (exclusive) at `end` as `bam_endpos` gives it.
    pub fn keeps_at(&mut self, tid: i32, beg: i64, end: i64) -> bool {
        if self.all {
            return true;
        }
        if tid < 0 {
            return self.unplaced;
        }
        self.cursor.keeps(tid, beg, end)
    }
}
