//! `hts view`: the arguments read, then samtools' view on the file ([`samtools::view::run`]),
//! again without the cache when a cached part turned out stale, or on every sample of a
//! manifest ([`crate::manifest`]); a transfer summary with `--verbosity`, and the exit status.

use std::io::{self, IsTerminal};
use std::process::ExitCode;

use samtools::view::{self, Failure, ViewArgs, BROKEN_PIPE_STATUS};

use crate::args::{parse_view, usage};
use crate::opts;
use crate::summary;

/// Runs `view` with the arguments after `view`; `program` is how hts was invoked (for `CL:`).
pub fn run(program: &str, argv: &[String]) -> ExitCode {
    let stdin_is_tty = io::stdin().is_terminal();
    if argv.is_empty() && stdin_is_tty {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let args = match parse_view(argv) {
        Ok(a) => a,
        Err(e) if e.is_unsupported() => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
        Err(e) if !e.show_usage => {
            eprintln!("hts view: {e}");
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("hts view: {e}");
            eprint!("{}", usage());
            return ExitCode::from(1);
        }
    };
    if args.help {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let command_line = view::command_line(program, argv);
    if args.manifest.is_some() {
        let args = ViewArgs {
            deadline: args.timeout.map(hfile::Deadline::after),
            ..args
        };
        return crate::manifest::run(&args, &command_line);
    }
    if args.positional.is_empty() && stdin_is_tty {
        eprintln!("hts view: No input provided or missing option argument.");
        eprint!("{}", usage());
        return ExitCode::from(1);
    }
    // The time limit runs from here, over a second reading as well.
    let args = ViewArgs {
        deadline: args.timeout.map(hfile::Deadline::after),
        ..args
    };
    let started = std::time::Instant::now();
    let stale = |f: &Failure| match f {
        Failure::Stale(why) => Some(why.clone()),
        _ => None,
    };
    let result = opts::again_if_stale(view::run(&args, &command_line), stale, || {
        let fresh = ViewArgs {
            no_cache: true,
            ..args.clone()
        };
        view::run(&fresh, &command_line)
    });
    if args.verbosity >= 1 {
        let stats = hfile::settled_transfer_stats(summary::SETTLE);
        eprintln!("{}", summary::line(&stats, started.elapsed()));
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BrokenPipe) => ExitCode::from(BROKEN_PIPE_STATUS),
        Err(Failure::Message(m) | Failure::Stale(m)) => {
            eprintln!("hts view: {m}");
            ExitCode::from(1)
        }
    }
}
