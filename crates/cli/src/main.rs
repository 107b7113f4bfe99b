//! `hts`: samtools' `view`, on the `bam` facade, for local and remote BAM files.
//!
//! The C library calls [`main`] directly (`no_main`): Rust's own start-up finds the main
//! thread's stack by reading and parsing `/proc/self/maps` (for its stack overflow message), a
//! twelfth of a small local query's instructions and five system calls (issue 21). What else
//! it does that `hts` relies on is done in [`main`].
#![cfg_attr(not(test), no_main)]
// The unit tests' harness has its own `main`, so `run` and what only it calls go unused there.
#![cfg_attr(test, allow(dead_code))]

// C's number parsing as samtools reads option values, for every command.
use samtools::numbers;

mod args;
mod bgzip;
mod flagstat;
mod getopt;
mod idxstats;
mod manifest;
mod opts;
mod quickcheck;
mod summary;
mod tabix;
mod view;

use std::process::ExitCode;

const COMMANDS: &str = "\
Program: hts (samtools view for local and remote BAM and CRAM files)

Usage:   hts <command> [options]

Commands:
     view           SAM/BAM output of a BAM or CRAM file, whole or by region
     flagstat       simple stats
     idxstats       BAM index stats
     quickcheck     quickly check if SAM/BAM/CRAM file appears intact
     bgzip          BGZF compression and decompression
     tabix          region queries of tabix-indexed VCF, BED, GFF and other files
     help [cmd]     display this help message or help for [cmd]
     version        detailed version information
";

fn version() -> String {
    let v = bam::versions();
    format!(
        "hts {}\nUsing libcurl {}\nUsing libdeflate {}\n",
        env!("CARGO_PKG_VERSION"),
        v.libcurl,
        v.libdeflate
    )
}

/// The process's entry point, called by the C library with the arguments (which
/// `std::env::args` reads on its own).
///
/// It does what Rust's start-up would have done and `hts` relies on: `SIGPIPE` ignored, so that
/// a closed output pipe is an error that `view` turns into samtools' status 141 after its
/// clean-up; a panic ends with status 101 rather than unwinding into C; and the exit goes
/// through `std::process::exit`, which flushes standard output; standard descriptors that are
/// closed are opened on `/dev/null`. A stack overflow is a plain `SIGSEGV` without a message.
#[cfg(not(test))]
#[no_mangle]
pub extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    // Standard descriptors that are closed are opened on /dev/null, as Rust's start-up does:
    // otherwise the first file hts opens would take the number and receive what is written to
    // standard output or error.
    for fd in 0..3 {
        // SAFETY: F_GETFD only asks whether `fd` is open; `open` takes a NUL-terminated path.
        // Done in order, so `open` returns the lowest closed descriptor: `fd`.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFD) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
            {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
    }
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler (no code runs on
    // the signal), and it happens before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let code = std::panic::catch_unwind(run).unwrap_or(ExitCode::from(101));
    // No request may still be inside libcurl when the process exits (see hfile::shutdown).
    hfile::shutdown(std::time::Duration::from_secs(2));
    std::process::exit(status(code))
}

/// The number an [`ExitCode`] stands for (std tells it only to its own start-up).
fn status(code: ExitCode) -> i32 {
    (0..=u8::MAX)
        .find(|&n| ExitCode::from(n) == code)
        .map_or(1, i32::from)
}

fn run() -> ExitCode {
    let mut argv = std::env::args();
    let program = argv.next().unwrap_or_else(|| "hts".to_string());
    let argv: Vec<String> = argv.collect();
    match argv.first().map(String::as_str) {
        Some("view") => view::run(&program, &argv[1..]),
        Some("flagstat") => flagstat::run(&argv[1..]),
        Some("idxstats") => idxstats::run(&argv[1..]),
        Some("quickcheck") => quickcheck::run(&argv[1..]),
        Some("tabix") => tabix::run(&argv[1..]),
        Some("bgzip") => bgzip::run(&argv[1..]),
        Some("--version") | Some("-V") | Some("version") => {
            print!("{}", version());
            ExitCode::SUCCESS
        }
        Some("help") | Some("--help") | Some("-h") | Some("-?") => {
            if argv.get(1).map(String::as_str) == Some("view") {
                print!("{}", args::usage());
            } else {
                print!("{COMMANDS}");
            }
            ExitCode::SUCCESS
        }
        None => {
            eprint!("{COMMANDS}");
            ExitCode::from(1)
        }
        Some(other) => {
            eprintln!("[main] unrecognized command '{other}'");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_is_the_number_an_exit_code_stands_for() {
        assert_eq!(status(ExitCode::SUCCESS), 0);
        assert_eq!(status(ExitCode::FAILURE), 1);
        assert_eq!(
            status(ExitCode::from(samtools::view::BROKEN_PIPE_STATUS)),
            141
        );
        assert_eq!(status(ExitCode::from(255)), 255);
    }
}
