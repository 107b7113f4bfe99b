//! A finished index and saving it as htslib does: BAI (uncompressed) or CSI (BGZF) for BAM,
//! TBI or CSI with tabix's column meta.

use std::io::{self, Write};

use super::{Reference, Scheme};
use crate::bin_table::BinTable;

/// A finished index, ready to be saved.
#[derive(Debug, Clone)]
pub struct BuiltIndex {
    pub(super) scheme: Scheme,
    pub(super) min_shift: u32,
    pub(super) depth: u32,
    pub(super) refs: Vec<Reference>,
    pub(super) n_no_coor: u64,
}

impl BuiltIndex {
    /// The scheme it was built with.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Writes the index as htslib saves it: a BAI uncompressed; a CSI as BGZF at htslib's
    /// default level.
    pub fn write<W: Write>(&self, out: W) -> io::Result<()> {
        match self.scheme {
            Scheme::Bai => {
                let mut out = io::BufWriter::new(out);
                out.write_all(b"BAI\x01")?;
                self.write_core(&mut out)?;
                out.flush()
            }
            Scheme::Csi { .. } => {
                let mut out = bgzf::Writer::new(out);
                out.write_all(b"CSI\x01")?;
                out.write_all(&(self.min_shift as i32).to_le_bytes())?;
                out.write_all(&(self.depth as i32).to_le_bytes())?;
                out.write_all(&0u32.to_le_bytes())?; // no auxiliary data for BAM
                self.write_core(&mut out)?;
                out.finish().map(drop)
            }
        }
    }

    /// Writes the index as tabix saves it, with its column meta (`meta`, as
    /// [`crate::tbi::Meta::to_bytes`] gives it): a BAI scheme as a TBI (BGZF, the meta after
    /// `n_ref`), a CSI with the meta as its aux data.
    pub fn write_tabix<W: Write>(&self, out: W, meta: &[u8]) -> io::Result<()> {
        let l_meta = i32::try_from(meta.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "tabix meta over 2 GiB"))?;
        let mut out = bgzf::Writer::new(out);
        match self.scheme {
            Scheme::Bai => {
                out.write_all(b"TBI\x01")?;
                out.write_all(&(self.refs.len() as i32).to_le_bytes())?;
                out.write_all(meta)?;
            }
            Scheme::Csi { .. } => {
                out.write_all(b"CSI\x01")?;
                out.write_all(&(self.min_shift as i32).to_le_bytes())?;
                out.write_all(&(self.depth as i32).to_le_bytes())?;
                out.write_all(&l_meta.to_le_bytes())?;
                out.write_all(meta)?;
                out.write_all(&(self.refs.len() as i32).to_le_bytes())?;
            }
        }
        self.write_refs(&mut out)?;
        out.finish().map(drop)
    }

    /// `idx_save_core`: references, their bins in table order, the linear index (BAI), and the
    /// count of records without coordinates.
    fn write_core<W: Write>(&self, out: &mut W) -> io::Result<()> {
        out.write_all(&(self.refs.len() as i32).to_le_bytes())?;
        self.write_refs(out)
    }

    /// [`BuiltIndex::write_core`] after `n_ref`.
    fn write_refs<W: Write>(&self, out: &mut W) -> io::Result<()> {
        let csi = self.scheme != Scheme::Bai;
        for r in &self.refs {
            let n_bin = r.bins.as_ref().map_or(0, BinTable::len);
            out.write_all(&(n_bin as i32).to_le_bytes())?;
            if let Some(table) = &r.bins {
                for (key, bin) in table.iter() {
                    out.write_all(&key.to_le_bytes())?;
                    if csi {
                        out.write_all(&bin.loffset.to_le_bytes())?;
                    }
                    out.write_all(&(bin.chunks.len() as i32).to_le_bytes())?;
                    for &(u, v) in &bin.chunks {
                        out.write_all(&u.to_le_bytes())?;
                        out.write_all(&v.to_le_bytes())?;
                    }
                }
            }
            if !csi {
                out.write_all(&(r.linear.len() as i32).to_le_bytes())?;
                for o in &r.linear {
                    out.write_all(&o.to_le_bytes())?;
                }
            }
        }
        out.write_all(&self.n_no_coor.to_le_bytes())
    }
}
