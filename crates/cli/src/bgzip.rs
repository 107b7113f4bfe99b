//! `hts bgzip [-c -d -f -k -l N -@ N -i -I FILE -r -g -t -b N -s N] [FILE]`: bgzip 1.16's
//! command line. `bgzf::bgzip::Options` applies the options in order as bgzip's loop does;
//! the work on each file is `bgzf::bgzip::run`'s, whose errors are bgzip's messages.

use std::fs::File;
use std::process::ExitCode;

use bgzf::bgzip::Options;

use crate::getopt::{self, Spec, Value};

const USAGE: &str = "
Version: 1.16 (hts)
Usage:   hts bgzip [OPTIONS] [FILE] ...
Options:
   -b, --offset INT           decompress at virtual file pointer (0-based uncompressed offset)
   -c, --stdout               write on standard output, keep original files unchanged
   -d, --decompress           decompress
   -f, --force                overwrite files without asking
   -g, --rebgzip              use an index file to bgzip a file
   -i, --index                compress and create BGZF index
   -I, --index-name FILE      name of BGZF index file [file.gz.gzi]
   -k, --keep                 don't delete input files during operation
   -l, --compress-level INT   Compression level to use when compressing; 0 to 9, or -1 for default [-1]
   -r, --reindex              (re)index compressed file
   -s, --size INT             decompress INT bytes (uncompressed size)
   -@, --threads INT          number of compression threads to use [1]
   -t, --test                 test integrity of compressed file
";

/// An option, named by its letter.
const fn spec(short: char, long: &'static [&'static str], valued: bool) -> Spec<char> {
    Spec {
        id: short,
        short: Some(short),
        long,
        value: if valued { Value::Required } else { Value::None },
    }
}

const SPECS: &[Spec<char>] = &[
    spec('c', &["stdout"], false),
    spec('d', &["decompress"], false),
    spec('f', &["force"], false),
    spec('k', &["keep"], false),
    spec('l', &["compress-level"], true),
    spec('@', &["threads"], true),
    spec('i', &["index"], false),
    spec('I', &["index-name"], true),
    spec('r', &["reindex"], false),
    spec('b', &["offset"], true),
    spec('s', &["size"], true),
    spec('g', &["rebgzip"], false),
    spec('t', &["test"], false),
];

pub fn run(argv: &[String]) -> ExitCode {
    let parsed = match getopt::parse(SPECS, argv) {
        Ok(p) => p,
        Err(e) => {
            eprint!("hts bgzip: {e}\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    // atol / atoi, as bgzip reads its numbers.
    let found = parsed.options.iter().map(|f| {
        let v = f.value.as_deref();
        (f.id, v, v.map_or(0, |v| region::strtol(v.as_bytes(), 10).0))
    });
    let o = match Options::from_flags(found) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("[bgzip] {e}");
            return ExitCode::from(1);
        }
    };
    let files = if parsed.positional.is_empty() {
        vec!["-".to_string()]
    } else {
        parsed.positional
    };
    // Descriptor 1 itself: std's stdout is line-buffered, which cut each block's text in two
    // writes at its last newline.
    use std::os::fd::AsFd;
    let mut stdout = match std::io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => File::from(fd),
        Err(e) => {
            eprintln!("[bgzip] standard output: {e}");
            return ExitCode::from(1);
        }
    };
    let mut status = ExitCode::SUCCESS;
    for file in &files {
        if let Err(e) = bgzf::bgzip::run(file, &o, &mut stdout) {
            eprintln!("[bgzip] {e}");
            status = ExitCode::from(1);
        }
    }
    status
}
