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

Indexing Options:
   -0, --zero-based           coordinates are zero-based
   -b, --begin INT            column number for region start [4]
   -c, --comment CHAR         skip comment lines starting with CHAR [null]
   -C, --csi                  generate CSI index for VCF (default is TBI)
   -e, --end INT              column number for region end (if no end, set INT to -b) [5]
   -f, --force                overwrite existing index without asking
   -m, --min-shift INT        set minimal interval size for CSI indices to 2^INT [14]
   -p, --preset STR           gff, bed, sam, vcf
   -s, --sequence INT         column number for sequence names (suppressed by -p) [1]
   -S, --skip-lines INT       skip first INT lines [0]

-r, -R and -T are tabix's but not yet implemented in hts.
";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Opt {
    Header,
    OnlyHeader,
    List,
    NoDownload,
    Separate,
    Zero,
    Csi,
    Force,
    Index(char),
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

const fn indexing(c: char, long: &'static [&'static str]) -> Spec<Opt> {
    Spec {
        id: Opt::Index(c),
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
    flag(Opt::Zero, '0', &["zero-based"]),
    flag(Opt::Csi, 'C', &["csi"]),
    flag(Opt::Force, 'f', &["force"]),
    indexing('p', &["preset"]),
    indexing('s', &["sequence"]),
    indexing('b', &["begin"]),
    indexing('e', &["end"]),
    indexing('S', &["skip-lines"]),
    indexing('c', &["comment"]),
    indexing('m', &["min-shift"]),
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
        let value = |c: char| {
            parsed
                .options
                .iter()
                .rev()
                .find(|f| f.id == Opt::Index(c))
                .and_then(|f| f.value.clone())
        };
        let int = |c: char| value(c).map(|v| crate::numbers::atoi(&v));
        let conf = crate::tabix_index::Conf {
            preset: value('p'),
            seq: int('s'),
            beg: int('b'),
            end: int('e'),
            skip: int('S'),
            comment: value('c').and_then(|v| v.bytes().next()).map(i32::from),
            zero: has(Opt::Zero),
            csi: has(Opt::Csi),
            min_shift: int('m'),
            force: has(Opt::Force),
        };
        return crate::tabix_index::run(file, &conf);
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
