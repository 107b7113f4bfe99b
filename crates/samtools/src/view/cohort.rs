//! `samtools view` over a cohort (`hts view --manifest FILE [options] [REGION ...]`): the same
//! regions from every sample of a manifest, in one process, through the facade's cohort query
//! (`hts::cohort`: one shared client, `--jobs` files at once). Per sample, the records are
//! those `view` reads of one file (the regions one by one, or with `-M` and `--region-file`
//! every region at once through [`input::multi_region_query`], the one walk of both paths),
//! selected and edited as `view` does them, and counted; with `-o TEMPLATE` each sample is
//! written to its own output, `{sample}` in the template replaced by its name (samtools has no
//! way to put many files' SAM in one stream that a reader could take apart again).

use std::sync::atomic::AtomicBool;

use bam::Header;
use hts::alignment::Records;
use hts::cohort::{Cohort, Done, Sample};

use super::input;
use super::output;
use super::select::{self, Fate};
use super::sink::{self, Output};
use super::{report_filter_errors, Failure, HeaderMode, ViewArgs};

/// What `-o` must hold for one output per sample.
pub const PLACEHOLDER: &str = "{sample}";

/// A cohort as `view` runs it: the facade's cohort, and with `-M` or `--region-file` the
/// region list every sample is read through (merged once).
pub struct ViewCohort {
    /// The samples, the regions and how they are read.
    pub cohort: Cohort,
    plan: Option<input::RegionPlan>,
}

/// The cohort the arguments ask for, or why they cannot be run.
pub fn prepare(args: &ViewArgs) -> Result<ViewCohort, String> {
    let select = &args.select;
    let refuse = |what: &str| Err(format!("--manifest cannot be combined with {what}"));
    if select.unselected.is_some() {
        return refuse("-U (one output per sample only)");
    }
    if select.fetch_pairs {
        return refuse("-P");
    }
    let plan = if select.multi_region && args.header != HeaderMode::Only {
        // An empty region list would fail every sample alike: said once, as samtools says it
        // (which prints a header asked for alone before it looks at regions).
        Some(input::RegionPlan::new(args, &args.positional)?)
    } else {
        None
    };
    // The references -M's list names, for the first index request of each remote BAM.
    let query_refs = plan.as_ref().map_or(0, input::RegionPlan::references);
    if args.explicit_index {
        return refuse("-X (the manifest's third column names each index)");
    }
    let template = args.output.as_deref();
    if !args.count {
        match template {
            None => {
                return Err(
                    "--manifest needs -c (a count per sample) or -o TEMPLATE with \
                            {sample} (one output per sample)"
                        .to_string(),
                )
            }
            Some(t) if !t.contains(PLACEHOLDER) => {
                return Err(format!(
                    "with --manifest, -o needs {PLACEHOLDER} in its name (one output per \
                     sample), not '{t}'"
                ))
            }
            Some(_) => {}
        }
    }
    let path = args.manifest.as_deref().unwrap_or("-");
    let samples = hts::cohort::read_manifest(path).map_err(|e| e.to_string())?;
    let mut transport = hfile::OpenOptions::default();
    super::input::transport(args)(&mut transport);
    let client = hfile::Client::new(hfile::ClientOptions {
        max_in_flight: args.fetchers.unwrap_or(hts::cohort::DEFAULT_IN_FLIGHT),
        transport,
        ..hfile::ClientOptions::default()
    });
    let mut options = hts::Options::new()
        .threads(args.threads)
        .no_cache(args.no_cache)
        // -M and --region-file query every file (a BED alone gives the cohort no regions).
        .index_ahead(select.multi_region && args.header != HeaderMode::Only)
        .query_refs(query_refs);
    let reference = args.reference.as_deref().or_else(|| {
        let option = args.input_options.iter().rev();
        option
            .filter(|(k, _)| k == "reference")
            .map(|(_, v)| v.as_str())
            .next()
    });
    if let Some(reference) = reference {
        options = options.reference(reference);
    }
    let cohort = Cohort::new(samples, args.positional.clone())
        .jobs(args.jobs.unwrap_or(hts::cohort::DEFAULT_JOBS))
        .client(client)
        .options(options);
    Ok(ViewCohort { cohort, plan })
}

/// Runs the cohort as `view` reads each file, `done` called with each sample's count (or
/// failure) as it completes: the regions one by one, or with `-M` and `--region-file` all at
/// once; `-H` reads no record.
pub fn run<D>(view: &ViewCohort, args: &ViewArgs, command_line: &str, done: D)
where
    D: FnMut(Done<u64, Failure>),
{
    let work = |sample: &Sample, header: &Header, records: &mut Records<'_>| {
        one_sample(args, command_line, sample, header, records)
    };
    let Some(plan) = &view.plan else {
        return view.cohort.run(work, done);
    };
    view.cohort.run_planned(
        &AtomicBool::new(false),
        |_sample, reader, header, warnings| {
            let mut warn = |warning: String| warnings.push(warning);
            input::multi_region_query(plan, reader, header, &mut warn)
        },
        work,
        done,
    );
}

/// One sample's records selected and edited as `view` does, counted, and written to its own
/// output unless counting.
pub fn one_sample(
    args: &ViewArgs,
    command_line: &str,
    sample: &Sample,
    input: &Header,
    records: &mut Records<'_>,
) -> Result<u64, Failure> {
    let mut selection = args
        .select
        .selection(args.require_flags, args.exclude_flags, args.min_mapq)
        .map_err(Failure::Message)?;
    let header = sink::header(args, input, command_line, &sample.file)?;
    let mut output = match (&args.output, args.count) {
        (Some(template), false) => {
            let path = template.replace(PLACEHOLDER, &sample.name);
            let plan = output::plan(args, Some(&path)).map_err(|u| {
                Failure::Message(format!("hts view does not support writing {} yet", u.0))
            })?;
            Some(Output::open(args, &plan, &header)?)
        }
        _ => None,
    };
    let mut count = 0;
    let read = if args.header == HeaderMode::Only {
        Ok(())
    } else {
        select_records(
            args,
            &mut selection,
            &header,
            records,
            &mut output,
            &mut count,
        )
    };
    if let Err(failure) = read {
        // What was written before the failure stays, without an EOF marker, as `view` leaves it.
        if let Some(out) = output {
            let _ = out.abandon();
        }
        return Err(failure);
    }
    report_filter_errors(&selection);
    if let Some(out) = output {
        out.finish()?;
    }
    Ok(count)
}

/// `view`'s `process_one_record` on every record of one sample.
fn select_records(
    args: &ViewArgs,
    selection: &mut crate::filter::Selection,
    header: &Header,
    records: &mut Records<'_>,
    output: &mut Option<Output>,
    count: &mut u64,
) -> Result<(), Failure> {
    while let Some(mut record) = records.next_record()? {
        let fate = select::process(&args.select, selection, &mut record, header, args.count)
            .map_err(Failure::Message)?;
        if fate == Fate::Selected {
            *count += 1;
        }
        if let Some(out) = output.as_mut() {
            if matches!(fate, Fate::Selected | Fate::Unmapped) {
                out.write(&record)?;
            }
        }
    }
    Ok(())
}
