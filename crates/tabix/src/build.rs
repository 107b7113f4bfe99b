//! Indexing a bgzipped file as `tbx_index` does: lines in the first `skip` or starting with
//! the comment character are passed over (the index starts after them), every other line's
//! interval is pushed with the virtual offset after it, names numbered in order of first
//! appearance; unsorted positions and a sequence met again are refused by the builder.

use bgzf::VirtualOffset;
use hfile::HFile;
use index::build::{BuildError, Builder, Scheme};
use index::tbi::Meta;

use crate::conf::{preset, preset_by_name, Conf};
use crate::{interval, lines, Error};

/// Why indexing failed.
#[derive(Debug)]
pub enum BuildFailure {
    /// Reading the data failed.
    Read(Error),
    /// The builder refused a line (unsorted, a sequence met again, out of range).
    Push(BuildError),
    /// The file is not BGZF.
    NotBgzf,
    /// The index could not be written.
    Write(std::io::Error),
    /// The data file could not be opened.
    Open(Error),
    /// The index file exists and overwriting it was not asked for.
    Exists {
        /// The index file.
        name: String,
    },
    /// The index file could not be saved.
    Save {
        /// The index file.
        name: String,
        /// Why.
        source: std::io::Error,
    },
}

/// tabix 1.16's message (htslib's for a line the builder refuses); the command line adds
/// the file's name to [`BuildFailure::NotBgzf`]'s.
impl std::fmt::Display for BuildFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildFailure::Open(e) | BuildFailure::Read(e) => write!(f, "[tabix] {e}"),
            BuildFailure::Write(e) => write!(f, "[tabix] {e}"),
            BuildFailure::Exists { .. } => write!(
                f,
                "[tabix] the index file exists. Please use '-f' to overwrite."
            ),
            BuildFailure::NotBgzf => write!(f, "[tabix] the compression is not BGZF"),
            BuildFailure::Save { name, source } => {
                write!(f, "[tabix] cannot write {name}: {source}")
            }
            BuildFailure::Push(BuildError::Unsorted { tid, previous, beg }) => write!(
                f,
                "[E::hts_idx_push] Unsorted positions on sequence #{}: {} followed by {}",
                tid + 1,
                previous + 1,
                beg + 1
            ),
            BuildFailure::Push(BuildError::NotContiguous { .. }) => {
                write!(f, "[E::hts_idx_push] Chromosome blocks not continuous")
            }
            BuildFailure::Push(other) => write!(f, "[E::hts_idx_push] {other}"),
        }
    }
}

impl BuildFailure {
    /// Whether tabix follows the message with `tbx_index_build failed`: the failure came
    /// while building, after the file was opened and checked.
    pub fn while_building(&self) -> bool {
        matches!(
            self,
            BuildFailure::Push(_) | BuildFailure::Read(_) | BuildFailure::Write(_)
        )
    }
}

impl From<Error> for BuildFailure {
    fn from(e: Error) -> BuildFailure {
        BuildFailure::Read(e)
    }
}

impl From<bgzf::Error> for BuildFailure {
    fn from(e: bgzf::Error) -> BuildFailure {
        BuildFailure::Read(Error::Data(e))
    }
}

