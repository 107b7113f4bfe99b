//! BAI and CSI indexes for BAM files, read with htslib 1.16's rules.
//!
//! [`Index`] is parsed from the bytes of a `.bai` or `.csi` file ([`Index::from_bytes`], or
//! [`read`] for a local path). [`Index::query`] picks the chunks of the BAM to read for a region
//! exactly as htslib's `hts_itr_query` does, and [`Index::unplaced_start`] says where reading
//! starts for the region `*`. The [`plan`] module turns the regions of a whole query into byte
//! spans to fetch from a remote file. The [`build`] module makes an index while a BAM file is
//! written, byte-identical to htslib's.
//!
//! # Examples
//!
//! ```no_run
//! let index = index::read("sample.bam.bai")?;
//! for chunk in index.query(0, 10_000, 20_000) {
//!     println!("{} - {}", chunk.start, chunk.end);
//! }
//! # Ok::<(), index::Error>(())
//! ```

#![warn(missing_docs)]

mod bin_table;
pub mod binning;
mod bins;
pub mod build;
mod chunk;
mod decompress;
mod error;
mod linear;
mod load;
pub mod multi_chunks;
pub mod plan;
mod refs;
mod region_chunks;
mod seen;
pub mod tbi;
mod walk;
mod wanted;

use std::path::Path;

pub use chunk::Chunk;
pub use error::Error;
pub use load::{Loaded, Loader, NeedMore, Outcome, Part, MAX_DECOMPRESSED};
pub use wanted::Wanted;

use refs::Refs;

/// Which of the two index formats a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `.bai`: fixed scheme (min_shift 14, depth 5) with a linear index.
    Bai,
    /// `.csi`: the scheme is given in the file; each bin carries its own loffset.
    Csi,
    /// `.tbi`: tabix's index, a BAI laid out after a header of column meta ([`tbi::Meta`]).
    Tbi,
}

impl Kind {
    /// BAI and TBI have a linear index and no per-bin loffset; CSI the reverse.
    pub fn has_linear(self) -> bool {
        self != Kind::Csi
    }
}

/// A raw (start, end) pair of virtual offsets as stored, named as in htslib (`u`, `v`) because
/// the pseudo-bin stores counts, not offsets, in its second pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pair {
    pub(crate) u: u64,
    pub(crate) v: u64,
}

pub(crate) use bins::{Bin, Bins};

/// One reference's bins. Every bin of the file is kept under its number, including the
/// pseudo-bin and bins numbered out of range: htslib keeps them all in one hash, and its
/// searches for the nearest existing bin can land on them, so the exact chunk choice depends on
/// them. Queries never return their chunks.
#[derive(Clone, Debug)]
pub(crate) struct Reference {
    pub(crate) bins: Bins,
    /// BAI only: the 16 kbp-window linear index, gaps filled as htslib does on load.
    pub(crate) linear: Option<Vec<u64>>,
}

/// A reference's read counts from its pseudo-bin ([`Index::mapped_unmapped`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReadCounts {
    /// Mapped reads (`n_mapped`).
    pub mapped: u64,
    /// Unmapped reads placed on the reference (`n_unmapped`).
    pub unmapped: u64,
}

/// A parsed BAI or CSI index.
///
/// # Examples
///
/// ```no_run
/// let index = index::read("sample.bam.bai")?;
/// // The chunks of reference 0 to read for [10 000, 20 000), as htslib picks them.
/// let chunks = index.query(0, 10_000, 20_000);
/// println!("{} chunks", chunks.len());
/// # Ok::<(), index::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Index {
    name: String,
    kind: Kind,
    min_shift: u32,
    depth: u32,
    aux: Vec<u8>,
    tabix: Option<tbi::Meta>,
    refs: Refs,
    n_no_coor: Option<u64>,
}

/// Reads and parses a local index file, whole, as it is read (see [`Loader`] to keep only
/// some references or to read from another source).
///
/// # Errors
/// [`Error::Io`] if the file cannot be read, or any parse error of [`Index::from_bytes`].
pub fn read(path: impl AsRef<Path>) -> Result<Index, Error> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let io_error = |source| Error::Io {
        name: name.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io_error)?;
    let mut loader = Loader::new(name.as_str());
    // A device or a pipe has no size to check counts against.
    let meta = file.metadata().map_err(io_error)?;
    if meta.is_file() {
        loader = loader.file_len(meta.len());
    }
    loader.read(file).map(|loaded| loaded.index)
}

impl Index {
    /// Parses an index from its file bytes; `name` is used in error messages.
    ///
    /// The format is told by its magic after optional gzip/BGZF decompression, as htslib does:
    /// `BAI\1` or `CSI\1`. Counts are checked against the bytes left before anything is
    /// allocated. Like htslib, a bin number that appears twice in a reference is an error, bins
    /// numbered beyond the scheme are accepted (and never consulted for chunks), and a missing
    /// trailing `n_no_coor` is allowed.
    ///
    /// # Errors
    /// [`Error::BadMagic`], [`Error::Truncated`], [`Error::Invalid`], [`Error::Decompress`] or
    /// [`Error::TooLarge`], each naming `name` and the offset (for a compressed index, in the
    /// decompressed stream).
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Index, Error> {
        Loader::new(name)
            .file_len(bytes.len() as u64)
            .read(bytes)
            .map(|loaded| loaded.index)
    }

