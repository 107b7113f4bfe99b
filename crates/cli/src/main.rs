//! `hts`: samtools' `view`, on the `bam` facade, for local and remote BAM files.

mod args;
mod bgzip;
mod bgzip_gzi;
mod cram_input;
mod cram_multi;
mod cram_refs;
mod cram_regions;
mod cram_view;
mod flagstat;
mod getopt;
mod idxstats;
mod input;
mod numbers;
mod opts;
mod outlet;
mod output;
mod quickcheck;
mod select;
mod sink;
mod summary;
mod tabix;
mod tabix_conf;
mod tabix_index;
mod tabix_reheader;
mod view;

use std::process::ExitCode;

const COMMANDS: &str = "\
Program: hts (samtools view for local and remote BAM files)

Usage:   hts <command> [options]

Commands:
     view           SAM/BAM output of a BAM file, whole or by region
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

fn main() -> ExitCode {
    let code = run();
    // No request may still be inside libcurl when the process exits (see hfile::shutdown).
    bam::hfile::shutdown(std::time::Duration::from_secs(2));
    code
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
