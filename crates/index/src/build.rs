//! Building a BAI or CSI index while a BAM file is written (or read), as htslib 1.16's
//! `hts_idx_push` / `hts_idx_finish` do: the same bins, chunks, linear index, pseudo-bin and
//! merging of small bins, and the same bin order, so that the saved index is byte-identical to
//! what `samtools index` makes of the same file.
//!
//! ```
//! use index::build::{Builder, Scheme};
//! let mut b = Builder::new(Scheme::Bai, 1, 100 << 16);
//! // One mapped record at [10, 60) on reference 0, ending at virtual offset 200<<16.
//! b.push(0, 10, 60, 200 << 16, true).unwrap();
//! let index = b.finish(300 << 16);
//! let mut bytes = Vec::new();
//! index.write(&mut bytes).unwrap();
//! assert_eq!(&bytes[..4], b"BAI\x01");
//! assert_eq!(index::Index::from_bytes("x.bai", &bytes).unwrap().mapped_unmapped(0).unwrap().mapped, 1);
//! ```

mod finish;
mod save;

use std::fmt;

pub use save::BuiltIndex;

use crate::bin_table::BinTable;
use crate::binning;
use finish::{compress_bins, fill_linear_and_loffsets};

/// htslib's `HTS_MIN_MARKER_DIST`: a bin whose chunks span less than this many compressed bytes
/// is merged into its parent.
const MIN_MARKER_DIST: u64 = 0x10000;

/// Which index to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// BAI: min_shift 14, depth 5, with a linear index.
    Bai,
    /// CSI with the given min_shift and depth.
    Csi {
        /// The width of the smallest bins, as a power of two.
        min_shift: u32,
        /// The levels below the root.
        depth: u32,
    },
}

impl Scheme {
    /// The CSI scheme htslib picks for references of these lengths: depth grows until
    /// `2^(min_shift + 3 * depth)` covers the longest reference plus 256.
    ///
    /// ```
    /// use index::build::Scheme;
    /// assert_eq!(Scheme::csi_for(14, [1000u64]), Scheme::Csi { min_shift: 14, depth: 0 });
    /// assert_eq!(Scheme::csi_for(14, [249_000_000u64]), Scheme::Csi { min_shift: 14, depth: 5 });
    /// ```
    pub fn csi_for(min_shift: u32, lengths: impl IntoIterator<Item = u64>) -> Scheme {
        let max_len = lengths.into_iter().max().unwrap_or(0) + 256;
        let mut depth = 0;
        let mut s = 1u64 << min_shift;
        while max_len > s {
            depth += 1;
            s <<= 3;
        }
        Scheme::Csi { min_shift, depth }
    }

    fn geometry(self) -> (u32, u32) {
        match self {
            Scheme::Bai => (14, 5),
            Scheme::Csi { min_shift, depth } => (min_shift, depth),
        }
    }
}

/// Why a record cannot be added to the index (htslib's messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// A position beyond what the scheme can bin (BAI: 2^29).
    OutOfRange {
        /// The record's start, 0-based.
        beg: i64,
        /// The record's end (exclusive).
        end: i64,
        /// The index is a BAI (positions up to 2^29).
        bai: bool,
    },
    /// Records of a reference appear after records of another one.
    NotContiguous {
        /// The reference id.
        tid: i32,
    },
    /// Records without a reference are followed by placed ones.
    UnplacedNotLast {
        /// The reference id.
        tid: i32,
    },
    /// A record starts before the previous one.
    Unsorted {
        /// The reference id.
        tid: i32,
        /// The start of the record before it.
        previous: i64,
        /// The record's start, 0-based.
        beg: i64,
    },
    /// A record ends before it starts.
    EndBeforeStart {
        /// The reference id.
        tid: i32,
        /// The record's start, 0-based.
        beg: i64,
        /// The record's end (exclusive).
        end: i64,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BuildError::OutOfRange { beg, end, bai: true } => write!(
                f,
                "region {beg}..{end} cannot be stored in a bai index; try using a csi index"
            ),
            BuildError::OutOfRange { beg, end, bai: false } => write!(
                f,
                "region {beg}..{end} cannot be stored in a csi index; check that the header matches the data"
            ),
            BuildError::NotContiguous { tid } => write!(
                f,
                "records of reference #{} are not contiguous (the file is not sorted)",
                tid + 1
            ),
            BuildError::UnplacedNotLast { tid } => write!(
                f,
                "records without coordinates are followed by records of reference #{}",
                tid + 1
            ),
            BuildError::Unsorted { tid, previous, beg } => write!(
                f,
                "unsorted positions on reference #{}: {} followed by {}",
                tid + 1,
                previous + 1,
                beg + 1
            ),
            BuildError::EndBeforeStart { tid, beg, end } => write!(
                f,
                "invalid record on reference #{}: end {end} < begin {}",
                tid + 1,
                beg + 1
            ),
        }
    }
}

impl std::error::Error for BuildError {}

/// A bin's chunks as `(start, end)` virtual offsets (for the pseudo-bin: its two pairs).
type Chunks = Vec<(u64, u64)>;

