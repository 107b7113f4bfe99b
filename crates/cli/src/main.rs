//! `hts`: the samtools view subset, on the `bam` facade.

mod args;
mod flagstat;
mod idxstats;
mod opts;
mod quickcheck;
// Wired into `view` once the table-driven option parser lands (issue 11).
#[allow(dead_code)]
mod select;
mod view;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match argv.first().map(String::as_str) {
        Some("view") => view::run(&argv[1..]),
        Some("flagstat") => flagstat::run(&argv[1..]),
        Some("idxstats") => idxstats::run(&argv[1..]),
        Some("quickcheck") => quickcheck::run(&argv[1..]),
        Some("--version") | Some("version") => {
            println!("hts {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("--help") | Some("help") | None => {
            eprintln!(
                "Usage: hts view [options] FILE [INDEX] [REGION ...]\n\n{}",
                args::USAGE
            );
            if argv.is_empty() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Some(other) => {
            eprintln!("hts: unknown command '{other}' (try 'hts view')");
            ExitCode::from(1)
        }
    }
}
