//! `samtools idxstats`: mapped and unmapped read counts per reference, from the index's
//! pseudo-bins when there is an index (no record is read: on a remote file only the header and
//! the index are fetched), else by reading every record, as samtools falls back to.

use std::io::{self, Write};

use bam::{Error, Header, Reader};

/// One row: name, length, mapped, unmapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The reference name.
    pub name: Vec<u8>,
    /// Its length.
    pub len: u64,
    /// Mapped records placed on it.
    pub mapped: u64,
    /// Unmapped records placed on it (at their mate's position).
    pub unmapped: u64,
}

/// The table `idxstats` prints: a row per reference, then the `*` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdxStats {
    /// One row per reference, in header order.
    pub refs: Vec<Row>,
    /// `*`: mapped and unmapped counts of records without a reference.
    pub unplaced: (u64, u64),
}

/// Why the record-reading method failed.
#[derive(Debug)]
pub enum SlowError {
    /// Reading failed.
    Read(Error),
    /// A reference's records are not together (samtools: "file is not position sorted").
    NotSorted,
}

impl IdxStats {
    /// From the loaded index: `hts_idx_get_stat` per reference (0 and 0 without a pseudo-bin)
    /// and `n_no_coor` for `*`. A remote file's header and index may come from the cache: call
    /// [`Reader::confirm`] before showing these (an `Error::Changed` there means they were
    /// another version's).
    pub fn from_index(reader: &Reader) -> Option<IdxStats> {
        let index = reader.index()?;
        let refs = reader
            .header()
            .refs()
            .iter()
            .enumerate()
            .map(|(tid, r)| {
                let (mapped, unmapped) = index.mapped_unmapped(tid).unwrap_or((0, 0));
                Row {
                    name: r.name.clone(),
                    len: u64::from(r.len),
                    mapped,
                    unmapped,
                }
            })
            .collect();
        Some(IdxStats {
            refs,
            unplaced: (0, index.n_no_coor().unwrap_or(0)),
        })
    }

    /// By reading every record from where the reader is (`slow_idxstats`).
    pub fn by_reading(reader: &mut Reader) -> std::result::Result<IdxStats, SlowError> {
        let header: Header = reader.header().clone();
        let n = header.refs().len();
        // Slot 0 is tid -1.
        let mut counts = vec![[0u64; 2]; n + 1];
        let mut last_tid = -2i64;
        while let Some(r) = reader.read_record().map_err(SlowError::Read)? {
            let tid = i64::from(r.ref_id());
            let slot = (tid + 1) as usize;
            if tid != last_tid {
                if last_tid >= -1 && counts[slot][0] + counts[slot][1] > 0 {
                    return Err(SlowError::NotSorted);
                }
                last_tid = tid;
            }
            counts[slot][usize::from(r.flag() & 0x4 != 0)] += 1;
        }
        let refs = header
            .refs()
            .iter()
            .zip(&counts[1..])
            .map(|(r, c)| Row {
                name: r.name.clone(),
                len: u64::from(r.len),
                mapped: c[0],
                unmapped: c[1],
            })
            .collect();
        Ok(IdxStats {
            refs,
            unplaced: (counts[0][0], counts[0][1]),
        })
    }

    /// Prints the table: `name\tlength\tmapped\tunmapped` lines, `*` last.
    pub fn write(&self, out: &mut impl Write) -> io::Result<()> {
        for r in &self.refs {
            out.write_all(&r.name)?;
            writeln!(out, "\t{}\t{}\t{}", r.len, r.mapped, r.unmapped)?;
        }
        writeln!(out, "*\t0\t{}\t{}", self.unplaced.0, self.unplaced.1)
    }
}
