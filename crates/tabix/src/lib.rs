//! Tabix-indexed text files (bgzipped VCF, BED, GFF, SAM or any tab-separated columns) read by
//! region as tabix 1.16 reads them, local or remote (any location `hfile` opens).
//!
//! The `tabix` command's other work is here too, for the command line to call: [`conf`] (its
//! presets and column options), [`build::index_file`] (indexing), [`reheader`] (`-r`) and
//! [`print`](mod@print) (a query's output).
//!
//! # Examples
//!
//! ```no_run
//! let mut reader = tabix::Reader::open("calls.vcf.gz", None, &Default::default())?;
//! let mut query = reader.query("chr1:10,000-20,000")?;
//! while let Some(line) = query.next_line()? {
//!     println!("{}", String::from_utf8_lossy(line));
//! }
//! # Ok::<(), tabix::Error>(())
//! ```

#![warn(missing_docs)]

mod advice;
pub mod build;
pub mod conf;
mod error;
mod index_load;
pub mod interval;
mod lines;
pub mod print;
pub mod region_list;
pub mod reheader;
mod resolve;

use bgzf::VirtualOffset;
use hfile::{HFile, Hints, OpenOptions};
use index::tbi::Meta;
use index::{Chunk, Index};
use region::Region;

pub use error::Error;
pub use index_load::Keep;

/// How far the first read of the data (its first block; the header) asks: one BGZF block.
const FIRST_READ: u64 = 65_536;
use lines::Mode;
pub use lines::{Query, Record};
pub use region_list::RegionList;
pub use resolve::resolve;

/// An open tabix-indexed file: its data, its index and the index's column meta.
///
/// # Examples
///
/// ```no_run
/// // A remote file: its index (`.csi`, else `.tbi`) is found beside it.
/// let mut reader = tabix::Reader::open("https://example.org/calls.vcf.gz", None, &Default::default())?;
/// let mut query = reader.query("chr1:10,000-20,000")?;
/// let mut n = 0;
/// while query.next_line()?.is_some() {
///     n += 1;
/// }
/// println!("{n} lines");
/// # Ok::<(), tabix::Error>(())
/// ```
#[derive(Debug)]
pub struct Reader {
    data: bgzf::Reader<HFile>,
    index: Index,
    meta: Meta,
    starts: Vec<u64>,
    size: u64,
    line: Vec<u8>,
}

/// A tabix index's extensions in the order htslib 1.16 tries them (`.csi`, then `.tbi`; each
/// appended, then in place of the last extension: `x.vcf.gz.csi`, `x.vcf.csi`, `x.vcf.gz.tbi`,
/// `x.vcf.tbi`).
pub const INDEX_EXTENSIONS: [&str; 2] = [".csi", ".tbi"];

/// The index names tabix tries for `location`, in its order ([`hfile::index_candidates`] with
/// [`INDEX_EXTENSIONS`]): `##idx##` names one; none for a pre-signed URL (its signature covers
/// the path, so no other name can be made from it).
pub fn index_candidates(location: &str) -> Vec<String> {
    hfile::index_candidates(location, &INDEX_EXTENSIONS)
}

/// The data location without a `##idx##` suffix.
pub fn data_location(location: &str) -> &str {
    hfile::split_index(location).file
}

impl Reader {
    /// Opens `location` (a path or URL, optionally `DATA##idx##INDEX`) with the index `index`
    /// or the first of [`index_candidates`] that exists.
    ///
    /// # Errors
    /// The data or index cannot be opened or read, no index exists, or it has no tabix meta.
    pub fn open(location: &str, index: Option<&str>, opts: &OpenOptions) -> Result<Reader, Error> {
        Reader::open_keep(location, index, opts, Keep::All)
    }

    /// [`Reader::open`] for a query of known regions: the index keeps only the sequences they
    /// name (and is read only through the last of them), and the data's first block and every
    /// index candidate are asked for at once. A region naming a sequence that was not kept
    /// gives no lines.
    ///
    /// # Errors
    /// As [`Reader::open`].
    pub fn open_keep(
        location: &str,
        index: Option<&str>,
        opts: &OpenOptions,
        keep: Keep,
    ) -> Result<Reader, Error> {
        let data_name = data_location(location);
        let names = match index {
            Some(i) => vec![i.to_string()],
            None => index_candidates(location),
        };
        // The data's first block (the header) is asked for beside the index; an error opening
        // it is reported after the index's, as tabix reports them.
        let mut data_file = hfile::open(data_name, opts).map(|mut f| {
            f.set_readahead_limit(Some(FIRST_READ));
            f.advise(std::slice::from_ref(&(0..FIRST_READ)));
            f
        });
        let regions = match &keep {
            Keep::Regions(r) => r.as_slice(),
            Keep::All => &[],
        };
        let mut spans = advice::Spans::new(regions, FIRST_READ);
        let found = index_load::find(&names, opts, &keep, &mut |tid, index| {
            if let Ok(f) = data_file.as_mut() {
                spans.loaded(tid, index, f);
            }
        })?;
        let index = found.ok_or_else(|| Error::NoIndex {
            name: data_name.to_string(),
        })?;
        let meta = index
            .tabix()
            .map_err(Error::Index)?
            .ok_or_else(|| Error::NotTabix {
                name: index.name().to_string(),
            })?;
        let file = data_file.map_err(Error::Open)?;
        let mut data = bgzf::Reader::with_name(file, data_name)?;
        let size = data.size()?;
        let starts = index.block_starts();
        Ok(Reader {
            data,
            index,
            meta,
            starts,
            size,
            line: Vec::new(),
        })
    }

