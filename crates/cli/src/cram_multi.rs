//! `-M`, `--region-file` and `-P` on CRAM: htslib's multi-region iterator over a CRAM
//! (`hts_itr_multi_cram`, `hts_itr_multi_next`). The containers of every interval come from
//! the `.crai` (as a single region's do), each read once, in file order; a record is kept when
//! it overlaps an interval not yet passed (the iterator's `curr_intv` walk, shared with BAM's:
//! [`region::MultiCursor`]); `*` adds the unplaced reads at the end, `.` reads every record.

use std::collections::VecDeque;
use std::ops::Range;

use bam::{Header, Record};
use cram::crai::CraiEntry;
use region::{MultiCursor, Region, RegionSet};
use samtools::filter::Selection;
use samtools::pairs::{collect_mates, Mates, SecondPass};

use crate::args::ViewArgs;
use crate::cram_regions::{self, Pass};
use crate::cram_view::{reference_len, to_bam};
use crate::view::Failure;

/// What a multi-region pass reads, and how it judges the records.
pub struct Multi {
    /// The containers, in file order; `None`: the whole file (`.`).
    pub containers: Option<Vec<Range<u64>>>,
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
        if self.all {
            return true;
        }
        let (tid, beg, end) = placement(a);
        if tid < 0 {
            return self.unplaced;
        }
        self.cursor.keeps(tid, beg, end)
    }
}

/// What a multi-region run keeps of the records its pass reads: the iterator's choice, and
/// with `-P` only the records of the regions and the mates the first pass named.
pub struct Keep {
    filter: Filter,
    mates: Option<Mates>,
}

impl Keep {
    /// Whether the iterator returns `a`: checked before it is laid out as BAM, so that a
    /// record it drops costs no conversion.
    pub fn placed(&mut self, a: &cram::Alignment) -> bool {
        self.filter.keeps(a)
    }

    /// With `-P`, whether a record the iterator returns is a region's or a mate the first
    /// pass named.
    pub fn mate_kept(&self, r: &Record) -> bool {
        self.mates.as_ref().is_none_or(|m| m.keeps(r))
    }
}

/// The pass of `-M`, `--region-file` or `-P` (`regions`: the command line's), and what it
/// keeps; for `-P` the first pass (the regions' records, to find their mates) is read here.
pub fn passes(
    args: &ViewArgs,
    reader: &mut cram::Reader,
    entries: &[CraiEntry],
    header: &Header,
    regions: &[String],
    selection: &mut Selection,
) -> Result<(Pass, Keep), Failure> {
    let (targets, set, unknown) = crate::input::region_set(args, header, regions)?;
    // Names the header does not hold stay in htslib's region list as reference -1, which its
    // CRAM iterator refuses, one line each; the list samtools makes again for the second
    // pass of -P gives `.` and `*` -1 too (and reads what it would have anyway).
    let refuse = |n: usize| {
        for _ in 0..n {
            eprintln!("[E::hts_itr_multi_cram] Query with tid=-1 not implemented for CRAM files");
        }
    };
    refuse(unknown);
    let data_end = reader.data_end();
    let shown = hfile::redact_text(args.positional.first().map_or("-", String::as_str));
    let failed = |e: cram::Error| Failure::Message(format!("{shown}: {e}"));
    let mut multi = plan(entries, &set, data_end).map_err(failed)?;
    let mut mates = None;
    if args.select.fetch_pairs {
        let pass = as_pass(multi.containers.take());
        reader.advise(&cram_regions::advice(std::slice::from_ref(&pass)));
        pass.start(reader);
        let file = args.positional.first().map_or("-", String::as_str);
        let n_ref = header.refs().len();
        let mut held: VecDeque<cram::Alignment> = VecDeque::new();
        let mut filter = multi.filter;
        let next = || -> Result<Option<Record>, Failure> {
            loop {
                while let Some(a) = held.pop_front() {
                    if filter.keeps(&a) {
                        let r = to_bam(&a, n_ref)
                            .map_err(|e| Failure::Message(format!("{file}: {e}")))?;
                        return Ok(Some(r));
                    }
                }
                match reader.next_container() {
                    Ok(Some(records)) => held.extend(records),
                    Ok(None) => return Ok(None),
                    Err(e) => {
                        return Err(Failure::Message(format!(
                            "{}: {e}",
                            hfile::redact_text(file)
                        )))
                    }
                }
            }
        };
        let special = usize::from(set.all) + usize::from(set.unplaced);
        // Refused in the second pass: `.` and `*` do not carry over (mates without a
        // position bring the unplaced reads back).
        let mut base = set;
        base.all = false;
        base.unplaced = false;
        let SecondPass {
            regions: second,
            mates: found,
        } = collect_mates(next, header, &targets, base, selection)?;
        refuse(unknown + special);
        multi = plan(entries, &second, data_end).map_err(failed)?;
        mates = Some(found);
    }
    let pass = as_pass(multi.containers);
    Ok((
        pass,
        Keep {
            filter: multi.filter,
            mates,
        },
    ))
}

fn as_pass(containers: Option<Vec<Range<u64>>>) -> Pass {
    containers.map_or(Pass::Whole, Pass::Planned)
}
