//! A FASTA reference with its `.fai` index (made in memory for a local file that has none, as
//! htslib builds one), plain or bgzipped with its `.gzi`, local or remote: the bases of a range
//! read straight from their lines, upper-cased and with line ends left out, as htslib's
//! `load_ref_portion` reads them. Only the bytes of those lines are read (for a bgzipped file,
//! the blocks that hold them): a remote file is asked for exactly that range.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, SeekFrom};
use std::path::Path;

use crate::remote::Remote;
use crate::Error;

/// One sequence's `.fai` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaiEntry {
    /// The sequence's length in bases.
    pub length: u64,
    /// The byte offset of its first base.
    pub offset: u64,
    /// Bases on each line.
    pub line_bases: u64,
    /// Bytes of each line, the line end included.
    pub line_width: u64,
}

/// The longest range read at once (a slice's span; whole references of multi-reference slices).
const MAX_RANGE: u64 = 1 << 31;

/// A FASTA file with its `.fai` (plain, or bgzipped with its `.gzi`).
pub struct Fasta {
    /// The file's path or URL, for messages.
    path: String,
    body: Body,
    entries: HashMap<Vec<u8>, FaiEntry>,
    /// Read through a transport ([`Fasta::open_remote`]): each fetch is a request.
    remote: bool,
}

impl std::fmt::Debug for Fasta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fasta({})", self.path)
    }
}

/// The file's bytes: as they are, or BGZF blocks found through the `.gzi` (pairs of compressed
/// and uncompressed block starts).
enum Body {
    Plain(Box<dyn bgzf::Source + Send>),
    Bgzf {
        src: Box<dyn bgzf::Source + Send>,
        /// The `.gzi`'s block starts, (0, 0) first.
        gzi: bgzf::gzi::Starts,
    },
}

impl Fasta {
    /// Opens `path` and its `path.fai` (or indexes the file when there is none).
    pub fn open(path: &Path) -> Result<Fasta, String> {
        let name = path.display();
        let mut file = File::open(path).map_err(|e| format!("{name}: {e}"))?;
        let mut magic = [0u8; 2];
        let n = file.read(&mut magic).map_err(|e| format!("{name}: {e}"))?;
        let fai = format!("{}.fai", path.display());
        let compressed = n == 2 && magic == [0x1f, 0x8b];
        let entries = match std::fs::read(&fai) {
            Ok(text) => parse_fai(&text).map_err(|e| format!("{fai}: {e}"))?,
            Err(_) if compressed => {
                return Err(format!(
                    "{name}: a compressed reference needs its .fai and .gzi"
                ))
            }
            Err(_) => build_fai(&std::fs::read(path).map_err(|e| format!("{name}: {e}"))?)
                .map_err(|e| format!("{name}: {e}"))?,
        };
        let body = if compressed {
            let gzi_path = format!("{}.gzi", path.display());
            let gzi = bgzf::gzi::read(&gzi_path).map_err(|e| e.to_string())?;
            Body::Bgzf {
                src: Box::new(file),
                gzi,
            }
        } else {
            Body::Plain(Box::new(file))
        };
        Ok(Fasta {
            path: path.display().to_string(),
            body,
            entries,
            remote: false,
        })
    }

    /// A FASTA at `url`, with its `.fai` beside it (and its `.gzi` when bgzipped), read
    /// through `remote`: the index files whole, then only the bytes of the bases asked for.
    pub fn open_remote(url: &str, remote: &dyn Remote) -> Result<Fasta, String> {
        let shown = redact(url);
        let fetch = |u: &str, range| -> Result<Vec<u8>, String> {
            remote
                .fetch(u, range)
                .map_err(|e| format!("{}: {e}", redact(u)))?
                .ok_or_else(|| format!("{}: not found", redact(u)))
        };
        let fai_url = hfile::add_extension(url, ".fai");
        let entries =
            parse_fai(&fetch(&fai_url, None)?).map_err(|e| format!("{}: {e}", redact(&fai_url)))?;
        let magic = fetch(url, Some(0..2))?;
        let src = remote.open(url).map_err(|e| format!("{shown}: {e}"))?;
        let body = if magic == [0x1f, 0x8b] {
            let gzi_url = hfile::add_extension(url, ".gzi");
            let gzi = fetch(&gzi_url, None)?;
            Body::Bgzf {
                src,
                gzi: bgzf::gzi::parse(&redact(&gzi_url), &gzi).map_err(|e| e.to_string())?,
            }
        } else {
            Body::Plain(src)
        };
        Ok(Fasta {
            path: shown,
            body,
            entries,
            remote: true,
        })
    }

