//! `hts idxstats FILE`: per-reference counts from the index alone (samtools idxstats), or by
//! reading the records when there is no usable index.

use std::io::{self, Write};
use std::process::ExitCode;

use bam::idxstats::{IdxStats, SlowError};
use bam::Reader;

use crate::opts::{self, Spec};

const USAGE: &str = "\
Usage: hts idxstats [options] <in.bam>
  -@, --threads INT
               Number of additional threads to use [0]
      --verbosity INT
               Set level of verbosity
";

const SPECS: &[Spec] = &[
    Spec {
        short: Some('@'),
        long: Some("threads"),
        takes_value: true,
    },
    Spec {
        short: None,
        long: Some("verbosity"),
        takes_value: true,
    },
];

pub fn run(argv: &[String]) -> ExitCode {
    let (options, files) = match opts::parse(argv, SPECS) {
        Ok(p) => p,
        Err(e) => {
            eprint!("hts idxstats: {e}\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    let threads = options
        .iter()
        .rev()
        .filter(|o| o.name == "@")
        .filter_map(|o| o.value.as_deref())
        .map(|v| opts::atoi(v).max(0) as usize)
        .next()
        .unwrap_or(0);
    let file = match files.as_slice() {
        [f] => f,
        [] => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(1);
        }
    };
    let mut reader = match Reader::open(file, &bam::OpenOptions::default()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hts idxstats: failed to open \"{file}\": {e}");
            return ExitCode::from(1);
        }
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
