//! `samtools idxstats`: mapped and unmapped read counts per reference, from the index's
//! pseudo-bins when there is an index (no record is read: on a remote file only the header and
//! the index are fetched), else by reading every record, as samtools falls back to. A CRAM's
//! records are always counted: its `.crai` holds no counts.

use std::io::{self, Write};

use bam::{Confirmed, Error, Flags, Header, Reader};
use index::ReadCounts;
use region::RefId;

use crate::warning::{reason, Warning};

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
    pub unplaced: ReadCounts,
}

/// Why `idxstats` of a file failed; the caller words each as samtools does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A BAM (or what is neither BAM nor CRAM) could not be opened: the reason.
    Open(String),
    /// A BAM's references' records are not together, found by reading them.
    NotSorted,
    /// Reading failed (for a CRAM, opening too, and records out of order): the reason.
    Process(String),
}

/// `samtools idxstats FILE`: the table for a BAM or a CRAM (told apart by their first bytes),
/// local, remote or a stream, through the facade's reader. A BAM's index is fetched beside its
/// header; without a usable one (told to `warn`), and for a CRAM (its `.crai` holds no
/// counts), the records are counted from the reader already open (a pipe or standard input is
/// read once, as samtools reads it), a CRAM's without reference or bases. A remote file's
/// cached part found stale is told to `warn`, and the file read again without the cache.
pub fn idxstats(
    file: &str,
    options: &hts::Options,
    warn: &mut dyn FnMut(Warning),
) -> Result<IdxStats, Failure> {
    let options = options.clone().without_bases(true);
    let open = options.clone().index_ahead(true);
    let mut reader = hts::alignment::Reader::open(file, &open).map_err(|e| match e {
        hts::Error::Bam(e) => Failure::Open(e.to_string()),
        // A CRAM that cannot be opened cannot be processed, in samtools' words.
        e => Failure::Process(reason(&e)),
    })?;
    let from_index = reader
        .bam_index()
        .map(|c| c.and_then(|c| IdxStats::from_index(&c)));
    if let Some(why) = reader.take_reopened() {
        warn(Warning::Stale(why));
    }
    match from_index {
        Ok(Some(stats)) => return Ok(stats),
        Ok(None) => {}
        Err(e) => warn(Warning::SlowMethod(e.to_string())),
    }
    let cram = reader.is_cram();
    let counted = match by_reading(&mut reader, warn) {
        // Found stale once records were being read: the facade read none of the cache's since.
        Err(Slow::Read(e)) if e.is_stale() => {
            warn(Warning::Stale(e.to_string()));
            hts::alignment::Reader::open(file, &options.no_cache(true))
                .map_err(Slow::Read)
                .and_then(|mut r| by_reading(&mut r, warn))
        }
        other => other,
    };
    counted.map_err(|e| match e {
        Slow::NotSorted if cram => Failure::Process("file is not position sorted".to_string()),
        Slow::NotSorted => Failure::NotSorted,
        Slow::Read(e) => Failure::Process(reason(&e)),
    })
}

/// Why reading the records failed, through the facade.
enum Slow {
    Read(hts::Error),
    NotSorted,
}

/// Counts every record from where the reader stands (`slow_idxstats`).
fn by_reading(
    reader: &mut hts::alignment::Reader,
    warn: &mut dyn FnMut(Warning),
) -> Result<IdxStats, Slow> {
    let counted = (|| {
        let mut records = reader.records().map_err(Slow::Read)?;
        let header = records.header().clone();
        let mut counter = Counter::new(header.refs().len());
        while let Some(r) = records.next_record_ref().map_err(Slow::Read)? {
            counter
                .add(r.ref_id(), r.flags())
                .map_err(|_| Slow::NotSorted)?;
        }
        let refs = header.refs().iter();
        Ok(counter.finish(refs.map(|r| (r.name.clone(), u64::from(r.len)))))
    })();
    if let Some(why) = reader.take_reopened() {
        warn(Warning::Stale(why));
    }
    counted
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
    /// and `n_no_coor` for `*`. A remote file's header and index may come from the cache, so
    /// they are taken from a reader shown current ([`Reader::confirm`]; an `Error::Changed`
    /// there means they were another version's).
    pub fn from_index(reader: &Confirmed<'_>) -> Option<IdxStats> {
        let index = reader.index()?;
        let refs = reader
            .header()
            .refs()
            .iter()
            .enumerate()
            .map(|(tid, r)| {
                let counts = index.mapped_unmapped(tid).unwrap_or_default();
                let (mapped, unmapped) = (counts.mapped, counts.unmapped);
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
            unplaced: ReadCounts {
                mapped: 0,
                unmapped: index.n_no_coor().unwrap_or(0),
            },
        })
    }

    /// By reading every record from where the reader is (`slow_idxstats`).
    pub fn by_reading(reader: &mut Reader) -> std::result::Result<IdxStats, SlowError> {
        let header: Header = reader.header().clone();
        let mut counter = Counter::new(header.refs().len());
        let mut records = reader.records().map_err(SlowError::Read)?;
        while let Some(r) = records.next_record_ref().map_err(SlowError::Read)? {
            counter.add(r.ref_id(), r.flags())?;
        }
        let refs = header
            .refs()
            .iter()
            .map(|r| (r.name.clone(), u64::from(r.len)));
        Ok(counter.finish(refs))
    }

    /// Prints the table: `name\tlength\tmapped\tunmapped` lines, `*` last.
    pub fn write(&self, out: &mut impl Write) -> io::Result<()> {
        for r in &self.refs {
            out.write_all(&r.name)?;
            writeln!(out, "\t{}\t{}\t{}", r.len, r.mapped, r.unmapped)?;
        }
        let ReadCounts { mapped, unmapped } = self.unplaced;
        writeln!(out, "*\t0\t{mapped}\t{unmapped}")
    }
}

/// `slow_idxstats`' counts, fed one record at a time (from any reader: BAM, or CRAM).
#[derive(Debug, Clone)]
pub struct Counter {
    /// Mapped and unmapped counts; slot 0 is tid -1.
    counts: Vec<[u64; 2]>,
    last_tid: i64,
}

impl Counter {
    /// For a header of `n` references.
    pub fn new(n: usize) -> Counter {
        Counter {
            counts: vec![[0u64; 2]; n + 1],
            last_tid: -2,
        }
    }

    /// Counts one record; a reference met again after another's records is an error.
    pub fn add(
        &mut self,
        ref_id: Option<RefId>,
        flags: Flags,
    ) -> std::result::Result<(), SlowError> {
        let tid = ref_id.map_or(-1, |t| t.get() as i64);
        let slot = usize::try_from(tid + 1)
            .unwrap_or(0)
            .min(self.counts.len() - 1);
        if tid != self.last_tid {
            if self.last_tid >= -1 && self.counts[slot][0] + self.counts[slot][1] > 0 {
                return Err(SlowError::NotSorted);
            }
            self.last_tid = tid;
        }
        self.counts[slot][usize::from(flags.is_unmapped())] += 1;
        Ok(())
    }

    /// The table, for the references' names and lengths in header order.
    pub fn finish(&self, refs: impl Iterator<Item = (Vec<u8>, u64)>) -> IdxStats {
        let refs = refs
            .zip(&self.counts[1..])
            .map(|((name, len), c)| Row {
                name,
                len,
                mapped: c[0],
                unmapped: c[1],
            })
            .collect();
        IdxStats {
            refs,
            unplaced: ReadCounts {
                mapped: self.counts[0][0],
                unmapped: self.counts[0][1],
            },
        }
    }
}
