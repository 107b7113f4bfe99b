//! `hts flagstat [-@ N] [-O default|json|tsv] FILE`: samtools flagstat's counts and formats.

use std::io::{self, Write};
use std::process::ExitCode;

use samtools::flagstat::{FlagStat, Format};

use crate::getopt::{Spec, Value};
use crate::opts;

const USAGE: &str = "\
Usage: hts flagstat [options] <in.bam>
  -@, --threads INT
               Number of additional threads to use [0]
      --verbosity INT
               Set level of verbosity
  -O, --output-fmt FORMAT
               Specify output format (json, tsv)
";

const SPECS: &[Spec<char>] = &[
    opts::THREADS,
    Spec {
        id: 'O',
        short: Some('O'),
        long: &["output-fmt"],
        value: Value::Required,
    },
    opts::VERBOSITY,
];

/// The counts of every record of `file`; `Err(None)` when it could not be opened (said here).
fn count(file: &str, options: &bam::OpenOptions) -> Result<FlagStat, Option<bam::Error>> {
    if hts::sniff::is_cram(file) {
        return count_cram(file, &options.transport).map_err(|e| {
            eprintln!("hts flagstat: error reading from \"{file}\": {e}");
            None
        });
    }
    let mut reader = opts::open(file, options, |e| {
        format!("hts flagstat: Cannot open input file \"{file}\": {e}")
    })
    .map_err(|_| None)?;
    let mut stats = FlagStat::default();
    let mut records = reader.records().map_err(Some)?;
    while let Some(r) = records.next_record().map_err(Some)? {
        stats.add(&r);
    }
    Ok(stats)
}

/// A CRAM's records (a local or remote file, or standard input), counted without a reference
/// (as samtools needs none here).
fn count_cram(file: &str, transport: &hfile::OpenOptions) -> Result<FlagStat, String> {
    let mut reader = hts::cram_open::open_unreferenced(file, transport)?;
    reader.without_bases();
    let n_ref = reader.header().references.len();
    let mut stats = FlagStat::default();
    while let Some(records) = reader.next_container().map_err(|e| e.to_string())? {
        for a in &records {
            stats.add(&hts::cram_layout::to_bam(a, n_ref)?);
        }
    }
    Ok(stats)
}

pub fn run(argv: &[String]) -> ExitCode {
    let (options, files) = match opts::parse_or_usage(argv, SPECS, "flagstat", USAGE) {
        Ok(p) => p,
        Err(status) => return status,
    };
    let format = opts::last(&options, 'O').map_or(Format::Default, |v| {
        Format::from_arg(v.split(',').next().unwrap_or(v))
    });
    let threads = opts::threads(&options);
    let file = match opts::single_file(&files, USAGE) {
        Ok(f) => f,
        Err(status) => return status,
    };
    let options = bam::OpenOptions {
        threads,
        ..Default::default()
    };
    let fresh = bam::OpenOptions {
        no_cache: true,
        ..options.clone()
    };
    let counted = opts::again_if_stale(
        count(file, &options),
        |e| e.as_ref().and_then(opts::changed),
        || count(file, &fresh),
    );
    let stats = match counted {
        Ok(stats) => stats,
        Err(None) => return ExitCode::from(1),
        Err(Some(e)) => {
            eprintln!("hts flagstat: error reading from \"{file}\": {e}");
            return ExitCode::from(1);
        }
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match stats.write(format, &mut out).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hts flagstat: error writing output: {e}");
            ExitCode::from(1)
        }
    }
}
