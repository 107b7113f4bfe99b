//! A local FASTA reference with its `.fai` index (made in memory when there is none, as htslib
//! builds one), plain or bgzipped with its `.gzi`: the bases of a range read straight from
//! their lines, upper-cased and with line ends left out, as htslib's `load_ref_portion` reads
//! them.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

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
    path: PathBuf,
    body: Body,
    entries: HashMap<Vec<u8>, FaiEntry>,
}

impl std::fmt::Debug for Fasta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fasta({})", self.path.display())
    }
}

/// The file's bytes: as they are, or BGZF blocks found through the `.gzi` (pairs of compressed
/// and uncompressed block starts).
enum Body {
    Plain(File),
    Bgzf {
        reader: Box<bgzf::Reader<File>>,
        gzi: Vec<(u64, u64)>,
    },
}

impl Fasta {
    /// Opens `path` and its `path.fai` (or indexes the file when there is none).
    pub fn open(path: &Path) -> Result<Fasta, String> {
        let name = path.display();
        let mut file = File::open(path).map_err(|e| format!("{name}: {e}"))?;
        let mut magic = [0u8; 2];
        let n = file.read(&mut magic).map_err(|e| format!("{name}: {e}"))?;
        let fai = PathBuf::from(format!("{}.fai", path.display()));
        let compressed = n == 2 && magic == [0x1f, 0x8b];
        let entries = match std::fs::read(&fai) {
            Ok(text) => parse_fai(&text).map_err(|e| format!("{}: {e}", fai.display()))?,
            Err(_) if compressed => {
                return Err(format!(
                    "{name}: a compressed reference needs its .fai and .gzi"
                ))
            }
            Err(_) => build_fai(&std::fs::read(path).map_err(|e| format!("{name}: {e}"))?)
                .map_err(|e| format!("{name}: {e}"))?,
        };
        file.seek(SeekFrom::Start(0))
            .map_err(|e| format!("{name}: {e}"))?;
        let body = if compressed {
            let gzi_path = PathBuf::from(format!("{}.gzi", path.display()));
            let gzi = std::fs::read(&gzi_path)
                .map_err(|e| format!("{}: {e}", gzi_path.display()))
                .and_then(|d| parse_gzi(&d).map_err(|e| format!("{}: {e}", gzi_path.display())))?;
            let reader = bgzf::Reader::with_name(file, &name.to_string())
                .map_err(|e| format!("{name}: {e}"))?;
            if reader.format() != bgzf::Format::Bgzf {
                return Err(format!("{name}: compressed with gzip, not bgzip"));
            }
            Body::Bgzf {
                reader: Box::new(reader),
                gzi,
            }
        } else {
            Body::Plain(file)
        };
        Ok(Fasta {
            path: path.to_path_buf(),
            body,
            entries,
        })
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
            path: path.to_path_buf(),
            body: Body::Plain(file),
            entries: HashMap::from([(name.to_vec(), entry)]),
        })
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
                    self.path.display()
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
        let bases: Vec<u8> = raw
            .iter()
            .filter(|b| (b'!'..=b'~').contains(*b))
            .map(u8::to_ascii_uppercase)
            .collect();
        if bases.len() as u64 != end - start + 1 {
            return Err(what("malformed reference file".to_string()));
        }
        Ok(bases)
    }
}

impl Body {
    /// Up to `len` bytes from uncompressed offset `from` (fewer at the end of the data).
    fn read_at(&mut self, from: u64, len: u64) -> Result<Vec<u8>, String> {
        let mut raw = Vec::new();
        match self {
            Body::Plain(file) => {
                file.seek(SeekFrom::Start(from))
                    .map_err(|e| e.to_string())?;
                file.take(len)
                    .read_to_end(&mut raw)
                    .map_err(|e| e.to_string())?;
            }
            Body::Bgzf { reader, gzi } => {
                // The last block starting at or before `from` (the first block is implicit).
                let (c, u) = gzi
                    .iter()
                    .copied()
                    .take_while(|&(_, u)| u <= from)
                    .last()
                    .unwrap_or((0, 0));
                let within = u16::try_from(from - u)
                    .map_err(|_| format!("the .gzi has no block near offset {from}"))?;
                reader
                    .seek(bgzf::VirtualOffset::new(c, within))
                    .map_err(|e| e.to_string())?;
                // Read in pieces, so that a length the index lies about costs only what the
                // file holds.
                let mut piece = vec![0u8; 64 * 1024];
                while (raw.len() as u64) < len {
                    let want = piece.len().min((len - raw.len() as u64) as usize);
                    let n = reader.read(&mut piece[..want]).map_err(|e| e.to_string())?;
                    if n == 0 {
                        break;
                    }
                    raw.extend_from_slice(&piece[..n]);
                }
            }
        }
        Ok(raw)
    }
}

/// A `.gzi`: a count, then (compressed, uncompressed) offset pairs, little-endian u64s.
fn parse_gzi(d: &[u8]) -> Result<Vec<(u64, u64)>, String> {
    let word = |i: usize| {
        d.get(i..i + 8)
            .map(|w| u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]))
    };
    let n = word(0).ok_or("truncated index")?;
    if n.checked_mul(16).and_then(|b| b.checked_add(8)) != Some(d.len() as u64) {
        return Err(format!(
            "index of {} bytes does not hold {n} entries",
            d.len()
        ));
    }
    Ok((0..n as usize)
        .filter_map(|k| Some((word(8 + 16 * k)?, word(16 + 16 * k)?)))
        .collect())
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
