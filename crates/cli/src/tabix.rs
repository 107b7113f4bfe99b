//! `hts tabix FILE [REGION...]`: tabix 1.16's query mode (`-h`, `-H`, `-l`, `-R`, `-T`,
//! `--separate-regions`, `-D`), its messages and exit codes; `-r` and indexing hand on to
//! their own modules. Indexes are read from the cache or the source, never written to the
//! working directory, so `-D` changes nothing.

use std::io::{self, Write};
use std::process::ExitCode;

use tabix::RegionList;

use crate::getopt::{self, Spec, Value};
use crate::tabix_conf::{Conf, Setting};

const USAGE: &str = "
Version: 1.16 (hts)
Usage:   hts tabix [OPTIONS] [FILE] [REGION [...]]

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

Querying and other options:
   -h, --print-header         print also the header lines
   -H, --only-header          print only the header lines
   -l, --list-chroms          list chromosome names
   -r, --reheader FILE        replace the header with the content of FILE
   -R, --regions FILE         restrict to regions listed in the file
   -T, --targets FILE         similar to -R but streams rather than index-jumps
   -D                         do not download the index file (hts never writes one)
       --cache INT            accepted for tabix's sake (hts keeps its own cache)
       --separate-regions     separate the output by corresponding regions
       --verbosity INT        accepted for tabix's sake
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
    Value(char),
    Ignored,
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
        id: Opt::Value(c),
        short: Some(c),
        long,
        value: Value::Required,
    }
}

const fn long_only(id: Opt, long: &'static [&'static str], value: Value) -> Spec<Opt> {
    Spec {
        id,
        short: None,
        long,
        value,
    }
}

const SPECS: &[Spec<Opt>] = &[
    flag(Opt::Header, 'h', &["print-header"]),
    flag(Opt::OnlyHeader, 'H', &["only-header"]),
    flag(Opt::List, 'l', &["list-chroms"]),
    flag(Opt::NoDownload, 'D', &[]),
    long_only(Opt::Separate, &["separate-regions"], Value::None),
    long_only(Opt::Ignored, &["cache", "verbosity"], Value::Required),
    flag(Opt::Zero, '0', &["zero-based"]),
    flag(Opt::Csi, 'C', &["csi"]),
    flag(Opt::Force, 'f', &["force"]),
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
    let value = |c: char| {
        parsed
            .options
            .iter()
            .rev()
            .find(|f| f.id == Opt::Value(c))
            .and_then(|f| f.value.as_deref())
    };
    let settings = parsed
        .options
        .iter()
        .filter_map(|f| match (f.id, &f.value) {
            (Opt::Zero, _) => Some(Setting::Zero),
            (Opt::Csi, _) => Some(Setting::Csi),
            (Opt::Force, _) => Some(Setting::Force),
            (Opt::Value(c), Some(v)) => Some(Setting::Value(c, v)),
            _ => None,
        });
    let conf = match Conf::from_settings(settings) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let Some((file, regions)) = parsed.positional.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(1);
    };
    let list = has(Opt::List);
    let only_header = has(Opt::OnlyHeader);
    let (regions_file, targets_file) = (value('R'), value('T'));
    if list {
        return query(file, &[], &Flags::default(), None, list);
    }
    if !regions.is_empty() || only_header || regions_file.is_some() || targets_file.is_some() {
        let options = hfile::OpenOptions::default();
        let mut regs = Vec::new();
        if !only_header {
            if let Some(f) = regions_file {
                match RegionList::read(f, &options) {
                    Ok(l) => regs = l.region_strings(),
                    Err(e) => return no_region_list(f, &e),
                }
            }
            if regs.is_empty() && regions.is_empty() {
                regs.push(".".to_string());
            }
            regs.extend(regions.iter().cloned());
        }
        let targets = match targets_file.map(|f| (f, RegionList::read(f, &options))) {
            None => None,
            Some((_, Ok(t))) => Some(t),
            Some((f, Err(e))) => return no_region_list(f, &e),
        };
        let flags = Flags {
            header: has(Opt::Header) || only_header,
            only_header,
            separate: has(Opt::Separate).then(|| conf.meta_char(file)),
        };
        return query(file, &regs, &flags, targets.as_ref(), false);
    }
    if let Some(header) = value('r') {
        return crate::tabix_reheader::run(file, header, &conf);
    }
    crate::tabix_index::run(file, &conf)
}

fn no_region_list(file: &str, why: &str) -> ExitCode {
    eprintln!("{why}");
    eprintln!("Could not build region list for \"{file}\"");
    ExitCode::from(1)
}

#[derive(Default)]
struct Flags {
    header: bool,
    only_header: bool,
    /// `--separate-regions`: the comment character to print before each region's lines.
    separate: Option<u8>,
}

enum Failure {
    Read(tabix::Error),
    Write(io::Error),
}

/// Opens `file` and writes its names (`list`) or its header and regions' lines.
fn query(
    file: &str,
    regions: &[String],
    flags: &Flags,
    targets: Option<&RegionList>,
    list: bool,
) -> ExitCode {
    let options = hfile::OpenOptions::default();
    // A query loads only the index's part its regions need.
    let keep = if list {
        tabix::Keep::All
    } else {
        tabix::Keep::Regions(regions.to_vec())
    };
    let mut reader = match tabix::Reader::open_keep(file, None, &options, keep) {
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
    let result = if list {
        reader
            .names()
            .iter()
            .try_for_each(|n| line(&mut out, n.as_bytes()))
    } else {
        write_regions(&mut reader, regions, flags, targets, &mut out)
    };
    let flushed = out.flush().map_err(Failure::Write);
    match result.and(flushed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Write(e)) => {
            eprintln!("hts tabix: writing to standard output failed: {e}");
            ExitCode::from(1)
        }
        Err(Failure::Read(e)) => {
            eprintln!("Reading \"{file}\" failed: {e}");
            ExitCode::from(1)
        }
    }
}

fn line(out: &mut dyn Write, l: &[u8]) -> Result<(), Failure> {
    out.write_all(l)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(Failure::Write)
}

/// tabix's `query_regions` for text files: the header, then each region's lines in turn
/// (a region that does not parse is reported and passed over), those outside the targets
/// dropped, `--separate-regions`' line before the first line of each region that has one.
fn write_regions(
    reader: &mut tabix::Reader,
    regions: &[String],
    flags: &Flags,
    targets: Option<&RegionList>,
    out: &mut impl Write,
) -> Result<(), Failure> {
    if flags.header {
        for h in reader.header().map_err(Failure::Read)? {
            line(out, &h)?;
        }
    }
    if flags.only_header {
        return Ok(());
    }
    let meta = reader.meta().clone();
    for region in regions {
        let target = match tabix::resolve(&meta, region) {
            Ok(t) => t,
            Err(why) => {
                eprintln!("[E::hts_parse_region] {why}");
                continue;
            }
        };
        let mut q = reader.query_region(target);
        let mut found = false;
        while let Some((l, beg, end)) = q.next_record().map_err(Failure::Read)? {
            if let Some(t) = targets {
                let name = tabix::interval::parse(&meta, l).map_or(&[][..], |iv| iv.name);
                if !t.overlaps(name, beg, end - 1) {
                    continue;
                }
            }
            if let (false, Some(c)) = (found, flags.separate) {
                let mut head = vec![c];
                head.extend_from_slice(region.as_bytes());
                line(out, &head)?;
            }
            found = true;
            line(out, l)?;
        }
    }
    Ok(())
}
