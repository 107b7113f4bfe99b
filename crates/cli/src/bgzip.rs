//! `hts bgzip [-c] [-d] [-f] [-k] [-l N] [-@ N] [FILE]`: bgzip 1.16's compression and
//! decompression. Blocks hold what bgzip's hold (65280 bytes of data each, the EOF marker
//! last) at htslib's levels, compressed on `-@` threads by `bgzf::Writer`.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use bam::bgzf;

use crate::getopt::{self, Spec, Value};

const USAGE: &str = "
Version: 1.16 (hts)
Usage:   hts bgzip [OPTIONS] [FILE] ...
Options:
   -c, --stdout               write on standard output, keep original files unchanged
   -d, --decompress           decompress
   -f, --force                overwrite files without asking
   -k, --keep                 don't delete input files during operation
   -l, --compress-level INT   Compression level to use when compressing; 0 to 9, or -1 for default [-1]
   -@, --threads INT          number of compression threads to use [1]

-i, -I, -r, -b, -s, -g, -t are bgzip's but not yet implemented in hts.
";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Opt {
    Stdout,
    Decompress,
    Force,
    Keep,
    Level,
    Threads,
    Unsupported,
}

const fn spec(id: Opt, short: char, long: &'static [&'static str], value: Value) -> Spec<Opt> {
    Spec {
        id,
        short: Some(short),
        long,
        value,
    }
}

const SPECS: &[Spec<Opt>] = &[
    spec(Opt::Stdout, 'c', &["stdout"], Value::None),
    spec(Opt::Decompress, 'd', &["decompress"], Value::None),
    spec(Opt::Force, 'f', &["force"], Value::None),
    spec(Opt::Keep, 'k', &["keep"], Value::None),
    spec(Opt::Level, 'l', &["compress-level"], Value::Required),
    spec(Opt::Threads, '@', &["threads"], Value::Required),
    spec(Opt::Unsupported, 'i', &["index"], Value::None),
    spec(Opt::Unsupported, 'I', &["index-name"], Value::Required),
    spec(Opt::Unsupported, 'r', &["reindex"], Value::None),
    spec(Opt::Unsupported, 'b', &["offset"], Value::Required),
    spec(Opt::Unsupported, 's', &["size"], Value::Required),
    spec(Opt::Unsupported, 'g', &["rebgzip"], Value::None),
    spec(Opt::Unsupported, 't', &["test"], Value::None),
];

struct Settings {
    stdout: bool,
    decompress: bool,
    force: bool,
    keep: bool,
    level: u32,
    threads: usize,
}

pub fn run(argv: &[String]) -> ExitCode {
    let parsed = match getopt::parse(SPECS, argv) {
        Ok(p) => p,
        Err(e) => {
            eprint!("hts bgzip: {e}\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    let value = |o: Opt| {
        parsed
            .options
            .iter()
            .rev()
            .find(|f| f.id == o)
            .and_then(|f| f.value.clone())
    };
    let has = |o: Opt| parsed.options.iter().any(|f| f.id == o);
    if let Some(f) = parsed.options.iter().find(|f| f.id == Opt::Unsupported) {
        eprintln!("hts bgzip: option {} is not implemented yet", f.spelled);
        return ExitCode::from(1);
    }
    // atoi, as bgzip reads both numbers.
    let number =
        |o: Opt, default: i64| value(o).map_or(default, |v| i64::from(crate::numbers::atoi(&v)));
    let settings = Settings {
        stdout: has(Opt::Stdout),
        decompress: has(Opt::Decompress),
        force: has(Opt::Force),
        keep: has(Opt::Keep),
        level: bgzf::writer::htslib_level(number(Opt::Level, -1)),
        threads: usize::try_from(number(Opt::Threads, 1)).unwrap_or(1),
    };
    let files = if parsed.positional.is_empty() {
        vec!["-".to_string()]
    } else {
        parsed.positional
    };
    let mut status = ExitCode::SUCCESS;
    for file in &files {
        if let Err(e) = one(file, &settings) {
            eprintln!("[bgzip] {e}");
            status = ExitCode::from(1);
        }
    }
    status
}

fn one(file: &str, s: &Settings) -> Result<(), String> {
    let to_stdout = s.stdout || file == "-";
    let input: Box<dyn Read> = if file == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(file).map_err(|e| format!("Could not open {file}: {e}"))?)
    };
    let out_name = if to_stdout {
        None
    } else if s.decompress {
        match file.strip_suffix(".gz") {
            Some(n) => Some(n.to_string()),
            None => return Err(format!("{file}: unknown suffix -- ignored")),
        }
    } else {
        Some(format!("{file}.gz"))
    };
    if let Some(n) = &out_name {
        if !s.force && Path::new(n).exists() {
            return Err(format!("{n} already exists; use -f to overwrite"));
        }
    }
    let output: Box<dyn Write> = match &out_name {
        Some(n) => Box::new(File::create(n).map_err(|e| format!("can't create {n}: {e}"))?),
        None => Box::new(io::stdout().lock()),
    };
    let result = if s.decompress {
        decompress(file, input, output)
    } else {
        compress(input, output, s)
    };
    if let Err(e) = result {
        if let Some(n) = &out_name {
            let _ = std::fs::remove_file(n);
        }
        return Err(e);
    }
    if out_name.is_some() && !s.keep {
        std::fs::remove_file(file).map_err(|e| format!("cannot remove {file}: {e}"))?;
    }
    Ok(())
}

fn compress(mut input: Box<dyn Read>, output: Box<dyn Write>, s: &Settings) -> Result<(), String> {
    let mut w =
        bgzf::Writer::with_level(io::BufWriter::new(output), s.level).map_err(|e| e.to_string())?;
    if s.threads > 1 {
        w.set_threads(s.threads).map_err(|e| e.to_string())?;
    }
    io::copy(&mut input, &mut w).map_err(|e| format!("write failed: {e}"))?;
    let mut inner = w.finish().map_err(|e| format!("write failed: {e}"))?;
    inner.flush().map_err(|e| format!("write failed: {e}"))
}

fn decompress(name: &str, input: Box<dyn Read>, mut output: Box<dyn Write>) -> Result<(), String> {
    let mut stream = bgzf::BlockStream::new(name, input);
    io::copy(&mut stream, &mut output).map_err(|e| format!("{name}: {e}"))?;
    output.flush().map_err(|e| format!("write failed: {e}"))
}