    /// The name given when loading (the path for [`read`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// BAI or CSI.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The number of references the index describes (may differ from the BAM header's), loaded
    /// or not (see [`Index::is_loaded`]).
    pub fn n_refs(&self) -> usize {
        self.refs.len()
    }

    /// Width, as a power of two, of the smallest bins (14 for BAI).
    pub fn min_shift(&self) -> u32 {
        self.min_shift
    }

    /// Number of levels below the root bin (5 for BAI).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// One past the largest position the scheme can bin; query ends beyond it are clamped.
    pub fn max_position(&self) -> u64 {
        binning::max_position(self.min_shift, self.depth)
    }

    /// The CSI auxiliary data (empty for BAI and for BAM-made CSI).
    pub fn aux(&self) -> &[u8] {
        &self.aux
    }

    /// Tabix's column meta: a TBI's header, or a CSI's aux data when it holds one (a CSI
    /// made by `tabix -C`); `None` for BAI and for CSI without aux (made for BAM or BCF).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the byte of the CSI's aux (which starts at byte 16 of the
    /// decompressed index) where meta that is there cannot be read.
    pub fn tabix(&self) -> Result<Option<tbi::Meta>, Error> {
        if let Some(m) = &self.tabix {
            return Ok(Some(m.clone()));
        }
        if self.kind != Kind::Csi || self.aux.is_empty() {
            return Ok(None);
        }
        tbi::Meta::from_bytes(&self.aux).map(Some).map_err(
            |tbi::MetaError {
                 offset: at,
                 message,
             }| Error::Invalid {
                name: self.name.clone(),
                offset: 16 + at as u64,
                message,
                compressed: true,
            },
        )
    }

    /// The trailing count of reads without coordinates, if the file has it and it was read
    /// (only a load of [`Wanted::all`] reads it).
    pub fn n_no_coor(&self) -> Option<u64> {
        self.n_no_coor
    }

    fn pseudo(&self, tid: usize) -> Option<Bin<'_>> {
        self.refs
            .get(tid)?
            .bins
            .get(binning::pseudo_bin(self.depth))
    }

    /// The pseudo-bin's read counts for reference `tid`, as `hts_idx_get_stat` gives them;
    /// `None` when the reference has no pseudo-bin (or it holds fewer than two pairs) or `tid`
    /// is beyond the index.
    pub fn mapped_unmapped(&self, tid: usize) -> Option<ReadCounts> {
        let p = self.pseudo(tid)?.chunks.get(1)?;
        Some(ReadCounts {
            mapped: p.u,
            unmapped: p.v,
        })
    }

    /// The pseudo-bin's `unmapped_beg` and `unmapped_end`: the virtual offsets of the first
    /// record of reference `tid` and just past its last.
    pub fn reference_span(&self, tid: usize) -> Option<Chunk> {
        let p = self.pseudo(tid)?.chunks.first()?;
        Some(Chunk::from_raw(p.u, p.v))
    }

    /// Every compressed offset the index names that must be a BGZF block start: chunk starts and
    /// ends, linear-index entries, CSI loffsets and the pseudo-bin's two offsets. Sorted, without
    /// duplicates. Bins numbered out of range are left out (htslib never reads them, and
    /// their offsets may be garbage).
    pub fn block_starts(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for r in &self.refs {
            self.push_block_starts(r, &mut out);
        }
        // The offsets come in sorted runs (the linear index, each bin level in position order,
        // reference after reference): the stable sort merges runs, where an unstable sort of
        // the 0.5 M offsets of a whole-genome VCF's TBI took a fifth of a 10-region query.
        out.sort();
        out.dedup();
        out
    }

    /// [`Index::block_starts`] of reference `tid` alone (empty for one not loaded): for
    /// planning the regions on the references loaded so far while the rest of the index
    /// arrives.
    pub fn block_starts_of(&self, tid: usize) -> Vec<u64> {
        let mut out = Vec::new();
        if let Some(r) = self.refs.get(tid) {
            self.push_block_starts(r, &mut out);
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    fn push_block_starts(&self, r: &Reference, out: &mut Vec<u64>) {
        let n_bins = binning::bin_count(self.depth);
        let pseudo = binning::pseudo_bin(self.depth);
        // Neighbouring entries often name the same block: repeats in a row are left out here.
        let push = |out: &mut Vec<u64>, c: u64| {
            if out.last() != Some(&c) {
                out.push(c);
            }
        };
        if let Some(linear) = &r.linear {
            for &o in linear.iter() {
                push(out, o >> 16);
            }
        }
        for (id, bin) in r.bins.iter() {
            if id < n_bins {
                if self.kind == Kind::Csi {
                    push(out, bin.loffset >> 16);
                }
                for p in bin.chunks {
                    push(out, p.u >> 16);
                    push(out, p.v >> 16);
                }
            } else if id == pseudo {
                if let Some(p) = bin.chunks.first() {
                    out.push(p.u >> 16);
                    out.push(p.v >> 16);
                }
            }
        }
    }
}
