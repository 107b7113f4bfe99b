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
    let transport = hfile::OpenOptions::default();
    let mut status = 0u32;
    for file in &files {
        let report = if file != "-" && hts::sniff::is_cram(file) {
            check_cram(file, &transport, unmapped)
        } else {
            quickcheck::check(file, &transport, unmapped)
        };
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

/// `samtools quickcheck` on a CRAM file, local or remote: the definition and header container
/// read (else htslib cannot open it), references in the header, and the EOF container at the
/// end (for a remote file, its last bytes alone).
fn check_cram(
    location: &str,
    transport: &hfile::OpenOptions,
    unmapped: bool,
) -> quickcheck::Report {
    let mut rep = quickcheck::Report::default();
    rep.details.push(format!("checking {location}"));
    let problem = |rep: &mut quickcheck::Report, bit: u32, text: String| {
        rep.state |= bit;
        rep.problems.push(text);
    };
    let reader = hts::cram_open::open_unreferenced(location, transport).ok();
    let Some(mut reader) = reader else {
        problem(
            &mut rep,
            quickcheck::FAIL_OPEN,
            format!("{location} could not be opened for reading."),
        );
        return rep;
    };
    rep.details.push(format!("opened {location}"));
    rep.details.push(format!("{location} is sequence data"));
    match reader.header().references.len() {
        0 if !unmapped => problem(
            &mut rep,
            quickcheck::BAD_HEADER,
            format!("{location} had no targets in header."),
        ),
        n => rep
            .details
            .push(format!("{location} has {n} targets in header.")),
    }
    let version = reader.version();
    if !version.has_eof_container() {
        rep.details.push(format!(
            "{location} cannot be checked for EOF block because its filetype does not contain one."
        ));
        return rep;
    }
    let tail = reader.tail(version.eof_len()).ok().flatten();
    match tail {
        Some(t) if version.is_eof_container(&t) => {
            rep.details.push(format!("{location} has good EOF block."))
        }
        Some(_) => problem(
            &mut rep,
            quickcheck::NO_EOF_BLOCK,
            format!("{location} was missing EOF block when one should be present."),
        ),
        None => problem(
            &mut rep,
            quickcheck::NO_EOF_BLOCK,
            format!("{location} caused an error whilst checking for EOF block."),
        ),
    }
    rep
}
