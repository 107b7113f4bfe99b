//! Fixture loading shared by the Criterion benchmarks in `benches/benches/`.
//!
//! The benchmarks measure the hot paths on real data: inflating BGZF blocks, decoding and
//! formatting BAM records, and planning index queries. Loading the data is kept here, out of the
//! timed code, and fails with an [`Error`] naming the file and offset rather than panicking, so
//! a damaged `HTS_BENCH_BAM` is reported, not crashed on.
//!
//! ```no_run
//! let path = benches::bench_bam("rand.bam");
//! let blocks = benches::read_blocks(&path, 200)?;
//! let bytes: u64 = blocks.iter().map(|b| u64::from(b.isize())).sum();
//! println!("{} blocks, {bytes} uncompressed bytes", blocks.len());
//! # Ok::<(), benches::Error>(())
//! ```

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use bgzf::VirtualOffset;

/// The environment variable naming a BAM file to benchmark instead of the fixtures.
pub const BAM_ENV: &str = "HTS_BENCH_BAM";

/// Smallest possible record after its `block_size`: the fixed fields.
const MIN_RECORD: u32 = 32;

/// Records bigger than this are rejected: no real read comes near it, and it bounds what a
/// corrupt `block_size` can make the loader allocate.
const MAX_RECORD: u32 = 64 << 20;

/// Errors from loading benchmark data; each names the file and where in it.
#[derive(Debug)]
pub enum Error {
    /// The file could not be opened or read; `offset` is the file offset reached.
    Io {
        name: String,
        offset: u64,
        source: io::Error,
    },
    /// A record's `block_size` is out of range; `offset` is where that field starts.
    BadRecordSize {
        name: String,
        offset: VirtualOffset,
        block_size: u32,
    },
    /// The BGZF layer failed (it names the file and offset).
    Bgzf(bgzf::Error),
    /// The BAM header could not be read (the error names the file and offset).
    Bam(bam::Error),
    /// The index could not be read (the error names the file and offset).
    Index(index::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io {
                name,
                offset,
                source,
            } => write!(f, "{name}: read failed at byte {offset}: {source}"),
            Error::BadRecordSize {
                name,
                offset,
                block_size,
            } => write!(
                f,
                "{name}: record at virtual offset {offset} has block_size {block_size}, \
                 outside {MIN_RECORD}..={MAX_RECORD}"
            ),
            Error::Bgzf(e) => e.fmt(f),
            Error::Bam(e) => e.fmt(f),
            Error::Index(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Bgzf(e) => Some(e),
            Error::Bam(e) => Some(e),
            Error::Index(e) => Some(e),
            Error::BadRecordSize { .. } => None,
        }
    }
}

impl From<bgzf::Error> for Error {
    fn from(e: bgzf::Error) -> Error {
        Error::Bgzf(e)
    }
}

impl From<bam::Error> for Error {
    fn from(e: bam::Error) -> Error {
        Error::Bam(e)
    }
}

impl From<index::Error> for Error {
    fn from(e: index::Error) -> Error {
        Error::Index(e)
    }
}

/// The settings every benchmark here uses: quick enough for 2-core machines.
pub fn criterion_config() -> criterion::Criterion {
    criterion::Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3))
}

/// The conformance data directory of the workspace.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/conformance/data")
}

/// A file of the conformance data directory.
pub fn fixture(name: &str) -> PathBuf {
    data_dir().join(name)
}

/// The BAM file named by [`BAM_ENV`] if set and non-empty, else the fixture `default`.
pub fn bench_bam(default: &str) -> PathBuf {
    match std::env::var_os(BAM_ENV) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => fixture(default),
    }
}

/// The index next to a BAM file: `<bam>.bai` if it exists, else `<bam>.csi`.
pub fn index_path(bam: &Path) -> PathBuf {
    let with = |ext: &str| {
        let mut s = bam.as_os_str().to_owned();
        s.push(ext);
        PathBuf::from(s)
    };
    let bai = with(".bai");
    if bai.exists() {
        bai
    } else {
        with(".csi")
    }
}

/// A short name for benchmark ids: the file name without directories.
pub fn short_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Reads the first `max_blocks` BGZF blocks of the file at `path` (fewer if it has fewer),
/// without inflating them.
///
/// # Errors
/// [`Error::Io`] if the file cannot be opened, [`Error::Bgzf`] for a bad or truncated block.
pub fn read_blocks(path: &Path, max_blocks: usize) -> Result<Vec<bgzf::RawBlock>, Error> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|source| Error::Io {
        name: name.clone(),
        offset: 0,
        source,
    })?;
    let blocks = bgzf::Blocks::new(BufReader::new(file), &name, 0).take(max_blocks);
    Ok(blocks.collect::<Result<Vec<_>, _>>()?)
}

