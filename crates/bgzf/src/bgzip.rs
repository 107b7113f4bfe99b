//! bgzip 1.16's work on one file: compression (with `-i`'s `.gzi`, or `-g`'s blocks),
//! decompression (whole, or `-b`/`-s`'s range through the `.gzi`), `-t`'s test and `-r`'s
//! reindexing, in the mode [`Options`] picks as bgzip's loop picks it. Blocks hold what
//! bgzip's hold (65280 bytes of data each, the EOF marker last) at htslib's levels, compressed
//! on `threads` threads. Failures are [`Error`]s whose text is bgzip's message.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use hfile::HFile;

pub use crate::bgzip_error::Failure;
use crate::{gzi, Error, Reader};

/// The uncompressed size of a block past the end of a `-g` index (`BGZF_MAX_BLOCK_SIZE`;
/// this writer's blocks hold at most 65280 bytes, so such a tail is cut there instead).
const TAIL_BLOCK: u64 = 0x10000;

/// What bgzip's option loop leaves set. The file name `-` is standard input.
#[derive(Clone, Debug)]
pub struct Options {
    /// Compress (the default); else decompress, test or reindex.
    pub compress: bool,
    /// `-c` (and `-b`, `-s`): write to the output given, keep the input.
    pub stdout: bool,
    /// `-f`: overwrite an existing output.
    pub force: bool,
    /// `-k`: keep the input file.
    pub keep: bool,
    /// `-l`: -1 (htslib's default) to 9.
    pub level: i64,
    /// `-@`.
    pub threads: usize,
    /// `-i`: write a `.gzi` while compressing.
    pub index: bool,
    /// `-I`: the `.gzi`'s name.
    pub index_name: Option<String>,
    /// `-r`: rebuild the `.gzi` of a compressed file.
    pub reindex: bool,
    /// `-g`: recompress along the blocks of the `-I` index.
    pub rebgzip: bool,
    /// `-t`: decompress to nowhere.
    pub test: bool,
    /// `-b`: where decompression starts (uncompressed).
    pub start: u64,
    /// Where decompression stops (`-b` + `-s`).
    pub end: Option<u64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            compress: true,
            stdout: false,
            force: false,
            keep: false,
            level: -1,
            threads: 1,
            index: false,
            index_name: None,
            reindex: false,
            rebgzip: false,
            test: false,
            start: 0,
            end: None,
        }
    }
}

impl Options {
    /// The options bgzip's loop leaves set after `found`, in the order given: each option's
    /// letter (`-c -d -f -k -l -@ -i -I -r -b -s -g -t`), its value, and the value's number
    /// as C's `atol` reads it (the command line's parsing).
    ///
    /// # Errors
    /// [`Failure::IllegalRegion`]: `-b` is negative, or `-s` makes the range end before it.
    pub fn from_flags<'a>(
        found: impl IntoIterator<Item = (char, Option<&'a str>, i64)>,
    ) -> Result<Options, Error> {
        let mut s = Options::default();
        let (mut start, mut size) = (0i64, -1i64);
        for (letter, value, n) in found {
            match letter {
                'd' => s.compress = false,
                'c' => s.stdout = true,
                'b' => {
                    start = n;
                    s.compress = false;
                    s.stdout = true;
                }
                's' => {
                    size = n;
                    s.stdout = true;
                }
                'f' => s.force = true,
                'i' => s.index = true,
                'I' => s.index_name = value.map(str::to_string),
                'l' => s.level = n,
                'g' => s.rebgzip = true,
                'r' => {
                    s.reindex = true;
                    s.compress = false;
                }
                '@' => s.threads = usize::try_from(n as i32).unwrap_or(1),
                't' => {
                    s.test = true;
                    s.compress = false;
                    s.reindex = false;
                }
                'k' => s.keep = true,
                _ => {}
            }
        }
        let end = (size >= 0).then(|| start.saturating_add(size));
        if end.is_some_and(|e| e < start) || start < 0 {
            return Err(Failure::IllegalRegion(start, end.unwrap_or(-1)).into());
        }
        s.start = start.unsigned_abs();
        s.end = end.map(i64::unsigned_abs);
        Ok(s)
    }
}

/// Does to `file` what `o` says; what goes to standard output (`-c`, `-b`, `-s`, or input
/// from standard input) goes to `stdout`.
///
/// # Errors
/// bgzip's refusals and failures, as [`Error`]s whose text is bgzip's message.
pub fn run(file: &str, o: &Options, stdout: &mut dyn Write) -> Result<(), Error> {
    if o.compress {
        compress(file, o, stdout)
    } else if o.reindex {
        reindex(file, o)
    } else {
        decompress(file, o, stdout)
    }
}

