//! Which references a load keeps.

/// The references to keep when loading an index (see [`crate::Loader`]).
///
/// BAI and CSI store references one after another, so a load that wants only some of them
/// skips the others' bins without keeping them and stops right after the last one wanted.
/// [`Wanted::all`] reads the whole index, including the trailing count of unplaced reads; it is
/// what the regions `*` and `.` (and any whole-index statistics) need.
///
/// ```
/// use index::Wanted;
/// let w = Wanted::refs([7, 2, 7]);
/// assert_eq!(w.tids(), Some(&[2, 7][..]));
/// assert!(w.contains(2) && !w.contains(3));
/// assert_eq!(w.union(&Wanted::refs([3])).tids(), Some(&[2, 3, 7][..]));
/// assert!(Wanted::all().contains(1_000_000));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wanted(Repr);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr {
    All,
    /// Sorted, without duplicates.
    Refs(Vec<usize>),
}

impl Wanted {
    /// Every reference and the trailing `n_no_coor`: the whole index.
    pub fn all() -> Wanted {
        Wanted(Repr::All)
    }

    /// No reference: a load reads only the header (format, scheme, number of references).
    pub fn none() -> Wanted {
        Wanted(Repr::Refs(Vec::new()))
    }

    /// The references with these ids (in any order, repeats allowed).
    pub fn refs(tids: impl IntoIterator<Item = usize>) -> Wanted {
        let mut v: Vec<usize> = tids.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        Wanted(Repr::Refs(v))
    }

    /// True for [`Wanted::all`].
    pub fn is_all(&self) -> bool {
        matches!(self.0, Repr::All)
    }

    /// Whether reference `tid` is wanted.
    pub fn contains(&self, tid: usize) -> bool {
        match &self.0 {
            Repr::All => true,
            Repr::Refs(v) => v.binary_search(&tid).is_ok(),
        }
    }

    /// The wanted ids in increasing order; `None` for [`Wanted::all`].
    pub fn tids(&self) -> Option<&[usize]> {
        match &self.0 {
            Repr::All => None,
            Repr::Refs(v) => Some(v),
        }
    }

    /// Everything wanted by either.
    pub fn union(&self, other: &Wanted) -> Wanted {
        match (&self.0, &other.0) {
            (Repr::Refs(a), Repr::Refs(b)) => Wanted::refs(a.iter().chain(b).copied()),
            _ => Wanted::all(),
        }
    }

    /// The wanted ids below `n_ref` (what a file with `n_ref` references can hold).
    pub(crate) fn clip(&self, n_ref: usize) -> Wanted {
        match &self.0 {
            Repr::All => Wanted::all(),
            Repr::Refs(v) => Wanted(Repr::Refs(
                v.iter().copied().take_while(|&t| t < n_ref).collect(),
            )),
        }
    }
}

impl FromIterator<usize> for Wanted {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Wanted {
        Wanted::refs(iter)
    }
}
