//! `hts idxstats FILE`: per-reference counts from the index alone (samtools idxstats), or by
//! reading the records when there is no usable index.

use std::io::{self, Write};
use std::process::ExitCode;

use samtools::idxstats::{self, Failure, IdxStats};

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
    let options = hts::Options::new().threads(threads);
    let stats = match idxstats::idxstats(file, &options, &mut opts::warn("idxstats", file)) {
        Ok(stats) => stats,
        Err(Failure::Open(e)) => {
            eprintln!("hts idxstats: failed to open \"{file}\": {e}");
            return ExitCode::from(1);
        }
        Err(Failure::NotSorted) => {
            eprintln!("hts idxstats: file is not position sorted");
            eprintln!("hts idxstats: failed to process \"{file}\"");
            return ExitCode::from(1);
        }
        Err(Failure::Process(e)) => {
            eprintln!("hts idxstats: failed to process \"{file}\": {e}");
            return ExitCode::from(1);
        }
    };
    print(&stats)
}

fn print(stats: &IdxStats) -> ExitCode {
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