#[derive(Debug, Default, Clone)]
struct Reference {
    bins: Option<BinTable<Bin>>,
    linear: Vec<u64>,
}

#[derive(Debug, Default, Clone)]
struct Bin {
    loffset: u64,
    chunks: Chunks,
}

/// htslib's `idx->z`: the state carried from one push to the next.
#[derive(Debug, Clone)]
struct State {
    save_tid: i32,
    last_tid: i32,
    save_bin: u32,
    last_bin: u32,
    save_off: u64,
    last_off: u64,
    off_beg: u64,
    last_coor: i64,
    n_mapped: u64,
    n_unmapped: u64,
}

/// Collects records (in file order) into an index.
#[derive(Debug, Clone)]
pub struct Builder {
    scheme: Scheme,
    min_shift: u32,
    depth: u32,
    n_bins: u32,
    refs: Vec<Reference>,
    n_no_coor: u64,
    z: State,
}

const NONE: u32 = u32::MAX;

impl Builder {
    /// An empty index for `n_refs` references whose first record starts at virtual offset
    /// `first` (just after the header).
    pub fn new(scheme: Scheme, n_refs: usize, first: u64) -> Builder {
        let (min_shift, depth) = scheme.geometry();
        Builder {
            scheme,
            min_shift,
            depth,
            n_bins: ((1u64 << (3 * depth + 3)) - 1) as u32 / 7,
            refs: vec![Reference::default(); n_refs],
            n_no_coor: 0,
            z: State {
                save_tid: -1,
                last_tid: -1,
                save_bin: NONE,
                last_bin: NONE,
                save_off: first,
                last_off: first,
                off_beg: first,
                last_coor: i64::from(u32::MAX),
                n_mapped: 0,
                n_unmapped: 0,
            },
        }
    }

    fn meta_bin(&self) -> u32 {
        self.n_bins + 1
    }

    /// htslib's `hts_idx_amend_last`: the record about to be pushed starts at `offset` (a new
    /// block, when the writer ended the previous one before it) rather than where the previous
    /// record ended.
    pub fn amend_last(&mut self, offset: u64) {
        self.z.last_off = offset;
    }

    /// Adds a record covering `[beg, end)` on `tid` (-1: no reference) that ends at virtual
    /// offset `end_offset`. Records must come in file order, sorted by position.
    pub fn push(
        &mut self,
        tid: i32,
        beg: i64,
        end: i64,
        end_offset: u64,
        mapped: bool,
    ) -> Result<(), BuildError> {
        let (mut beg, mut end) = if tid < 0 { (-1, 0) } else { (beg, end) };
        let max = 1i64 << (self.min_shift + 3 * self.depth);
        if tid >= 0 && (beg > max || end > max) {
            return Err(BuildError::OutOfRange {
                beg,
                end,
                bai: self.scheme == Scheme::Bai,
            });
        }
        if tid >= 0 && tid as usize >= self.refs.len() {
            self.refs.resize(tid as usize + 1, Reference::default());
        }
        if self.z.last_tid != tid || (self.z.last_tid >= 0 && tid < 0) {
            if tid >= 0 && self.n_no_coor > 0 {
                return Err(BuildError::UnplacedNotLast { tid });
            }
            if tid >= 0 && self.refs[tid as usize].bins.is_some() {
                return Err(BuildError::NotContiguous { tid });
            }
            self.z.last_tid = tid;
            self.z.last_bin = NONE;
        } else if tid >= 0 && self.z.last_coor > beg {
            return Err(BuildError::Unsorted {
                tid,
                previous: self.z.last_coor,
                beg,
            });
        }
        if end < beg {
            return Err(BuildError::EndBeforeStart { tid, beg, end });
        }
        if tid >= 0 {
            let min_shift = self.min_shift;
            let last_off = self.z.last_off;
            let r = &mut self.refs[tid as usize];
            r.bins.get_or_insert_with(BinTable::default);
            beg = beg.max(0);
            if end <= 0 {
                end = 1;
            }
            insert_linear(&mut r.linear, beg, end, last_off, min_shift);
        } else {
            self.n_no_coor += 1;
        }
        // `[-1, 0)` (a record without a reference) lands in the bin left of the first
        // bottom-level bin, as in htslib.
        let bin = binning::reg2bin_signed(beg, end, self.min_shift, self.depth);
        if self.z.last_bin != bin {
            if self.z.save_bin != NONE {
                let (tid, bin, chunk) = (
                    self.z.save_tid,
                    self.z.save_bin,
                    (self.z.save_off, self.z.last_off),
                );
                self.insert_chunk(tid, bin, chunk);
            }
            if self.z.last_bin == NONE && self.z.save_bin != NONE {
                // A change of reference: the previous one's pseudo-bin.
                let (tid, meta) = (self.z.save_tid, self.meta_bin());
                let span = (self.z.off_beg, self.z.last_off);
                let counts = (self.z.n_mapped, self.z.n_unmapped);
                self.insert_chunk(tid, meta, span);
                self.insert_chunk(tid, meta, counts);
                self.z.n_mapped = 0;
                self.z.n_unmapped = 0;
                self.z.off_beg = self.z.last_off;
            }
            self.z.save_off = self.z.last_off;
            self.z.save_bin = bin;
            self.z.last_bin = bin;
            self.z.save_tid = tid;
        }
        if mapped {
            self.z.n_mapped += 1;
        } else {
            self.z.n_unmapped += 1;
        }
        self.z.last_off = end_offset;
        self.z.last_coor = beg;
        Ok(())
    }

