//! The physical minimum of a query: the exact bytes of the BGZF blocks the index says are
//! needed (the end block at its true size), plus the header and the index.

use std::path::{Path, PathBuf};

pub struct Minimum {
    bam: PathBuf,
}

impl Minimum {
    pub fn new(bam: &Path) -> Result<Minimum, String> {
        Ok(Minimum {
            bam: bam.to_path_buf(),
        })
    }

    /// (bytes, spans) for a list of regions.
    pub fn of(&self, _regions: &[String]) -> Result<(u64, usize), String> {
        Err(format!("{}: not computed yet", self.bam.display()))
    }
}
