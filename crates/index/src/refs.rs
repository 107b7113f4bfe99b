//! The references of a loaded index, which may be only some of the file's: what was loaded,
//! and the checks that keep a query from reading "no records" out of a reference that was
//! skipped.

use crate::{Bins, Chunk, Error, Index, Reference, Wanted};

/// A loaded reference with no bins and no linear index: the common value of every empty one,
/// so that empty references cost no memory (a hostile `n_ref` over a stream of zeros must not
/// turn 4 bytes of input into a 50-byte entry each).
static EMPTY: Reference = Reference {
    bins: Bins::new(),
    linear: None,
};

/// The index's references: how many the file has, which were loaded, and the loaded ones
/// that hold anything.
#[derive(Clone, Debug)]
pub(crate) struct Refs {
    n_ref: usize,
    /// Ids below `n_ref` whose entries were parsed (all of them for [`Wanted::all`]).
    loaded: Wanted,
    /// The loaded references that are not empty, by increasing id.
    kept: Vec<(usize, Reference)>,
}

impl Refs {
    pub(crate) fn new(n_ref: usize, loaded: &Wanted) -> Refs {
        Refs {
            n_ref,
            loaded: loaded.clip(n_ref),
            kept: Vec::new(),
        }
    }

    /// Adds a loaded reference; ids must come in increasing order.
    pub(crate) fn push(&mut self, tid: usize, r: Reference) {
        let empty = r.bins.is_empty() && r.linear.as_ref().is_none_or(Vec::is_empty);
        if !empty {
            self.kept.push((tid, r));
        }
    }

    /// The number of references in the file (loaded or not).
    pub(crate) fn len(&self) -> usize {
        self.n_ref
    }

    /// A loaded reference; `None` beyond the file's references and for one that was not
    /// loaded (so a query there gets htslib's "no iterator", never an empty chunk list).
    pub(crate) fn get(&self, tid: usize) -> Option<&Reference> {
        if tid >= self.n_ref || !self.loaded.contains(tid) {
            return None;
        }
        match self.kept.binary_search_by_key(&tid, |(t, _)| *t) {
            Ok(i) => Some(&self.kept[i].1),
            Err(_) => Some(&EMPTY),
        }
    }
}

/// The loaded references that hold anything, by increasing id.
impl<'a> IntoIterator for &'a Refs {
    type Item = &'a Reference;
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (usize, Reference)>,
        fn(&'a (usize, Reference)) -> &'a Reference,
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.kept.iter().map(|(_, r)| r)
    }
}

/// Questions about how much of the file an [`Index`] holds (see [`crate::Loader`]).
impl Index {
    /// The references that were loaded: [`Wanted::all`] for a whole index, else the ids below
    /// [`Index::n_refs`] that were asked for.
    pub fn loaded(&self) -> &Wanted {
        &self.refs.loaded
    }

    /// Whether a query on `tid` can be answered: the reference was loaded, or it is beyond the
    /// index's references (where htslib has no iterator, whatever else the file holds).
    pub fn is_loaded(&self, tid: usize) -> bool {
        tid >= self.refs.n_ref || self.refs.loaded.contains(tid)
    }

    /// True when the whole index was loaded (every reference and the trailing `n_no_coor`),
    /// as [`Index::unplaced_start`] and [`Index::first_record_start`] need.
    pub fn is_complete(&self) -> bool {
        self.refs.loaded.is_all()
    }

    /// Checks that everything `wanted` names was loaded.
    ///
    /// # Errors
    /// [`Error::NotLoaded`] naming the first reference missing (or `None` when the whole index
    /// is wanted and only part was loaded).
    pub fn require(&self, wanted: &Wanted) -> Result<(), Error> {
        let missing = match wanted.tids() {
            None => (!self.is_complete()).then_some(None),
            Some(tids) => tids.iter().find(|&&t| !self.is_loaded(t)).map(|&t| Some(t)),
        };
        match missing {
            None => Ok(()),
            Some(tid) => Err(Error::NotLoaded {
                name: self.name().to_string(),
                tid,
            }),
        }
    }

    /// [`Index::query_checked`] for an index that may be partial: a reference that was not
    /// loaded is an error, never "no chunks".
    ///
    /// # Errors
    /// [`Error::NotLoaded`] when `tid` is one of the index's references but was not loaded.
    pub fn query_loaded(
        &self,
        tid: usize,
        beg: u64,
        end: u64,
    ) -> Result<Option<Vec<Chunk>>, Error> {
        self.require(&Wanted::refs([tid]))?;
        Ok(self.query_checked(tid, beg, end))
    }
}