    /// `insert_to_b`; records without a reference have no bins.
    fn insert_chunk(&mut self, tid: i32, bin: u32, chunk: (u64, u64)) {
        if tid < 0 {
            return;
        }
        if let Some(table) = self
            .refs
            .get_mut(tid as usize)
            .and_then(|r| r.bins.as_mut())
        {
            table.entry(bin, Bin::default).chunks.push(chunk);
        }
    }

    /// Ends the index: `end` is the virtual offset just past the last record.
    pub fn finish(mut self, end: u64) -> BuiltIndex {
        if self.z.save_tid >= 0 {
            let (tid, meta) = (self.z.save_tid, self.meta_bin());
            let (save_bin, save_off, off_beg) = (self.z.save_bin, self.z.save_off, self.z.off_beg);
            let counts = (self.z.n_mapped, self.z.n_unmapped);
            self.insert_chunk(tid, save_bin, (save_off, end));
            self.insert_chunk(tid, meta, (off_beg, end));
            self.insert_chunk(tid, meta, counts);
        }
        let (n_bins, depth) = (self.n_bins, self.depth);
        for r in &mut self.refs {
            fill_linear_and_loffsets(r, n_bins, depth);
            compress_bins(r, n_bins, depth);
        }
        BuiltIndex {
            scheme: self.scheme,
            min_shift: self.min_shift,
            depth: self.depth,
            refs: self.refs,
            n_no_coor: self.n_no_coor,
        }
    }
}

/// `insert_to_l`: windows the record covers that have no offset yet get its start.
fn insert_linear(linear: &mut Vec<u64>, beg: i64, end: i64, offset: u64, min_shift: u32) {
    let first = (beg >> min_shift) as usize;
    let last = ((end - 1) >> min_shift) as usize;
    if linear.len() < last + 1 {
        linear.resize(last + 1, u64::MAX);
    }
    for slot in &mut linear[first..=last] {
        if *slot == u64::MAX {
            *slot = offset;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vo(c: u64, u: u64) -> u64 {
        c << 16 | u
    }

    #[test]
    fn unplaced_reads_counted_and_in_the_bin_left_of_the_first() {
        assert_eq!(binning::reg2bin_signed(-1, 0, 14, 5), 4680);
        let mut b = Builder::new(Scheme::Bai, 2, vo(0, 50));
        b.push(0, 100, 200, vo(0, 150), true).unwrap();
        b.push(0, 150, 160, vo(0, 250), false).unwrap();
        b.push(-1, 0, 0, vo(0, 300), false).unwrap();
        let built = b.finish(vo(0, 300));
        let mut bytes = Vec::new();
        built.write(&mut bytes).unwrap();
        let idx = crate::Index::from_bytes("t.bai", &bytes).unwrap();
        assert_eq!(idx.n_no_coor(), Some(1));
        assert_eq!(
            idx.mapped_unmapped(0).map(|c| (c.mapped, c.unmapped)),
            Some((1, 1))
        );
        assert_eq!(idx.mapped_unmapped(1), None);
        let span = idx.reference_span(0).unwrap();
        assert_eq!((span.start.raw(), span.end.raw()), (vo(0, 50), vo(0, 250)));
    }

    #[test]
    fn order_and_range_errors() {
        let mut b = Builder::new(Scheme::Bai, 2, 0);
        b.push(1, 10, 20, 1, true).unwrap();
        assert_eq!(
            b.push(1, 5, 20, 2, true),
            Err(BuildError::Unsorted {
                tid: 1,
                previous: 10,
                beg: 5
            })
        );
        b.push(0, 10, 20, 3, true).unwrap();
        assert_eq!(
            b.push(1, 30, 40, 4, true),
            Err(BuildError::NotContiguous { tid: 1 })
        );
        assert!(matches!(
            b.push(0, 1 << 29, (1 << 29) + 5, 5, true),
            Err(BuildError::OutOfRange { bai: true, .. })
        ));
        b.push(-1, 0, 0, 6, false).unwrap();
        assert_eq!(
            b.push(0, 50, 60, 7, true),
            Err(BuildError::UnplacedNotLast { tid: 0 })
        );
    }

    #[test]
    fn csi_depth_follows_the_longest_reference() {
        assert_eq!(
            Scheme::csi_for(14, [16384 - 256]),
            Scheme::Csi {
                min_shift: 14,
                depth: 0
            }
        );
        assert_eq!(
            Scheme::csi_for(14, [16384 - 255]),
            Scheme::Csi {
                min_shift: 14,
                depth: 1
            }
        );
        assert_eq!(binning::reg2bin_signed(5, 10, 14, 0), 0);
    }
}
