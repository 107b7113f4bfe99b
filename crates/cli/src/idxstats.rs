//! `hts idxstats FILE`: per-reference counts from the index alone (samtools idxstats), or by
//! reading the records when there is no usable index.

use std::io::{self, Write};
use std::process::ExitCode;

use bam::idxstats::{IdxStats, SlowError};
use bam::Reader;

use crate::getopt::Spec;
use crate::opts;

const USAGE: &str = "\
Usage: hts idxstats [options] <in.bam>
  -@, --threads INT
               Number of additional threads to use [0]
      --verbosity INT
               Set level of verbosity
";

const SPECS: &[Spec<char>] = &[opts::THREADS, opts::VERBOSITY];

pub fn run(argv: &[String]) -> ExitCode {
    let (options, files) = match opts::parse_or_usage(argv, SPECS, "idxstats", USAGE) {
        Ok(p) => p,
        Err(status) => return status,
    };
    let threads = opts::threads(&options);
    let file = match opts::single_file(&files, USAGE) {
        Ok(f) => f,
        Err(status) => return status,
    };
    // The index is fetched beside the header (one round trip for a remote file).
    let open = bam::OpenOptions {
        index: bam::IndexHint::Auto,
        ..Default::default()
    };
    let mut reader = match opts::open(file, &open, |e| {
        format!("hts idxstats: failed to open \"{file}\": {e}")
    }) {
        Ok(r) => r,
        Err(status) => return status,
    };
    let stats = match reader.load_index(None) {
        Ok(()) => IdxStats::from_index(&reader),
        Err(e) => {
            eprintln!(
                "hts idxstats: fail to load index for \"{file}\", reverting to slow method ({e})"
            );
            None
        }
    };
    let stats = match stats {
        Some(s) => s,
        None => {
            let options = bam::OpenOptions {
                threads,
                ..Default::default()
            };
            let slow = Reader::open(file, &options)
                .map_err(SlowError::Read)
                .and_then(|mut r| IdxStats::by_reading(&mut r));
            match slow {
                Ok(s) => s,
                Err(SlowError::NotSorted) => {
                    eprintln!("hts idxstats: file is not position sorted");
                    eprintln!("hts idxstats: failed to process \"{file}\"");
                    return ExitCode::from(1);
                }
                Err(SlowError::Read(e)) => {
                    eprintln!("hts idxstats: failed to process \"{file}\": {e}");
                    return ExitCode::from(1);
                }
            }
        }
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match stats.write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hts idxstats: error writing output: {e}");
            ExitCode::from(1)
        }
    }
}
