//! `hts bgzip [-c -d -f -k -l N -@ N -i -I FILE -r -g -t -b N -s N] [FILE]`: bgzip 1.16's
//! compression, decompression, testing and `.gzi` indexing, its modes picked by the options in
//! order as bgzip's loop picks them (`-b` and `-t` decompress, `-r` reindexes, `-t` after `-r`
//! tests). Blocks hold what bgzip's hold (65280 bytes of data each, the EOF marker last) at
//! htslib's levels, compressed on `-@` threads by `bgzf::Writer`.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use crate::bgzip_gzi as gzi;
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

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Opt {
    Stdout,
    Decompress,
    Force,
    Keep,
    Level,
    Threads,
    Index,
    IndexName,
    Reindex,
    Offset,
    Size,
    Rebgzip,
    Test,
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
    spec(Opt::Index, 'i', &["index"], Value::None),
    spec(Opt::IndexName, 'I', &["index-name"], Value::Required),
    spec(Opt::Reindex, 'r', &["reindex"], Value::None),
    spec(Opt::Offset, 'b', &["offset"], Value::Required),
    spec(Opt::Size, 's', &["size"], Value::Required),
    spec(Opt::Rebgzip, 'g', &["rebgzip"], Value::None),
    spec(Opt::Test, 't', &["test"], Value::None),
];

/// What bgzip's option loop leaves set.
#[derive(Default)]
struct Settings {
    compress: bool,
    stdout: bool,
    force: bool,
    keep: bool,
    level: i64,
    threads: usize,
    index: bool,
    index_name: Option<String>,
    reindex: bool,
    rebgzip: bool,
    test: bool,
    start: u64,
    /// Where decompression stops (`-b` + `-s`).
    end: Option<u64>,
}

impl Settings {
    fn from(options: &[getopt::Found<Opt>]) -> Result<Settings, String> {
        let mut s = Settings {
            compress: true,
            level: -1,
            threads: 1,
            ..Settings::default()
        };
        let (mut start, mut size) = (0i64, -1i64);
        for f in options {
            // atol / atoi, as bgzip reads its numbers.
            let n = f
                .value
                .as_deref()
                .map_or(0, |v| crate::numbers::strtol(v, 10).0);
            match f.id {
                Opt::Decompress => s.compress = false,
                Opt::Stdout => s.stdout = true,
                Opt::Offset => {
                    start = n;
                    s.compress = false;
                    s.stdout = true;
                }
                Opt::Size => {
                    size = n;
                    s.stdout = true;
                }
                Opt::Force => s.force = true,
                Opt::Index => s.index = true,
                Opt::IndexName => s.index_name = f.value.clone(),
                Opt::Level => s.level = n,
                Opt::Rebgzip => s.rebgzip = true,
                Opt::Reindex => {
                    s.reindex = true;
                    s.compress = false;
                }
                Opt::Threads => s.threads = usize::try_from(n as i32).unwrap_or(1),
                Opt::Test => {
                    s.test = true;
                    s.compress = false;
                    s.reindex = false;
                }
                Opt::Keep => s.keep = true,
            }
        }
        let end = (size >= 0).then(|| start.saturating_add(size));
        if end.is_some_and(|e| e < start) || start < 0 {
            return Err(format!("Illegal region: [{start}, {}]", end.unwrap_or(-1)));
        }
        s.start = start.unsigned_abs();
        s.end = end.map(i64::unsigned_abs);
        Ok(s)
    }
}