    /// The index's column meta (preset, columns, comment character, names).
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The sequence names in index order (`tabix -l`).
    pub fn names(&self) -> &[String] {
        &self.meta.names
    }

    /// The index.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The header lines (`tabix -H`): the lines at the start of the file that begin with the
    /// comment character, up to the first that does not (skipped lines that do not begin with
    /// it end the header too, as in tabix 1.16).
    ///
    /// # Errors
    /// The data cannot be read.
    pub fn header(&mut self) -> Result<Vec<Vec<u8>>, Error> {
        // A hint only: a longer header is read on in growing bounded requests.
        let limit = self.size.min(FIRST_READ);
        self.data.seek_limit(VirtualOffset::new(0, 0), limit)?;
        let mut out = Vec::new();
        while lines::read_line(&mut self.data, &mut self.line)? {
            let comment = self.line.first().map(|&b| i32::from(b)) == Some(self.meta.meta_char);
            if !comment {
                break;
            }
            out.push(self.line.clone());
        }
        Ok(out)
    }

    /// The lines overlapping `region` (a region string, see [`resolve`]); a name the
    /// index does not hold gives no lines, as in tabix.
    ///
    /// # Errors
    /// The region string is not one htslib accepts ([`Error::Region`]); reading errors come
    /// from the query's lines.
    pub fn query(&mut self, region: &str) -> Result<Query<'_>, Error> {
        let target = resolve(&self.meta, region).map_err(|why| Error::Region {
            region: region.to_string(),
            why,
        })?;
        Ok(self.query_region(target))
    }

    /// The lines of an already resolved region (`None`: no lines): a region's, or every line
    /// from where htslib starts for `.` and `*` to the end of the file. An index whose name
    /// table does not match its reference count fails the queries it could answer wrongly: a
    /// name it holds no reference for, and (with fewer names than references) a name it does
    /// not hold; tabix answers both with nothing.
    pub fn query_region(&mut self, target: Option<Region>) -> Query<'_> {
        let (names, refs) = (self.meta.names.len(), self.index.n_refs());
        let damaged = match &target {
            Some(Region::Ref { tid, .. }) if tid.get() >= refs => Some(format!(
                "the name table names {names} sequences for {refs} references: {} has none",
                self.meta.names.get(tid.get()).map_or("", String::as_str)
            )),
            None if names < refs => Some(format!(
                "the region names none of the {names} sequences of the name table, which the \
                 index's {refs} references outnumber"
            )),
            _ => None,
        };
        let failed = damaged.map(|what| {
            // The name table follows the magic and `n_ref` (TBI) or the CSI's scheme.
            let table = match self.index.kind() {
                index::Kind::Csi => 16 + index::tbi::FIXED_LEN,
                _ => 8 + index::tbi::FIXED_LEN,
            };
            Error::Mismatch {
                name: self.index.name().to_string(),
                at: format!("byte {table} of the inflated index"),
                what,
            }
        });
        let rest = |start: Option<VirtualOffset>| {
            start.map(|start| Chunk {
                start,
                end: VirtualOffset::from_raw(u64::MAX),
            })
        };
        let (mode, chunks) = match target {
            Some(Region::Ref { tid, beg, end }) => {
                let chunks = self.index.query_checked(tid.get(), beg.get(), end.get());
                (Mode::region(tid, beg, end), chunks.unwrap_or_default())
            }
            Some(Region::All) => (
                Mode::Rest,
                Vec::from_iter(rest(self.index.first_record_start())),
            ),
            Some(Region::Unplaced) => (
                Mode::Rest,
                Vec::from_iter(rest(self.index.unplaced_start())),
            ),
            None => (Mode::Nothing, Vec::new()),
        };
        let mut q = Query::new(self, mode, chunks);
        q.failed = failed;
        q
    }
}