    /// One sequence's bare bases held in memory (fetched from an MD5 server), as sequence
    /// `name`; `label` names where they came from.
    pub fn in_memory(label: &str, name: &[u8], bases: Vec<u8>) -> Fasta {
        let entry = FaiEntry {
            length: bases.len() as u64,
            offset: 0,
            line_bases: 0,
            line_width: 0,
        };
        Fasta {
            path: label.to_string(),
            body: Body::Plain(Box::new(std::io::Cursor::new(bases))),
            entries: HashMap::from([(name.to_vec(), entry)]),
            remote: false,
        }
    }

    /// A file holding one sequence's bare bases (a `REF_CACHE` file), as sequence `name`.
    pub fn bare(path: &Path, name: &[u8]) -> Result<Fasta, String> {
        let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let length = file
            .metadata()
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        let entry = FaiEntry {
            length,
            offset: 0,
            line_bases: 0,
            line_width: 0,
        };
        Ok(Fasta {
            path: path.display().to_string(),
            body: Body::Plain(Box::new(file)),
            entries: HashMap::from([(name.to_vec(), entry)]),
            remote: false,
        })
    }

    /// Whether the bases come through a transport (each fetch a request), not from a file.
    pub fn is_remote(&self) -> bool {
        self.remote
    }

    /// The `.fai` line of sequence `name`.
    pub fn entry(&self, name: &[u8]) -> Option<&FaiEntry> {
        self.entries.get(name)
    }

    /// Bases `start..=end` (1-based) of sequence `name`, upper-cased.
    pub fn fetch(&mut self, name: &[u8], start: u64, end: u64) -> Result<Vec<u8>, Error> {
        let what = |e: String| {
            Error::at(
                0,
                format!(
                    "reference {} in {}: {e}",
                    String::from_utf8_lossy(name),
                    self.path
                ),
            )
        };
        let e = self
            .entries
            .get(name)
            .cloned()
            .ok_or_else(|| what("not in the FASTA index".to_string()))?;
        let start = start.max(1);
        let end = end.max(start);
        if end - start >= MAX_RANGE {
            return Err(what(format!("range {start}-{end} too long")));
        }
        // Where base `p` lies in the file (saturating: a hostile index only makes a short read).
        let place = |p: u64| match (p - 1).checked_div(e.line_bases) {
            None => e.offset.saturating_add(p - 1),
            Some(line) => e
                .offset
                .saturating_add(line.saturating_mul(e.line_width))
                .saturating_add((p - 1) % e.line_bases),
        };
        let from = place(start);
        let len = place(end).saturating_sub(from).saturating_add(1);
        let raw = self.body.read_at(from, len).map_err(what)?;
        if raw.len() as u64 != len {
            return Err(what(format!("file ends inside {start}-{end}")));
        }
        let first_col = (start - 1).checked_rem(e.line_bases).unwrap_or(0);
        let bases = lines_as_laid_out(&raw, e.line_bases, e.line_width, first_col)
            .unwrap_or_else(|| printable_upper(&raw));
        if bases.len() as u64 != end - start + 1 {
            return Err(what("malformed reference file".to_string()));
        }
        Ok(bases)
    }
}

/// The bases of `raw` (starting `first_col` bases into a line of `line_bases`, each line
/// `line_width` bytes with its end) upper-cased, copied a line at a time; `None` unless every
/// line's bases are printable and every line end is not, where [`printable_upper`] gives the
/// same bases byte by byte. A slice's span is read whole for its MD5, so this runs over every
/// base of it: the bases are checked by counting the bytes that are not printable in one
/// pass (which the compiler vectorises; a test a line stopping at the first bad byte costs
/// three instructions a base), which must be the line ends' bytes, each checked where it is.
fn lines_as_laid_out(
    raw: &[u8],
    line_bases: u64,
    line_width: u64,
    first_col: u64,
) -> Option<Vec<u8>> {
    let bases = usize::try_from(line_bases).ok().filter(|&b| b > 0)?;
    let width = usize::try_from(line_width).ok().filter(|&w| w >= bases)?;
    let first_col = usize::try_from(first_col).ok().filter(|&c| c < bases)?;
    let printable = |b: u8| b.wrapping_sub(b'!') <= b'~' - b'!';
    let mut out = Vec::with_capacity(raw.len());
    let mut at = 0;
    let mut take = bases - first_col;
    let mut ends = 0;
    while at < raw.len() {
        let line = &raw[at..raw.len().min(at + take)];
        out.extend_from_slice(line);
        at += line.len();
        let eol = &raw[at..raw.len().min(at + (width - bases))];
        if eol.iter().any(|&b| printable(b)) {
            return None;
        }
        ends += eol.len();
        at += eol.len();
        take = bases;
    }
    if unprintable(raw) != ends {
        return None;
    }
    out.make_ascii_uppercase();
    Some(out)
}

