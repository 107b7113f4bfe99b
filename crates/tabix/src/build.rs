//! Indexing a bgzipped file as `tbx_index` does: lines in the first `skip` or starting with
//! the comment character are passed over (the index starts after them), every other line's
//! interval is pushed with the virtual offset after it, names numbered in order of first
//! appearance; unsorted positions and a sequence met again are refused by the builder.

use bgzf::VirtualOffset;
use hfile::HFile;
use index::build::{BuildError, Builder, Scheme};
use index::tbi::Meta;

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
