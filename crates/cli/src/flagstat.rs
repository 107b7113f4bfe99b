//! `hts flagstat [-@ N] [-O default|json|tsv] FILE`: samtools flagstat's counts and formats.

use std::io::{self, Write};
use std::process::ExitCode;

use samtools::flagstat::{self, Failure, Format};

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
    let options = hts::Options::new().threads(threads);
    let stats = match flagstat::flagstat(file, &options, &mut opts::warn("flagstat", file)) {
        Ok(stats) => stats,
        Err(Failure::Open(e)) => {
            eprintln!("hts flagstat: Cannot open input file \"{file}\": {e}");
            return ExitCode::from(1);
        }
        Err(Failure::Read(e)) => {
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
