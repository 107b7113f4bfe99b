//! A local FASTA reference with its `.fai` index (made in memory when there is none, as htslib
//! builds one): the bases of a range read straight from their lines, upper-cased and with
//! line ends left out, as htslib's `load_ref_portion` reads them.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::Error;

/// One sequence's `.fai` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaiEntry {
    pub length: u64,
    pub offset: u64,
    pub line_bases: u64,
    pub line_width: u64,
}

/// The longest range read at once (a slice's span; whole references of multi-reference slices).
const MAX_RANGE: u64 = 1 << 31;

#[derive(Debug)]
pub struct Fasta {
    path: PathBuf,
    file: File,
    entries: HashMap<Vec<u8>, FaiEntry>,
}

impl Fasta {
    /// Opens `path` and its `path.fai` (or indexes the file when there is none).
    pub fn open(path: &Path) -> Result<Fasta, String> {
        let name = path.display();
        let mut file = File::open(path).map_err(|e| format!("{name}: {e}"))?;
        let mut magic = [0u8; 2];
        let n = file.read(&mut magic).map_err(|e| format!("{name}: {e}"))?;
        if n == 2 && magic == [0x1f, 0x8b] {
            return Err(format!(
                "{name}: compressed references are not read yet; give the plain FASTA"
            ));
        }
        let fai = PathBuf::from(format!("{}.fai", path.display()));
        let entries = match std::fs::read(&fai) {
            Ok(text) => parse_fai(&text).map_err(|e| format!("{}: {e}", fai.display()))?,
            Err(_) => build_fai(&std::fs::read(path).map_err(|e| format!("{name}: {e}"))?)
                .map_err(|e| format!("{name}: {e}"))?,
        };
        Ok(Fasta {
            path: path.to_path_buf(),
            file,
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
            file,
            entries: HashMap::from([(name.to_vec(), entry)]),
        })
    }

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
        let mut raw = Vec::new();
        self.file
            .seek(SeekFrom::Start(from))
            .map_err(|e| what(e.to_string()))?;
        (&mut self.file)
            .take(len)
            .read_to_end(&mut raw)
            .map_err(|e| what(e.to_string()))?;
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
