//! The physical minimum of a query: the header's blocks, the index bytes through the last
//! reference the query names (BAI stores references one after another), and, for each region,
//! the blocks from its first chunk's start to the block holding the first record past its end
//! (where reading stops), the end block at its true size.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use bam::{OpenOptions, Reader};
use bgzf::VirtualOffset;
use region::{parse_region, Region};

pub struct Minimum {
    bam: PathBuf,
    reader: Reader,
    /// For each reference, the BAI offset where its data ends.
    bai_ref_ends: Vec<u64>,
    header_bytes: u64,
}

/// The minimum of one query.
#[derive(Debug, Clone, Copy, Default)]
pub struct Needed {
    /// Header + index + data.
    pub bytes: u64,
    pub index_bytes: u64,
    pub data_bytes: u64,
}

/// The compressed size of the block at `coffset`.
fn block_len(file: &mut File, name: &str, coffset: u64) -> Result<u64, String> {
    match bgzf::Blocks::new(file, name, coffset).next() {
        Some(Ok(block)) => Ok(block.bytes().len() as u64),
        Some(Err(e)) => Err(e.to_string()),
        None => Err(format!("{name}: no block at {coffset}")),
    }
}

/// The exclusive byte end of data read up to `end`: its block read whole, at its true size.
fn exact_end(file: &mut File, name: &str, end: VirtualOffset) -> Result<u64, String> {
    if end.uoffset() == 0 {
        Ok(end.coffset())
    } else {
        Ok(end.coffset() + block_len(file, name, end.coffset())?)
    }
}

/// Where each reference's data ends in a BAI, walked by the format (a second reading of the
/// index, independent of the loader under test).
fn bai_ref_ends(bytes: &[u8]) -> Result<Vec<u64>, String> {
    let mut at = 8usize;
    let u32_at = |p: usize| -> Result<usize, String> {
        bytes
            .get(p..p + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(|| "BAI cut short".to_string())
    };
    if bytes.get(..4) != Some(b"BAI\x01") {
        return Err("not a BAI".into());
    }
    let n_ref = u32_at(4)?;
    let mut ends = Vec::with_capacity(n_ref);
    for _ in 0..n_ref {
        let n_bin = u32_at(at)?;
        at += 4;
        for _ in 0..n_bin {
            let n_chunk = u32_at(at + 4)?;
            at += 8 + 16 * n_chunk;
        }
        let n_intv = u32_at(at)?;
        at += 4 + 8 * n_intv;
        ends.push(at as u64);
    }
    Ok(ends)
}

impl Minimum {
    pub fn new(bam: &Path) -> Result<Minimum, String> {
        let name = bam.display().to_string();
        let mut reader = Reader::open(&name, &OpenOptions::default()).map_err(|e| e.to_string())?;
        let bai = format!("{name}.bai");
        reader.load_index(Some(&bai)).map_err(|e| e.to_string())?;
        let mut bai_bytes = Vec::new();
        File::open(&bai)
            .and_then(|mut f| f.read_to_end(&mut bai_bytes))
            .map_err(|e| format!("{bai}: {e}"))?;
        // The header is read from the first block(s): up to the block holding the first record.
        let mut file = File::open(bam).map_err(|e| format!("{name}: {e}"))?;
        let first = reader
            .confirm()
            .map_err(|e| e.to_string())?
            .index()
            .and_then(|i| i.first_record_start())
            .unwrap_or_default();
        let header_bytes = exact_end(&mut file, &name, first)?;
        Ok(Minimum {
            bam: bam.to_path_buf(),
            reader,
            bai_ref_ends: bai_ref_ends(&bai_bytes)?,
            header_bytes,
        })
    }

    /// The minimum bytes of a query of `regions`.
    pub fn of(&mut self, regions: &[String]) -> Result<Needed, String> {
        let name = self.bam.display().to_string();
        let mut file = File::open(&self.bam).map_err(|e| format!("{name}: {e}"))?;
        let mut ranges = Vec::new();
        let mut last_tid = None;
        for r in regions {
            let Ok(target @ Region::Ref { tid, .. }) = parse_region(r, self.reader.header()) else {
                continue;
            };
            last_tid = last_tid.max(Some(tid));
            let mut q = self.reader.query(target).map_err(|e| e.to_string())?;
            let chunks = q.plan().regions[0].chunks.clone();
            while q.next_record().map_err(|e| e.to_string())?.is_some() {}
            drop(q);
            // Where reading stopped: just past the record that ended the region.
            let stop = self.reader.virtual_offset();
            let stop_end = exact_end(&mut file, &name, stop)?;
            for c in chunks.iter().filter(|c| c.start < stop) {
                let end = exact_end(&mut file, &name, c.end)?.min(stop_end);
                ranges.push((c.start.coffset(), end));
            }
        }
        ranges.sort_unstable();
        let mut data = 0u64;
        let mut covered_to = 0u64;
        for (a, b) in ranges {
            let a = a.max(covered_to);
            if b > a {
                data += b - a;
                covered_to = b;
            }
        }
        let index_bytes = match last_tid {
            Some(t) => self.bai_ref_ends.get(t.get()).copied().unwrap_or(0),
            None => 0,
        };
        Ok(Needed {
            bytes: data + self.header_bytes + index_bytes,
            index_bytes,
            data_bytes: data,
        })
    }
}
