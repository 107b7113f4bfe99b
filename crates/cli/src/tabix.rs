//! `hts tabix FILE [REGION...]`: tabix 1.16's query mode (`-h`, `-H`, `-l`,
//! `--separate-regions`, `-D`), its messages and exit codes. Indexes are read from the cache or
//! the source, never written to the working directory, so `-D` changes nothing.

use std::io::{self, Write};
use std::process::ExitCode;

use crate::getopt::{self, Spec, Value};

const USAGE: &str = "
Version: 1.16 (hts)
Usage:   hts tabix [OPTIONS] [FILE] [REGION [...]]

Querying and other options:
   -h, --print-header         print also the header lines
   -H, --only-header          print only the header lines
   -l, --list-chroms          list chromosome names
   -D                         do not download the index file (hts never writes one)
       --separate-regions     separate the output by corresponding regions

Indexing options (-p, -s, -b, -e, -S, -c, -0, -C, -m, -f), -r, -R and -T are tabix's but
not yet implemented in hts.
";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Opt {
    Header,
    OnlyHeader,
    List,
    NoDownload,
    Separate,
    Unsupported(char),
}

const fn flag(id: Opt, short: char, long: &'static [&'static str]) -> Spec<Opt> {
    Spec {
        id,
        short: Some(short),
        long,
        value: Value::None,
    }
}

const fn valued(c: char, long: &'static [&'static str]) -> Spec<Opt> {
    Spec {
        id: Opt::Unsupported(c),
        short: Some(c),
        long,
        value: Value::Required,
    }
}

const SPECS: &[Spec<Opt>] = &[
    flag(Opt::Header, 'h', &["print-header"]),
    flag(Opt::OnlyHeader, 'H', &["only-header"]),
    flag(Opt::List, 'l', &["list-chroms"]),
    flag(Opt::NoDownload, 'D', &[]),
    Spec {
        id: Opt::Separate,
        short: None,
        long: &["separate-regions"],
        value: Value::None,
    },
    flag(Opt::Unsupported('0'), '0', &["zero-based"]),
    flag(Opt::Unsupported('C'), 'C', &["csi"]),
    flag(Opt::Unsupported('f'), 'f', &["force"]),
    valued('p', &["preset"]),
    valued('s', &["sequence"]),
    valued('b', &["begin"]),
    valued('e', &["end"]),
    valued('S', &["skip-lines"]),
    valued('c', &["comment"]),
    valued('m', &["min-shift"]),
    valued('r', &["reheader"]),
    valued('R', &["regions"]),
    valued('T', &["targets"]),
];

pub fn run(argv: &[String]) -> ExitCode {
    let parsed = match getopt::parse(SPECS, argv) {
        Ok(p) => p,
        Err(e) => {
            eprint!("hts tabix: {e}\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    let has = |o: Opt| parsed.options.iter().any(|f| f.id == o);
    if let Some(f) = parsed
        .options
        .iter()
        .find(|f| matches!(f.id, Opt::Unsupported(_)))
    {
        eprintln!("hts tabix: option {} is not implemented yet", f.spelled);
        return ExitCode::from(1);
    }
    let Some((file, regions)) = parsed.positional.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(1);
    };
    let (list, only_header) = (has(Opt::List), has(Opt::OnlyHeader));
    if regions.is_empty() && !list && !only_header {
        eprintln!("hts tabix: indexing ({file} without a region) is not implemented yet");
        return ExitCode::from(1);
    }
    let _ = has(Opt::NoDownload);
    let options = bam::hfile::OpenOptions::default();
    let mut reader = match tabix::Reader::open(file, None, &options) {
        Ok(r) => r,
        Err(tabix::Error::NoIndex { .. }) => {
            let what = if list { ".tbi" } else { ".tbi/.csi" };
            eprintln!("[E::idx_find_and_load] Could not retrieve index file for '{file}'");
            eprintln!("Could not load {what} index of {file}: No such file or directory");
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("hts tabix: {e}");
            return ExitCode::from(1);
        }
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let result = query(
        &mut reader,
        regions,
        &Flags {
            list,
            only_header,
            header: has(Opt::Header),
            separate: has(Opt::Separate),
        },
        &mut out,
    );
    let flushed = out.flush().map_err(Failure::Write);
    match result.and(flushed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Write(e)) => {
            eprintln!("hts tabix: writing to standard output failed: {e}");
            ExitCode::from(1)
        }
        Err(Failure::Read(e)) => {
            eprintln!("hts tabix: {e}");
            ExitCode::from(1)
        }
    }
}

struct Flags {
    list: bool,
    only_header: bool,
    header: bool,
    separate: bool,
}

enum Failure {
    Read(tabix::Error),
    Write(io::Error),
}

fn query(
    reader: &mut tabix::Reader,
    regions: &[String],
    flags: &Flags,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let line = |out: &mut dyn Write, l: &[u8]| {
        out.write_all(l)
            .and_then(|()| out.write_all(b"\n"))
            .map_err(Failure::Write)
    };
    if flags.list {
        for n in reader.names() {
            line(out, n.as_bytes())?;
        }
        return Ok(());
    }
    if flags.header || flags.only_header {
        for h in reader.header().map_err(Failure::Read)? {
            line(out, &h)?;
        }
        if flags.only_header {
            return Ok(());
        }
    }
    let meta_char = u8::try_from(reader.meta().meta_char).unwrap_or(b'#');
    for region in regions {
        if flags.separate {
            let mut l = vec![meta_char];
            l.extend_from_slice(region.as_bytes());
            line(out, &l)?;
        }
        let mut q = reader.query(region).map_err(Failure::Read)?;
        while let Some(l) = q.next_line().map_err(Failure::Read)? {
            line(out, l)?;
        }
    }
    Ok(())
}