/// How many bytes of `raw` are not printable: counted in byte lanes, 255 bytes at a time (a
/// count in `usize`s, as `filter().count()` keeps it, costs six instructions a byte).
fn unprintable(raw: &[u8]) -> usize {
    raw.chunks(255)
        .map(|chunk| {
            let n = chunk.iter().fold(0u8, |n, &b| {
                n.wrapping_add(u8::from(b.wrapping_sub(b'!') > b'~' - b'!'))
            });
            usize::from(n)
        })
        .sum()
}

/// The printable bytes of `raw`, upper-cased: what is left of a FASTA's lines without their
/// ends, whatever their layout.
fn printable_upper(raw: &[u8]) -> Vec<u8> {
    raw.iter()
        .filter(|b| (b'!'..=b'~').contains(*b))
        .map(u8::to_ascii_uppercase)
        .collect()
}

impl Body {
    /// Up to `len` bytes from uncompressed offset `from` (fewer at the end of the data).
    fn read_at(&mut self, from: u64, len: u64) -> Result<Vec<u8>, String> {
        match self {
            Body::Plain(src) => exact(src.as_mut(), from, Some(from.saturating_add(len))),
            Body::Bgzf { src, gzi } => {
                // The blocks from the last starting at or before `from` to the first (but the
                // implicit (0, 0)) starting at or past the range's end.
                let (c, within) = bgzf::gzi::locate(gzi, from);
                let u = from - within;
                let within = u16::try_from(within)
                    .map_err(|_| format!("the .gzi has no block near offset {from}"))?;
                // Past the last block the `.gzi` names, its end is unknown: bgzip's blocks
                // hold 65280 bytes in at most 65536, so ask for that much, and for the rest of
                // the file only if other blocks fall short.
                let end = from.saturating_add(len);
                let c_end = gzi
                    .iter()
                    .skip(1)
                    .find(|&&(_, u)| u >= end)
                    .map(|&(c, _)| c);
                let guess = (end - u).div_ceil(BGZIP_BLOCK_DATA) + 1;
                let c_guess = c_end.unwrap_or(c.saturating_add(guess.saturating_mul(MAX_BLOCK)));
                let raw = inflate(exact(src.as_mut(), c, Some(c_guess))?, within, len);
                match raw {
                    Ok(raw) if raw.len() as u64 >= len || c_end.is_some() => Ok(raw),
                    Err(e) if c_end.is_some() => Err(e),
                    _ => inflate(exact(src.as_mut(), c, None)?, within, len),
                }
            }
        }
    }
}

/// Bytes a block of bgzip's holds, and the most a BGZF block takes.
const BGZIP_BLOCK_DATA: u64 = 65280;
const MAX_BLOCK: u64 = 65536;

/// `len` bytes from offset `within` of the first of `blocks` (BGZF blocks, whole).
fn inflate(blocks: Vec<u8>, within: u16, len: u64) -> Result<Vec<u8>, String> {
    let mut reader = bgzf::Reader::new(std::io::Cursor::new(blocks)).map_err(|e| e.to_string())?;
    reader
        .seek(bgzf::VirtualOffset::new(0, within))
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    reader
        .take(len)
        .read_to_end(&mut raw)
        .map_err(|e| e.to_string())?;
    Ok(raw)
}

/// Bytes `from..end` of `src` (to its end when `end` is `None` or past it), asked for as
/// exactly that range; read in pieces, so that a range an index lies about costs only what
/// the file holds.
fn exact(src: &mut dyn bgzf::Source, from: u64, end: Option<u64>) -> Result<Vec<u8>, String> {
    if let Some(end) = end {
        src.set_readahead_limit(Some(end));
        src.advise(std::slice::from_ref(&(from..end)));
    } else {
        src.set_readahead_limit(None);
    }
    src.seek(SeekFrom::Start(from)).map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    src.take(end.map_or(u64::MAX, |e| e.saturating_sub(from)))
        .read_to_end(&mut raw)
        .map_err(|e| e.to_string())?;
    Ok(raw)
}

