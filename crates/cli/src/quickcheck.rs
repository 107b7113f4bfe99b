//! `hts quickcheck [-v] [-q] [-u] FILE...`: samtools quickcheck's checks, messages and exit
//! status (the bitwise OR of every file's status bits).

use std::process::ExitCode;

use samtools::quickcheck;

use crate::getopt::{Spec, Value};
use crate::opts;

const USAGE: &str = "\
Usage: hts quickcheck [options] <input> [...]
Options:
  -v              verbose output (repeat for more verbosity)
  -q              suppress warning messages
  -u              unmapped input (do not require targets in header)

The exit status is 0 when every file passes, else the bitwise OR of: 2 could not be opened,
4 not sequence data, 8 bad header or no targets, 16 missing EOF block.
";

const fn letter(c: char) -> Spec<char> {
    Spec {
        id: c,
        short: Some(c),
        long: &[],
        value: Value::None,
    }
}

const SPECS: &[Spec<char>] = &[letter('v'), letter('q'), letter('u')];

pub fn run(argv: &[String]) -> ExitCode {
    let (options, files) = match opts::parse_or_usage(argv, SPECS, "quickcheck", USAGE) {
        Ok(p) => p,
        Err(status) => return status,
    };
    let verbose = options.iter().filter(|o| o.id == 'v').count();
    let quiet = options.iter().any(|o| o.id == 'q');
    let unmapped = options.iter().any(|o| o.id == 'u');
    if files.is_empty() {
        print!("{USAGE}");
        return ExitCode::from(1);
    }
    if verbose >= 2 {
        eprintln!("verbosity set to {verbose}");
    }
    let options = hts::Options::new();
    let mut status = 0u32;
    for file in &files {
        let report = quickcheck::check(file, &options, unmapped);
        if verbose >= 3 {
            for line in &report.details {
                eprintln!("{line}");
            }
        }
        if !quiet || verbose >= 2 {
            for line in &report.problems {
                eprintln!("{line}");
            }
        }
        if report.state != 0 && verbose >= 1 {
            println!("{file}");
        }
        status |= report.state;
    }
    ExitCode::from(status as u8)
}
