//! `hts tabix`: tabix 1.16's command line, messages and exit codes; the work is the `tabix`
//! crate's (`conf` for the options, `print` for queries: `-h`, `-H`, `-l`, `-R`, `-T`,
//! `--separate-regions`; `reheader` for `-r`; `build::index_file` for indexing). Indexes are
//! read from the cache or the source, never written to the working directory, so `-D`
//! changes nothing.

use std::io::{self, Write};
use std::process::ExitCode;

use tabix::build::BuildFailure;
use tabix::conf::{Conf, Setting};
use tabix::print::Print;
use tabix::{Error, RegionList};

use crate::getopt::{self, Spec, Value};

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

/// An option, named by its letter (`1`: `--separate-regions`; `_`: `--cache` and
/// `--verbosity`, accepted and ignored).
const fn spec(id: char, long: &'static [&'static str], valued: bool) -> Spec<char> {
    Spec {
        id,
        short: if id == '1' || id == '_' {
            None
        } else {
            Some(id)
        },
        long,
        value: if valued { Value::Required } else { Value::None },
    }
}

const SPECS: &[Spec<char>] = &[
    spec('h', &["print-header"], false),
    spec('H', &["only-header"], false),
    spec('l', &["list-chroms"], false),
    spec('D', &[], false),
    spec('1', &["separate-regions"], false),
    spec('_', &["cache", "verbosity"], true),
    spec('0', &["zero-based"], false),
    spec('C', &["csi"], false),
    spec('f', &["force"], false),
    spec('p', &["preset"], true),
    spec('s', &["sequence"], true),
    spec('b', &["begin"], true),
    spec('e', &["end"], true),
    spec('S', &["skip-lines"], true),
    spec('c', &["comment"], true),
    spec('m', &["min-shift"], true),
    spec('r', &["reheader"], true),
    spec('R', &["regions"], true),
    spec('T', &["targets"], true),
];

pub fn run(argv: &[String]) -> ExitCode {
    let parsed = match getopt::parse(SPECS, argv) {
        Ok(p) => p,
        Err(e) => {
            eprint!("hts tabix: {e}\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    let has = |c: char| parsed.options.iter().any(|f| f.id == c);
    let value = |c: char| {
        let last = parsed.options.iter().rev().find(|f| f.id == c);
        last.and_then(|f| f.value.as_deref())
    };
    let settings = parsed
        .options
        .iter()
        .filter_map(|f| match (f.id, &f.value) {
            ('0', _) => Some(Setting::Zero),
            ('C', _) => Some(Setting::Csi),
            ('f', _) => Some(Setting::Force),
            ('p', Some(v)) => Some(Setting::Preset(v)),
            ('c', Some(v)) => Some(Setting::Comment(v)),
            (c @ ('s' | 'b' | 'e' | 'S' | 'm'), Some(v)) => {
                // strtol(v, &end, 10) with nothing left after the number (empty: 0, as in C).
                let (n, used) = region::strtol(v.as_bytes(), 10);
                Some(Setting::Number(c, v, (used == v.len()).then_some(n)))
            }
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
    let (only_header, regions_file, targets_file) = (has('H'), value('R'), value('T'));
    if has('l') {
        return query(file, &[], &Print::default(), None, true);
    }
    if !regions.is_empty() || only_header || regions_file.is_some() || targets_file.is_some() {
        let options = hfile::OpenOptions::default();
        let regs = match (only_header, regions_file) {
            (true, _) => Vec::new(),
            (false, f) => match tabix::print::region_strings(f, regions, &options) {
                Ok(r) => r,
                Err(e) => return no_region_list(f.unwrap_or_default(), &e),
            },
        };
        let targets = match targets_file.map(|f| (f, RegionList::read(f, &options))) {
            None => None,
            Some((_, Ok(t))) => Some(t),
            Some((f, Err(e))) => return no_region_list(f, &e),
        };
        let flags = Print {
            header: has('h') || only_header,
            only_header,
            separate: has('1').then(|| conf.meta_char(file)),
        };
        return query(file, &regs, &flags, targets.as_ref(), false);
    }
    if let Some(header) = value('r') {
        return reheader(file, header, &conf);
    }
    index(file, &conf)
}

fn no_region_list(file: &str, why: &str) -> ExitCode {
    eprintln!("{why}\nCould not build region list for \"{file}\"");
    ExitCode::from(1)
}

/// Opens `file` and writes its names (`list`) or its header and regions' lines.
fn query(
    file: &str,
    regions: &[String],
    flags: &Print,
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
    let mut bad_region = |why: &str| eprintln!("[E::hts_parse_region] {why}");
    let result = match list {
        true => tabix::print::names(&reader, &mut out),
        false => tabix::print::regions(
            &mut reader,
            regions,
            flags,
            targets,
            &mut out,
            &mut bad_region,
        ),
    };
    match result.and_then(|()| out.flush().map_err(Error::Write)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => failed(&e, &format!("Reading \"{file}\" failed: {e}")),
    }
}

/// The exit of a query or reheader that failed with `e` (`message` for a read error): a
/// closed output pipe ends it quietly, as tabix's ignored write errors do.
fn failed(e: &Error, message: &str) -> ExitCode {
    match e {
        Error::Write(e) if e.kind() == io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
        Error::Write(e) => eprintln!("hts tabix: writing to standard output failed: {e}"),
        _ => eprintln!("{message}"),
    }
    ExitCode::from(1)
}

fn reheader(file: &str, header: &str, conf: &Conf) -> ExitCode {
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    match tabix::reheader::reheader(file, header, conf.meta_char(file), &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::NoBody { .. }) => {
            eprintln!("FIXME: No body in the file: {file}");
            ExitCode::from(1)
        }
        // tabix returns -1 from main here: exit status 255, no message.
        Err(Error::EmptyFirstBlock { .. }) => ExitCode::from(255),
        Err(e @ Error::HeaderFile { .. }) => failed(&e, &e.to_string()),
        Err(e) => failed(&e, &format!("hts tabix: {e}")),
    }
}

fn index(file: &str, conf: &Conf) -> ExitCode {
    let mut bad_line = |kind: &str, line: &[u8]| {
        eprintln!(
            "[E::get_intv] Failed to parse {kind}, was wrong -p [type] used?\n\
             The offending line was: \"{}\"",
            String::from_utf8_lossy(line)
        )
    };
    match tabix::build::index_file(file, conf, &mut bad_line) {
        Ok(()) => return ExitCode::SUCCESS,
        Err(BuildFailure::NotBgzf) => {
            eprintln!("[tabix] the compression of '{file}' is not BGZF")
        }
        Err(e) if e.while_building() => eprintln!("{e}\ntbx_index_build failed: {file}"),
        Err(e) => eprintln!("{e}"),
    }
    ExitCode::from(1)
}