/// A BAM header and the undecoded bytes of records that follow it.
#[derive(Debug)]
pub struct RecordSet {
    /// The file's header.
    pub header: bam::Header,
    /// Each record's bytes after its `block_size`, as [`bam::Record::decode`] takes them.
    pub records: Vec<Vec<u8>>,
}

impl RecordSet {
    /// The total size of the record bytes.
    pub fn bytes(&self) -> usize {
        self.records.iter().map(Vec::len).sum()
    }
}

fn open_bgzf(path: &Path) -> Result<bgzf::Reader, Error> {
    let name = path.display().to_string();
    let hfile = hfile::open(&name, &hfile::OpenOptions::default()).map_err(bgzf::Error::from)?;
    Ok(bgzf::Reader::new(hfile)?)
}

/// Reads the header of the BAM file at `path`.
///
/// # Errors
/// [`Error::Bgzf`] if the file cannot be opened or decompressed, [`Error::Bam`] for a bad
/// header.
pub fn read_header(path: &Path) -> Result<bam::Header, Error> {
    let name = path.display().to_string();
    let mut reader = open_bgzf(path)?;
    Ok(bam::Header::read(&mut reader, &name)?)
}

/// Reads the header and the first `max_records` records' bytes (all of them if there are
/// fewer) of the BAM file at `path`, without decoding the records.
///
/// # Errors
/// As [`read_header`], plus [`Error::BadRecordSize`] and [`Error::Bgzf`] for a record cut short.
pub fn read_records(path: &Path, max_records: usize) -> Result<RecordSet, Error> {
    let name = path.display().to_string();
    let mut reader = open_bgzf(path)?;
    let header = bam::Header::read(&mut reader, &name)?;
    let mut records = Vec::new();
    while records.len() < max_records {
        let at = reader.virtual_offset();
        let mut size = [0u8; 4];
        if !reader.read_exact_or_eof(&mut size)? {
            break;
        }
        let block_size = u32::from_le_bytes(size);
        if !(MIN_RECORD..=MAX_RECORD).contains(&block_size) {
            return Err(Error::BadRecordSize {
                name,
                offset: at,
                block_size,
            });
        }
        let mut data = vec![0u8; block_size as usize];
        reader.read_exact_data(&mut data)?;
        records.push(data);
    }
    Ok(RecordSet { header, records })
}

/// A query region: reference id and 0-based half-open `[beg, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Reference id in the header.
    pub tid: usize,
    /// First position, 0-based.
    pub beg: u64,
    /// One past the last position.
    pub end: u64,
}

/// A spread of regions over the header's references: at most `max_refs` references taken at
/// even strides, and for each the whole reference plus `windows` windows of `width` bases at
/// even steps along it. References of length 0 get only the whole-reference region.
pub fn regions(header: &bam::Header, max_refs: usize, windows: u64, width: u64) -> Vec<Region> {
    let refs = header.refs();
    let stride = refs.len().div_ceil(max_refs.max(1)).max(1);
    let mut out = Vec::new();
    for (tid, r) in refs.iter().enumerate().step_by(stride) {
        let len = u64::from(r.len);
        out.push(Region {
            tid,
            beg: 0,
            end: len.max(1),
        });
        if len == 0 || windows == 0 {
            continue;
        }
        let step = (len / windows).max(1);
        for i in 0..windows {
            let beg = i * step;
            if beg >= len {
                break;
            }
            out.push(Region {
                tid,
                beg,
                end: (beg + width).min(len),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_cover_whole_refs_and_windows() {
        let refs = vec![
            bam::Reference {
                name: b"a".to_vec(),
                len: 1000,
            },
            bam::Reference {
                name: b"b".to_vec(),
                len: 0,
            },
        ];
        let header = bam::Header::from_parts(Vec::new(), refs).expect("valid header");
        let r = regions(&header, 10, 2, 100);
        let got: Vec<(usize, u64, u64)> = r.iter().map(|r| (r.tid, r.beg, r.end)).collect();
        assert_eq!(got, [(0, 0, 1000), (0, 0, 100), (0, 500, 600), (1, 0, 1)]);
        assert_eq!(regions(&header, 1, 0, 100).len(), 1);
    }
}