pub fn run(argv: &[String]) -> ExitCode {
    let parsed = match getopt::parse(SPECS, argv) {
        Ok(p) => p,
        Err(e) => {
            eprint!("hts bgzip: {e}\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    let s = match Settings::from(&parsed.options) {
        Ok(s) => s,
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
    let mut status = ExitCode::SUCCESS;
    for file in &files {
        let result = if s.compress {
            compress(file, &s)
        } else if s.reindex {
            reindex(file, &s)
        } else {
            decompress(file, &s)
        };
        if let Err(e) = result {
            eprintln!("[bgzip] {e}");
            status = ExitCode::from(1);
        }
    }
    status
}

fn compress(file: &str, s: &Settings) -> Result<(), String> {
    if !(-1..=9).contains(&s.level) {
        return Err(format!("Invalid compress-level: {}", s.level));
    }
    let stdin = file == "-";
    let mut input: Box<dyn Read> = if stdin {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(file).map_err(|e| format!("{}: {file}", strerror(&e)))?)
    };
    let out_name = (!stdin && !s.stdout).then(|| format!("{file}.gz"));
    if stdin && s.index && s.index_name.is_none() {
        return Err("Index file name expected when writing to stdout".into());
    }
    if s.index && s.rebgzip {
        return Err("Can't produce a index and rebgzip simultaneously".into());
    }
    let blocks = match (&s.index_name, s.rebgzip) {
        (None, true) => return Err("Index file name expected when writing to stdout".into()),
        (Some(n), true) => {
            Some(gzi::load(n).map_err(|e| format!("Could not load index: {file}.gzi ({e})"))?)
        }
        _ => None,
    };
    let output = create(out_name.as_deref(), s.force)?;
    let level = bgzf::writer::htslib_level(s.level);
    let mut w =
        bgzf::Writer::with_level(io::BufWriter::new(output), level).map_err(|e| e.to_string())?;
    if s.threads > 1 {
        w.set_threads(s.threads).map_err(|e| e.to_string())?;
    }
    let failed = |e: io::Error| {
        if let Some(n) = &out_name {
            let _ = std::fs::remove_file(n);
        }
        format!("write failed: {e}")
    };
    let starts = gzi::compress(&mut input, &mut w, blocks.as_deref()).map_err(failed)?;
    if s.index {
        let name = s
            .index_name
            .clone()
            .unwrap_or_else(|| format!("{file}.gz.gzi"));
        gzi::dump(&name, &starts)?;
    }
    let mut inner = w.finish().map_err(failed)?;
    inner.flush().map_err(failed)?;
    if out_name.is_some() && !s.keep {
        std::fs::remove_file(file).map_err(|e| format!("cannot remove {file}: {e}"))?;
    }
    Ok(())
}

/// The output file, refused when it exists unless forced (no terminal to ask on), or
/// standard output.
fn create(name: Option<&str>, force: bool) -> Result<Box<dyn Write>, String> {
    let Some(n) = name else {
        // Descriptor 1 itself: std's stdout is line-buffered, which cut each block's text in
        // two writes at its last newline.
        use std::os::fd::AsFd;
        return io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map(|fd| Box::new(File::from(fd)) as Box<dyn Write>)
            .map_err(|e| format!("standard output: {}", strerror(&e)));
    };
    if !force && Path::new(n).exists() {
        return Err(format!("can't create {n}: File exists"));
    }
    File::create(n)
        .map(|f| Box::new(f) as Box<dyn Write>)
        .map_err(|e| format!("can't create {n}: {}", strerror(&e)))
}

/// A BGZF file to seek in; standard input only when it is a file (a pipe cannot be read twice).
fn open_bgzf(file: &str) -> Result<bgzf::Reader<hfile::HFile>, String> {
    let name = if file == "-" { "/dev/stdin" } else { file };
    if file == "-" && !std::fs::metadata(name).is_ok_and(|m| m.is_file()) {
        return Err("standard input must be a file to index or seek in".into());
    }
    let src = hfile::open(name, &Default::default())
        .map_err(|e| format!("Could not open {file}: {e}"))?;
    bgzf::Reader::with_name(src, file).map_err(|e| e.to_string())
}

fn reindex(file: &str, s: &Settings) -> Result<(), String> {
    if file == "-" && s.index_name.is_none() {
        return Err("Index file name expected when reading from stdin".into());
    }
    let mut data = open_bgzf(file)?;
    if data.format() != bgzf::Format::Bgzf {
        return Err("Is the file gzipped or bgzipped? The latter is required for indexing.".into());
    }
    let starts = gzi::reindex(&mut data).map_err(|e| {
        format!("{e}\nIs the file gzipped or bgzipped? The latter is required for indexing.")
    })?;
    let name = s
        .index_name
        .clone()
        .unwrap_or_else(|| format!("{file}.gzi"));
    gzi::dump(&name, &starts)
}

/// The name `-d` writes to: the input's without its last extension, which must be bgzip's.
fn decompressed_name(file: &str, force: bool) -> Result<String, String> {
    let base = match file.rfind(['.', '/']) {
        Some(p) if p > 0 && file.as_bytes()[p] == b'.' => p,
        _ => {
            return Err(format!(
                "can't remove an extension from {file} -- please rename"
            ))
        }
    };
    let (name, ext) = (&file[..base], &file[base + 1..]);
    let known = ["gz", "bgz", "bgzf"]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(ext));
    if !known && !force {
        return Err(format!(
            "unknown extension .{ext} -- declining to decompress to {name}"
        ));
    }
    Ok(name.to_string())
}

fn decompress(file: &str, s: &Settings) -> Result<(), String> {
    let stdin = file == "-";
    let out_name = match !stdin && !s.stdout && !s.test {
        true => Some(decompressed_name(file, s.force)?),
        false => None,
    };
    let mut input: Box<dyn Read> = if s.start > 0 {
        let index = match (&s.index_name, stdin) {
            (Some(n), _) => n.clone(),
            (None, true) => {
                return Err("The -b option requires -I when reading from stdin \
                            (and stdin must be seekable)"
                    .into())
            }
            (None, false) => format!("{file}.gzi"),
        };
        let mut data = open_bgzf(file)?;
        let starts = gzi::load(&index).map_err(|e| format!("Could not load index: {e}"))?;
        let wants = s.end != Some(s.start);
        seek(&mut data, &starts, s.start, wants)?;
        Box::new(data)
    } else if stdin {
        Box::new(bgzf::BlockStream::new("stdin", io::stdin().lock()))
    } else {
        let mut data = open_bgzf(file)?;
        if data.format() == bgzf::Format::Raw {
            return Err(format!("{file}: not a compressed file -- ignored"));
        }
        if s.threads > 1 {
            data.set_threads(s.threads);
        }
        Box::new(data)
    };
    let mut output = match s.test {
        true => Box::new(io::sink()),
        false => create(out_name.as_deref(), s.force)?,
    };
    let limit = s.end.map(|e| e - s.start);
    let result = copy(&mut input, &mut output, limit, file)
        .and_then(|()| output.flush().map_err(|e| format!("Could not write: {e}")));
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

/// `bgzf_useek`: to the block the index places `at` in, then into it. An offset at the end
/// of the data is an error when bytes are wanted (htslib's next read fails), one past it
/// always (htslib asserts).
fn seek(
    data: &mut bgzf::Reader<hfile::HFile>,
    starts: &[(u64, u64)],
    at: u64,
    wants: bool,
) -> Result<(), String> {
    let (coffset, within) = gzi::locate(starts, at);
    let fail = || format!("Could not seek to {at}-th (uncompressd) byte");
    data.seek(bgzf::VirtualOffset::new(coffset, 0))
        .map_err(|_| fail())?;
    let mut left = within;
    while left > 0 {
        let n = data.fill_block().map_err(|e| e.to_string())?.len();
        if n == 0 {
            return Err(fail());
        }
        let take = n.min(usize::try_from(left).unwrap_or(usize::MAX));
        data.advance(take);
        left -= take as u64;
    }
    if wants && data.fill_block().map_err(|e| e.to_string())?.is_empty() {
        return Err(format!("BGZF block offset set beyond the data at {at}"));
    }
    Ok(())
}

/// Copies decompressed data to `out`, `limit` bytes at most (a closed pipe ends it quietly).
fn copy(
    input: &mut dyn Read,
    out: &mut dyn Write,
    limit: Option<u64>,
    file: &str,
) -> Result<(), String> {
    let mut input = input.take(limit.unwrap_or(u64::MAX));
    let mut buf = vec![0u8; 1 << 16];
    loop {
        // A read ends at a block's end: the buffer is filled first, so that each write into a
        // pipe is a whole 64 KiB as bgzip's are (half as many writes and wake-ups of the reader).
        let mut n = 0;
        while n < buf.len() {
            match input.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("{file}: {e}")),
            }
        }
        if n == 0 {
            return Ok(());
        }
        match out.write_all(&buf[..n]) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(format!("Could not write {n} bytes: {e}")),
            Ok(()) => {}
        }
    }
}

/// The C library's text for an I/O error (`strerror`), without Rust's "(os error N)".
fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    s.split(" (os error").next().unwrap_or(&s).to_string()
}
