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

use hts::cohort::Done;
use samtools::view::cohort::{prepare, run as run_cohort};
use samtools::view::sink;
use samtools::view::{io_failure, Failure, ViewArgs, BROKEN_PIPE_STATUS};

use crate::summary;

/// Runs `view --manifest`.
pub fn run(args: &ViewArgs, command_line: &str) -> ExitCode {
    let started = Instant::now();
    few_malloc_arenas();
    let view = match prepare(args) {
        Ok(v) => v,
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
    let cohort = &view.cohort;
    let n = cohort.samples().len();
    let mut results: Vec<Option<Result<u64, String>>> = vec![None; n];
    // Counts go out in manifest order, each as soon as every sample before it is done.
    let mut printed = 0;
    let mut broken_pipe = false;
    run_cohort(&view, args, command_line, |done: Done<u64, Failure>| {
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
    });
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

/// Two malloc arenas for the whole process, set before any thread starts. A cohort runs a
/// hundred or more threads (its jobs and its requests in flight), and glibc gives threads up
/// to eight arenas a core, each keeping its high-water mark: the peak grew with the length of
/// the run rather than with the files in flight (2,500 samples of the test manifest: 130 MiB
/// against 64 MiB for 250; with two arenas 84 against 53 MiB). The threads mostly wait on the
/// network, so sharing arenas costs no measurable time.
fn few_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt changes a malloc setting; called before the cohort starts its threads.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}