fn compress(file: &str, o: &Options, stdout: &mut dyn Write) -> Result<(), Error> {
    use crate::bgzip_error::Failure as B;
    if !(-1..=9).contains(&o.level) {
        return Err(B::Level(o.level).into());
    }
    let stdin = file == "-";
    let mut input: Box<dyn Read> = if stdin {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(file).map_err(|e| B::Open(file.into(), e))?)
    };
    let out_name = (!stdin && !o.stdout).then(|| format!("{file}.gz"));
    if stdin && o.index && o.index_name.is_none() {
        return Err(B::NoIndexNameWriting.into());
    }
    if o.index && o.rebgzip {
        return Err(B::IndexAndRebgzip.into());
    }
    let blocks = match (&o.index_name, o.rebgzip) {
        (None, true) => return Err(B::NoIndexNameWriting.into()),
        (Some(n), true) => Some(gzi::read(n).map_err(|e| B::LoadIndex {
            named: Some(format!("{file}.gzi")),
            source: Box::new(e),
        })?),
        _ => None,
    };
    let output = create(out_name.as_deref(), o.force, stdout)?;
    let level = crate::writer::htslib_level(o.level);
    let mut w = crate::Writer::with_level(io::BufWriter::new(output), level)?;
    if o.threads > 1 {
        w.set_threads(o.threads).map_err(B::Threads)?;
    }
    let failed = |e: io::Error| {
        if let Some(n) = &out_name {
            let _ = std::fs::remove_file(n);
        }
        Error::from(B::Write(e))
    };
    let starts = write_blocks(&mut input, &mut w, blocks.as_deref()).map_err(failed)?;
    if o.index {
        let name = o
            .index_name
            .clone()
            .unwrap_or_else(|| format!("{file}.gz.gzi"));
        gzi::write(&name, &starts)?;
    }
    let mut inner = w.finish().map_err(failed)?;
    inner.flush().map_err(failed)?;
    if out_name.is_some() && !o.keep {
        std::fs::remove_file(file).map_err(|e| B::Remove(file.into(), e))?;
    }
    Ok(())
}

/// Compresses `input` into `w` as bgzip does and returns the block starts (for `-i`); with
/// `blocks` (`-g`), each block holds what that index's block held.
fn write_blocks<W: Write>(
    input: &mut dyn Read,
    w: &mut crate::Writer<W>,
    blocks: Option<&[(u64, u64)]>,
) -> io::Result<gzi::Starts> {
    let Some(blocks) = blocks else {
        io::copy(input, w)?;
        return gzi::from_writer(w);
    };
    let mut buf = Vec::new();
    for i in 0.. {
        let size = match (blocks.get(i), blocks.get(i + 1)) {
            (Some(a), Some(b)) => b.1.saturating_sub(a.1),
            _ => TAIL_BLOCK,
        };
        buf.clear();
        let got = input.take(size).read_to_end(&mut buf)?;
        w.write_all(&buf)?;
        w.flush_block()?;
        if (got as u64) < size {
            break;
        }
    }
    Ok(Vec::new())
}

/// The output file, refused when it exists unless forced (no terminal to ask on), or
/// `stdout`.
fn create<'a>(
    name: Option<&str>,
    force: bool,
    stdout: &'a mut dyn Write,
) -> Result<Box<dyn Write + 'a>, Error> {
    use crate::bgzip_error::Failure as B;
    let Some(n) = name else {
        return Ok(Box::new(stdout));
    };
    if !force && Path::new(n).exists() {
        return Err(B::Create(n.into(), None).into());
    }
    File::create(n)
        .map(|f| Box::new(f) as Box<dyn Write>)
        .map_err(|e| B::Create(n.into(), Some(e)).into())
}

/// A BGZF file to seek in; standard input only when it is a file (a pipe cannot be read twice).
fn open_bgzf(file: &str) -> Result<Reader<HFile>, Error> {
    use crate::bgzip_error::Failure as B;
    let name = if file == "-" { "/dev/stdin" } else { file };
    if file == "-" && !std::fs::metadata(name).is_ok_and(|m| m.is_file()) {
        return Err(B::StdinNotFile.into());
    }
    let src = hfile::open(name, &Default::default()).map_err(|e| B::OpenData(file.into(), e))?;
    Reader::with_name(src, file)
}

fn reindex(file: &str, o: &Options) -> Result<(), Error> {
    use crate::bgzip_error::Failure as B;
    if file == "-" && o.index_name.is_none() {
        return Err(B::NoIndexNameReading.into());
    }
    let mut data = open_bgzf(file)?;
    if data.format() != crate::Format::Bgzf {
        return Err(B::NotBgzf(None).into());
    }
    let starts = gzi::rebuild(&mut data).map_err(|e| B::NotBgzf(Some(Box::new(e))))?;
    let name = o
        .index_name
        .clone()
        .unwrap_or_else(|| format!("{file}.gzi"));
    gzi::write(&name, &starts)
}

