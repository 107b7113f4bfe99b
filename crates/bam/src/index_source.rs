//! Finding a BAM's index and fetching it: the names samtools looks for, and, for a remote file,
//! the first bytes of each candidate requested when the BAM is opened, beside its header and
//! EOF marker, so that opening costs one round trip.

use index::Index;

use crate::{Error, Result};

/// The first request for an index asks for this much: the references at the start of a BAI
/// of a large BAM (chr1 of a whole genome takes about 0.2 MB), or all of a small one.
const FIRST_PIECE: u64 = 256 * 1024;

/// Which index a reader will use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum IndexHint {
    /// None is needed (a whole-file read): nothing is fetched ahead.
    #[default]
    None,
    /// Found next to the BAM, as samtools looks for it.
    Auto,
    /// This path or URL.
    At(String),
}

/// `x.bam` + `.bai` -> `x.bam.bai`; for a URL the suffix goes before `?query` and `#fragment`.
pub fn sibling(location: &str, ext: &str) -> String {
    if hfile::scheme_of(location).is_some() {
        let cut = location.find(['?', '#']).unwrap_or(location.len());
        format!("{}{}{}", &location[..cut], ext, &location[cut..])
    } else {
        format!("{location}{ext}")
    }
}

/// The names an index of `location` may have, in the order samtools tries them.
pub(crate) fn candidates(location: &str) -> Vec<String> {
    [".csi", ".bai"]
        .iter()
        .map(|ext| sibling(location, ext))
        .collect()
}

/// Index files opened (and, if remote, their first bytes requested) ahead of use.
pub(crate) struct Pending {
    /// `(location, opened)`, in the order they are tried; `Err` keeps an open failure for when
    /// the candidate's turn comes.
    tried: Vec<(String, Result<hfile::HFile>)>,
    explicit: bool,
}

impl Pending {
    /// Opens the candidates of `hint` and starts fetching their first bytes.
    pub(crate) fn start(
        location: &str,
        hint: &IndexHint,
        transport: &hfile::OpenOptions,
    ) -> Pending {
        let (names, explicit) = match hint {
            IndexHint::None => (Vec::new(), false),
            IndexHint::Auto => (candidates(location), false),
            IndexHint::At(at) => (vec![at.clone()], true),
        };
        let tried = names
            .into_iter()
            .map(|name| {
                let opened = hfile::open(&name, transport).map(|mut f| {
                    f.advise(std::slice::from_ref(&(0..FIRST_PIECE)));
                    f
                });
                (name, opened.map_err(Error::from))
            })
            .collect();
        Pending { tried, explicit }
    }

    /// True when this is the index `hint` asks for.
    pub(crate) fn matches(&self, explicit: Option<&str>) -> bool {
        match explicit {
            Some(at) => self.explicit && self.tried.first().is_some_and(|(n, _)| n == at),
            None => !self.explicit && !self.tried.is_empty(),
        }
    }

    /// Loads the first candidate that exists.
    pub(crate) fn load(self, location: &str) -> Result<Index> {
        let explicit = self.explicit;
        for (name, opened) in self.tried {
            let loaded = opened.and_then(|f| read_index(&name, f));
            match loaded {
                Ok(index) => return Ok(index),
                Err(e) if !explicit && e.is_not_found() => continue,
                Err(e) => return Err(e),
            }
        }
        Err(Error::NoIndex {
            name: location.to_string(),
        })
    }
}

/// Reads and parses a whole index (for a URL: bounded requests; nothing written to disk).
fn read_index(name: &str, mut file: hfile::HFile) -> Result<Index> {
    let bytes = file.read_to_end_vec()?;
    Index::from_bytes(name, &bytes).map_err(|source| Error::Index {
        name: name.to_string(),
        source,
    })
}