/// A URL without its query string (which may hold a signature), for messages.
fn redact(url: &str) -> String {
    url.split_once('?').map_or(url, |(p, _)| p).to_string()
}

fn parse_fai(text: &[u8]) -> Result<HashMap<Vec<u8>, FaiEntry>, String> {
    let mut out = HashMap::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
        let num = |k: usize| -> Result<u64, String> {
            f.get(k)
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| format!("line {}: bad field {}", i + 1, k + 1))
        };
        let e = FaiEntry {
            length: num(1)?,
            offset: num(2)?,
            line_bases: num(3)?,
            line_width: num(4)?,
        };
        out.insert(f[0].to_vec(), e);
    }
    Ok(out)
}

/// The index `samtools faidx` would write, made from the file's bytes.
fn build_fai(data: &[u8]) -> Result<HashMap<Vec<u8>, FaiEntry>, String> {
    let mut out = HashMap::new();
    let mut at = 0usize;
    let mut current: Option<(Vec<u8>, FaiEntry)> = None;
    let mut last_short = false;
    while at < data.len() {
        let end = data[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(data.len(), |p| at + p + 1);
        let line = &data[at..end];
        if line.first() == Some(&b'>') {
            if let Some((n, e)) = current.take() {
                out.insert(n, e);
            }
            let name: Vec<u8> = line[1..]
                .iter()
                .take_while(|b| !b.is_ascii_whitespace())
                .copied()
                .collect();
            current = Some((
                name,
                FaiEntry {
                    length: 0,
                    offset: end as u64,
                    line_bases: 0,
                    line_width: 0,
                },
            ));
            last_short = false;
        } else if let Some((_, e)) = current.as_mut() {
            let bases = line.iter().filter(|b| !b.is_ascii_whitespace()).count() as u64;
            if bases > 0 {
                if last_short {
                    return Err("lines of different lengths in one sequence".to_string());
                }
                if e.line_bases == 0 {
                    e.line_bases = bases;
                    e.line_width = line.len() as u64;
                } else if bases != e.line_bases {
                    last_short = true;
                }
                e.length += bases;
            }
        }
        at = end;
    }
    if let Some((n, e)) = current {
        out.insert(n, e);
    }
    Ok(out)
}

#[cfg(test)]
mod layout_tests {
    use super::{lines_as_laid_out, printable_upper};

    #[test]
    fn lines_copied_whole_give_the_bases_filtered_byte_by_byte() {
        // 4 bases a line with "\n", then with "\r\n"; starting 1 and 3 bases into a line.
        let lf = b"ACgt\nNNac\nTG".to_vec();
        assert_eq!(
            lines_as_laid_out(&lf, 4, 5, 0),
            Some(b"ACGTNNACTG".to_vec())
        );
        assert_eq!(
            lines_as_laid_out(&lf[3..], 4, 5, 3),
            Some(b"TNNACTG".to_vec())
        );
        let crlf = b"acgt\r\nACGT\r\nA".to_vec();
        assert_eq!(
            lines_as_laid_out(&crlf, 4, 6, 0),
            printable_upper(&crlf).into()
        );
        // Ending on a line end.
        assert_eq!(
            lines_as_laid_out(b"ACGT\n", 4, 5, 0),
            Some(b"ACGT".to_vec())
        );
    }

    #[test]
    fn a_file_not_laid_out_as_its_index_says_is_left_to_the_filter() {
        // A short line: its end falls among the bases, and a base among the line ends.
        assert_eq!(lines_as_laid_out(b"ACG\nTACGT\n", 4, 5, 0), None);
        assert_eq!(printable_upper(b"ACG\nTACGT\n"), b"ACGTACGT".to_vec());
        // No line structure at all.
        assert_eq!(lines_as_laid_out(b"ACGT", 0, 0, 0), None);
        // A byte among the bases that is not one (a tab, a space), the line ends in place.
        assert_eq!(lines_as_laid_out(b"AC\tT\nACGT\n", 4, 5, 0), None);
        assert_eq!(lines_as_laid_out(b"ACGT\nA GT", 4, 5, 0), None);
        assert_eq!(printable_upper(b"AC\tT\nACGT\n"), b"ACTACGT".to_vec());
    }
}
