//! `-M`, `--region-file` and `-P` on CRAM: the facade's multi-region pass
//! ([`hts::cram_multi`]) with `-P`'s first pass for the mates, read here.

use std::collections::VecDeque;
use std::ops::Range;

use crate::filter::Selection;
use crate::pairs::{collect_mates, Mates, SecondPass};
use bam::{Header, Record};
use cram::crai::CraiEntry;
use cram::multi::{plan, Filter};
use cram::pass::{self, Pass};
use hts::cram_layout::to_bam;

use super::Failure;
use super::ViewArgs;

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
    let (targets, set, unknown) = super::input::region_set(args, header, regions)?;
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
        reader.advise(&pass::advice(std::slice::from_ref(&pass)));
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