/// Indexes `data` with the columns of `conf` (its names are ignored and rebuilt):
/// `min_shift` 0 for a TBI, else a CSI with that min_shift. Returns the index's bytes.
///
/// A line whose interval cannot be read is passed to `bad_line` and left out of the index,
/// as tabix 1.16 does (it reports it and goes on; a query that meets it fails).
///
/// # Errors
/// See [`BuildFailure`].
pub fn index(
    data: &mut bgzf::Reader<HFile>,
    conf: &Meta,
    min_shift: u32,
    bad_line: &mut dyn FnMut(&[u8]),
) -> Result<Vec<u8>, BuildFailure> {
    if data.format() != bgzf::Format::Bgzf {
        return Err(BuildFailure::NotBgzf);
    }
    let scheme = if min_shift > 0 {
        Scheme::Csi {
            min_shift,
            depth: 31u32.saturating_sub(min_shift).div_ceil(3),
        }
    } else {
        Scheme::Bai
    };
    let mut meta = Meta {
        names: Vec::new(),
        ..conf.clone()
    };
    let mut line = Vec::new();
    let mut builder: Option<Builder> = None;
    let mut last_off = VirtualOffset::new(0, 0);
    let mut lineno = 0i64;
    // Where the data ends, as bgzf_tell gives it after the last line: before the EOF marker
    // (reading on to find the end steps past it).
    let mut before = data.virtual_offset();
    while lines::read_line(data, &mut line)? {
        lineno += 1;
        let comment = line.first().map(|&b| i32::from(b)) == Some(meta.meta_char);
        if lineno <= i64::from(meta.skip) || comment {
            last_off = data.virtual_offset();
            before = last_off;
            continue;
        }
        let b = builder.get_or_insert_with(|| Builder::new(scheme, 0, last_off.raw()));
        let Some(iv) = interval::parse(&meta, &line) else {
            bad_line(&line);
            continue;
        };
        let name = String::from_utf8_lossy(iv.name).into_owned();
        let tid = match meta.tid(&name) {
            Some(t) => t,
            None => {
                meta.names.push(name);
                meta.names.len() - 1
            }
        };
        let tid = i32::try_from(tid).unwrap_or(i32::MAX);
        let end = data.virtual_offset().raw();
        b.push(tid, iv.beg, iv.end, end, true)
            .map_err(BuildFailure::Push)?;
        before = data.virtual_offset();
    }
    let end = before.raw();
    let builder = builder.unwrap_or_else(|| Builder::new(scheme, 0, last_off.raw()));
    let built = builder.finish(end);
    let mut out = Vec::new();
    built
        .write_tabix(&mut out, &meta.to_bytes())
        .map_err(BuildFailure::Write)?;
    Ok(out)
}

/// The columns tabix uses when no option fixed them: the preset the name picks, else VCF's
/// when the data starts as a VCF does (`hts_open`'s format detection), else the default
/// (GFF's columns).
fn detected(file: &str, data: &mut bgzf::Reader<HFile>) -> Option<Meta> {
    if let Some(m) = preset_by_name(file) {
        return Some(m);
    }
    let head = data.fill_block().ok()?;
    head.starts_with(b"##fileformat=VCF")
        .then(|| preset("vcf"))
        .flatten()
}

/// htslib's name for a preset's kind of line, as its complaints give it.
pub fn kind(m: &Meta) -> &'static str {
    match m.preset() {
        index::tbi::Preset::Vcf => "TBX_VCF",
        index::tbi::Preset::Sam => "TBX_SAM",
        index::tbi::Preset::Generic => "TBX_GENERIC",
    }
}

/// tabix 1.16's indexing mode: indexes the local bgzipped `file` with the configuration `c`
/// (the columns detected when no option fixed them) and saves `file.tbi`, or `file.csi` with
/// `-C` or `-m`. A line whose interval cannot be read goes to `bad_line` with the [`kind`]
/// of the columns used, and is left out.
///
/// # Errors
/// See [`BuildFailure`].
pub fn index_file(
    file: &str,
    c: &Conf,
    bad_line: &mut dyn FnMut(&str, &[u8]),
) -> Result<(), BuildFailure> {
    let src =
        hfile::open(file, &Default::default()).map_err(|e| BuildFailure::Open(Error::Open(e)))?;
    let mut data = bgzf::Reader::with_name(src, file).map_err(|e| BuildFailure::Open(e.into()))?;
    let mut m = c.meta.clone();
    let mut min_shift = c.min_shift;
    if c.detect {
        if let Some(d) = detected(file, &mut data) {
            if d.preset() == index::tbi::Preset::Vcf && min_shift == 0 && c.csi {
                min_shift = 14;
            }
            m = d;
        }
    }
    if c.csi && min_shift == 0 {
        min_shift = 14;
    }
    let csi = c.csi || min_shift != 0;
    let name = format!("{file}.{}", if csi { "csi" } else { "tbi" });
    if !c.force && std::path::Path::new(&name).exists() {
        return Err(BuildFailure::Exists { name });
    }
    let min_shift = if csi {
        u32::try_from(min_shift).unwrap_or(14)
    } else {
        0
    };
    let kind = kind(&m);
    let bytes = index(&mut data, &m, min_shift, &mut |l| bad_line(kind, l))?;
    std::fs::write(&name, bytes).map_err(|source| BuildFailure::Save { name, source })
}