/// The name `-d` writes to: the input's without its last extension, which must be bgzip's.
fn decompressed_name(file: &str, force: bool) -> Result<String, Error> {
    use crate::bgzip_error::Failure as B;
    let base = match file.rfind(['.', '/']) {
        Some(p) if p > 0 && file.as_bytes()[p] == b'.' => p,
        _ => return Err(B::NoExtension(file.into()).into()),
    };
    let (name, ext) = (&file[..base], &file[base + 1..]);
    let known = ["gz", "bgz", "bgzf"]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(ext));
    if !known && !force {
        return Err(B::UnknownExtension(ext.into(), name.into()).into());
    }
    Ok(name.to_string())
}

fn decompress(file: &str, o: &Options, stdout: &mut dyn Write) -> Result<(), Error> {
    use crate::bgzip_error::Failure as B;
    let stdin = file == "-";
    let out_name = match !stdin && !o.stdout && !o.test {
        true => Some(decompressed_name(file, o.force)?),
        false => None,
    };
    let mut input: Box<dyn Read> = if o.start > 0 {
        let index = match (&o.index_name, stdin) {
            (Some(n), _) => n.clone(),
            (None, true) => return Err(B::SeekNeedsIndex.into()),
            (None, false) => format!("{file}.gzi"),
        };
        let mut data = open_bgzf(file)?;
        let starts = gzi::read(&index).map_err(|e| B::LoadIndex {
            named: None,
            source: Box::new(e),
        })?;
        let wants = o.end != Some(o.start);
        seek(&mut data, &starts, o.start, wants)?;
        Box::new(data)
    } else if stdin {
        Box::new(crate::BlockStream::new("stdin", io::stdin().lock()))
    } else {
        let mut data = open_bgzf(file)?;
        if data.format() == crate::Format::Raw {
            return Err(B::NotCompressed(file.into()).into());
        }
        if o.threads > 1 {
            data.set_threads(o.threads);
        }
        Box::new(data)
    };
    let mut output = match o.test {
        true => Box::new(io::sink()),
        false => create(out_name.as_deref(), o.force, stdout)?,
    };
    let limit = o.end.map(|e| e - o.start);
    let result = copy(&mut input, &mut output, limit, file)
        .and_then(|()| output.flush().map_err(|e| B::Flush(e).into()));
    if let Err(e) = result {
        if let Some(n) = &out_name {
            let _ = std::fs::remove_file(n);
        }
        return Err(e);
    }
    if out_name.is_some() && !o.keep {
        std::fs::remove_file(file).map_err(|e| B::Remove(file.into(), e))?;
    }
    Ok(())
}

/// `bgzf_useek`: to the block the index places `at` in, then into it. An offset at the end
/// of the data is an error when bytes are wanted (htslib's next read fails), one past it
/// always (htslib asserts).
fn seek(
    data: &mut Reader<HFile>,
    starts: &[(u64, u64)],
    at: u64,
    wants: bool,
) -> Result<(), Error> {
    use crate::bgzip_error::Failure as B;
    let (coffset, within) = gzi::locate(starts, at);
    data.seek(crate::VirtualOffset::new(coffset, 0))
        .map_err(|_| B::Seek(at))?;
    let mut left = within;
    while left > 0 {
        let n = data.fill_block()?.len();
        if n == 0 {
            return Err(B::Seek(at).into());
        }
        let take = n.min(usize::try_from(left).unwrap_or(usize::MAX));
        data.advance(take);
        left -= take as u64;
    }
    if wants && data.fill_block()?.is_empty() {
        return Err(B::SeekBeyond(at).into());
    }
    Ok(())
}

/// Copies decompressed data to `out`, `limit` bytes at most (a closed pipe ends it quietly).
fn copy(
    input: &mut dyn Read,
    out: &mut dyn Write,
    limit: Option<u64>,
    file: &str,
) -> Result<(), Error> {
    use crate::bgzip_error::Failure as B;
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
                Err(e) => return Err(B::Read(file.into(), e).into()),
            }
        }
        if n == 0 {
            return Ok(());
        }
        match out.write_all(&buf[..n]) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(B::WriteBytes(n, e).into()),
            Ok(()) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_apply_in_order_as_bgzips_loop() {
        let o = Options::from_flags([('r', None, 0), ('t', None, 0)]).unwrap();
        assert!(o.test && !o.reindex && !o.compress);
        let o = Options::from_flags([('b', Some("10"), 10), ('s', Some("5"), 5)]).unwrap();
        assert_eq!(
            (o.start, o.end, o.stdout, o.compress),
            (10, Some(15), true, false)
        );
        let e = Options::from_flags([('b', Some("-3"), -3)]).unwrap_err();
        assert_eq!(e.to_string(), "Illegal region: [-3, -1]");
    }

    #[test]
    fn decompressed_names_keep_bgzips_rules() {
        assert_eq!(decompressed_name("a.b.GZ", false).unwrap(), "a.b");
        let e = decompressed_name("dir.x/file", false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "can't remove an extension from dir.x/file -- please rename"
        );
        let e = decompressed_name("a.foo", false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown extension .foo -- declining to decompress to a"
        );
        assert_eq!(decompressed_name("a.foo", true).unwrap(), "a");
    }
}
