//! The physical minimum of a query: the exact bytes of the BGZF blocks the index says are
//! needed (the end block at its true size), plus the header's blocks and the index, and the
//! number of spans our planner makes of them.

use std::fs::File;
use std::path::{Path, PathBuf};

use bam::bgzf::{self, VirtualOffset};
use bam::index::{span, Chunk};
use bam::{parse_region, OpenOptions, Reader, Target};

pub struct Minimum {
    bam: PathBuf,
    reader: Reader,
    index_size: u64,
    header_bytes: u64,
}

/// The compressed size of the block at `coffset`.
fn block_len(file: &mut File, name: &str, coffset: u64) -> Result<u64, String> {
    match bgzf::Blocks::new(file, name, coffset).next() {
        Some(Ok(block)) => Ok(block.bytes().len() as u64),
        Some(Err(e)) => Err(e.to_string()),
        None => Err(format!("{name}: no block at {coffset}")),
    }
}

/// The exclusive byte end of a chunk's data: its end block read whole, at its true size.
fn exact_end(file: &mut File, name: &str, end: VirtualOffset) -> Result<u64, String> {
    if end.uoffset() == 0 {
        Ok(end.coffset())
    } else {
        Ok(end.coffset() + block_len(file, name, end.coffset())?)
    }
}

impl Minimum {
    pub fn new(bam: &Path) -> Result<Minimum, String> {
        let name = bam.display().to_string();
        let mut reader = Reader::open(&name, &OpenOptions::default()).map_err(|e| e.to_string())?;
        let bai = format!("{name}.bai");
        reader.load_index(Some(&bai)).map_err(|e| e.to_string())?;
        let index_size = std::fs::metadata(&bai)
            .map_err(|e| format!("{bai}: {e}"))?
            .len();
        // The header is read from the first block(s): up to the block holding the first record.
        let mut file = File::open(bam).map_err(|e| format!("{name}: {e}"))?;
        let first = reader
            .index()
            .and_then(|i| i.first_record_start())
            .unwrap_or_default();
        let header_bytes = exact_end(&mut file, &name, first)?;
        Ok(Minimum {
            bam: bam.to_path_buf(),
            reader,
            index_size,
            header_bytes,
        })
    }

    /// (bytes, spans) for a list of regions: the union of the needed blocks plus header and index.
    pub fn of(&self, regions: &[String]) -> Result<(u64, usize), String> {
        let name = self.bam.display().to_string();
        let reader = &self.reader;
        let index = reader.index().ok_or("no index")?;
        let mut chunks: Vec<Chunk> = Vec::new();
        for r in regions {
            if let Ok(Target::Ref { tid, beg, end }) = parse_region(r, reader.header()) {
                chunks.extend(index.query(tid, beg, end));
            }
        }
        let mut file = File::open(&self.bam).map_err(|e| format!("{name}: {e}"))?;
        let mut ranges = Vec::with_capacity(chunks.len());
        for c in &chunks {
            ranges.push((c.start.coffset(), exact_end(&mut file, &name, c.end)?));
        }
        ranges.sort_unstable();
        let mut bytes = 0u64;
        let mut covered_to = 0u64;
        for (a, b) in ranges {
            let a = a.max(covered_to);
            if b > a {
                bytes += b - a;
                covered_to = b;
            }
        }
        let size = file.metadata().map_err(|e| e.to_string())?.len();
        let starts = index.block_starts();
        let spans = span::plan(&chunks, &starts, size, &span::Options::default()).len();
        Ok((bytes + self.header_bytes + self.index_size, spans))
    }
}
