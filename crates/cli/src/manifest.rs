//! `hts view --manifest FILE [options] [REGION ...]`: the same regions from every sample of a
//! cohort manifest, in one process, through the facade's cohort query (`hts::cohort`: one
//! shared client, `--jobs` files at once). Per sample, records are selected and edited as
//! `view` does for one file; `-c` prints `sample<TAB>count` in manifest order, `-o TEMPLATE`
//! writes one output per sample, `{sample}` in the template replaced by its name. Without
//! either it is an error: samtools has no way to put many files' SAM in one stream that a
//! reader could take apart again (each has its own header), so each sample gets its own file.
//!
//! On standard error: warnings and failures name their sample; then one summary line
//! (`[hts] cohort: samples=N failed=N requests=N retries=N bytes_received=N ...`), then each
//! failed sample's name on a line of its own. The exit status is 0 only if every sample
//! succeeded.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use bam::Header;
use hts::alignment::Records;
use hts::cohort::{Cohort, Done, Sample};

use crate::args::{HeaderMode, ViewArgs};
use crate::output;
use crate::select::{self, Fate};
use crate::sink::{self, Output};
use crate::summary;
use crate::view::{io_failure, report_filter_errors, Failure, BROKEN_PIPE_STATUS};

/// What `-o` must hold for one output per sample.
const PLACEHOLDER: &str = "{sample}";

/// Runs `view --manifest`.
pub fn run(args: &ViewArgs, command_line: &str) -> ExitCode {
    let started = Instant::now();
    let cohort = match prepare(args) {
        Ok(c) => c,
        Err(message) => {
            eprintln!("hts view: {message}");
            return ExitCode::from(1);
        }
    };
    let mut table = match args.count {
        true => match sink::create(args.output.as_deref().filter(|p| *p != "-"), 0) {
            Ok(out) => Some(out),
            Err(Failure::Message(m) | Failure::Stale(m)) => {
                eprintln!("hts view: {m}");
                return ExitCode::from(1);
            }
            Err(Failure::BrokenPipe) => return ExitCode::from(BROKEN_PIPE_STATUS),
        },
        false => None,
    };
    let n = cohort.samples().len();
    let mut results: Vec<Option<Result<u64, String>>> = vec![None; n];
    // Counts go out in manifest order, each as soon as every sample before it is done.
    let mut printed = 0;
    let mut broken_pipe = false;
    cohort.run(
        |sample, header, records| one_sample(args, command_line, sample, header, records),
        |done: Done<u64, Failure>| {
            for warning in &done.warnings {
                eprintln!("[{}] {warning}", done.sample.name);
            }
            let result = done.result.map_err(|f| match f {
                Failure::BrokenPipe => "the output was closed".to_string(),
                Failure::Message(m) | Failure::Stale(m) => m,
            });
            if let Err(m) = &result {
                eprintln!("hts view: sample {}: {m}", done.sample.name);
            }
            results[done.index] = Some(result);
            let Some(out) = table.as_mut() else { return };
            while let Some(Some(result)) = results.get(printed) {
                if let (Ok(count), false) = (result, broken_pipe) {
                    let name = &cohort.samples()[printed].name;
                    if let Err(e) = writeln!(out, "{name}\t{count}") {
                        broken_pipe = e.kind() == std::io::ErrorKind::BrokenPipe;
                        if !broken_pipe {
                            eprintln!("hts view: writing the counts failed: {e}");
                        }
                    }
                }
                printed += 1;
            }
        },
    );
    let mut status = ExitCode::SUCCESS;
    if let Some(out) = table {
        if let Err(e) = out.close() {
            match io_failure("writing the counts failed", e) {
                Failure::BrokenPipe => broken_pipe = true,
                Failure::Message(m) | Failure::Stale(m) => {
                    eprintln!("hts view: {m}");
                    status = ExitCode::from(1);
                }
            }
        }
    }
    let failed: Vec<&str> = cohort
        .samples()
        .iter()
        .zip(&results)
        .filter(|(_, r)| !matches!(r, Some(Ok(_))))
        .map(|(s, _)| s.name.as_str())
        .collect();
    let stats = hfile::settled_transfer_stats(summary::SETTLE);
    eprintln!(
        "{}",
        summary::cohort_line(n, failed.len(), &stats, started.elapsed())
    );
    for name in &failed {
        eprintln!("{name}");
    }
    if broken_pipe {
        return ExitCode::from(BROKEN_PIPE_STATUS);
    }
    if !failed.is_empty() {
        return ExitCode::from(1);
    }
    status
}

/// The cohort the arguments ask for, or why they cannot be run.
fn prepare(args: &ViewArgs) -> Result<Cohort, String> {
    let select = &args.select;
    let refuse = |what: &str| Err(format!("--manifest cannot be combined with {what}"));
    if select.unselected.is_some() {
        return refuse("-U (one output per sample only)");
    }
    if select.fetch_pairs {
        return refuse("-P");
    }
    if select.multi_region {
        return refuse("-M or --region-file (give the regions as arguments)");
    }
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
    crate::input::set_transport(args, &mut transport);
    let client = hfile::Client::new(hfile::ClientOptions {
        max_in_flight: args.fetchers.unwrap_or(hts::cohort::DEFAULT_IN_FLIGHT),
        transport,
        ..hfile::ClientOptions::default()
    });
    let mut options = hts::Options::new()
        .threads(args.threads)
        .no_cache(args.no_cache);
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
    Ok(Cohort::new(samples, args.positional.clone())
        .jobs(args.jobs.unwrap_or(hts::cohort::DEFAULT_JOBS))
        .client(client)
        .options(options))
}

/// One sample's records selected and edited as `view` does, counted, and written to its own
/// output unless counting.
fn one_sample(
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
    selection: &mut samtools::filter::Selection,
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
        records.recycle(record);
    }
    Ok(())
}
