//! Tabix-indexed text (VCF, BED, GFF, SAM or any preset's columns), local or remote, queried
//! with the same region types as alignments (htslib's `tbx_itr_querys`, noodles-util's
//! `variant::io::Reader` for its text formats).

use region::Region;

use crate::{Options, Result};

/// An open tabix-indexed file: its index found as tabix finds it (`x.vcf.gz.csi`, `x.csi`,
/// `x.vcf.gz.tbi`, `x.tbi`, `##idx##`), or the options' index.
pub struct Reader {
    inner: tabix::Reader,
}

impl Reader {
    /// Opens `location` (a path or a URL hfile opens) and its index.
    pub fn open(location: &str, options: &Options) -> Result<Reader> {
        let inner = tabix::Reader::open(
            location,
            options.index.as_deref(),
            &options.transport_for_bam(),
        )?;
        Ok(Reader { inner })
    }

    /// The sequence names of the index, in its order: a [`Region`]'s `tid` indexes these
    /// ([`Reader::tid`]).
    pub fn names(&self) -> &[String] {
        self.inner.names()
    }

    /// The reference id of `name` in the index, if it holds it.
    pub fn tid(&self, name: &str) -> Option<region::RefId> {
        self.names()
            .iter()
            .position(|n| n == name)
            .map(region::RefId::new)
    }

    /// The header lines (those starting with the index's meta character), as tabix `-h`
    /// prints them.
    pub fn header(&mut self) -> Result<Vec<Vec<u8>>> {
        Ok(self.inner.header()?)
    }

    /// The lines overlapping `region` (`.`: every line, `*`: none placed).
    pub fn query(&mut self, region: &Region) -> Lines<'_> {
        Lines(self.inner.query_region(Some(*region)))
    }

    /// The lines overlapping a region string (`chr1:10,000-20,000`, as tabix parses it); a
    /// name the index does not hold gives no lines, as in tabix.
    pub fn query_str(&mut self, region: &str) -> Result<Lines<'_>> {
        Ok(Lines(self.inner.query(region)?))
    }
}

/// The lines of a query.
pub struct Lines<'r>(tabix::Query<'r>);

impl Lines<'_> {
    /// The next line, without its newline; `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>> {
        Ok(self.0.next_line()?)
    }
}
