//! The `.crai` index: gzipped text, one line a slice (reference id, alignment start and span,
//! the container's offset, the slice's offset within the container's blocks, its size), and
//! where a region query starts reading, as htslib's `cram_index_query` chooses.

use std::io::Read;

use crate::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CraiEntry {
    pub ref_id: i32,
    pub start: i64,
    pub span: i64,
    pub container: u64,
    pub slice: u64,
    pub size: u64,
}

/// Longest index text accepted (a line per slice: a whole genome's takes a few MB).
const MAX_TEXT: u64 = 1 << 30;

/// Reads a `.crai` (gzipped, or plain text as some tools write it).
pub fn parse(data: &[u8]) -> Result<Vec<CraiEntry>, Error> {
    let mut text = Vec::new();
    if data.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(data)
            .take(MAX_TEXT)
            .read_to_end(&mut text)
            .map_err(|e| Error::at(0, format!("index does not decompress: {e}")))?;
    } else {
        text = data.to_vec();
    }
    let mut out = Vec::new();
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let bad = || Error::at(0, format!("index line {} is not six numbers", n + 1));
        let f: Vec<i64> = std::str::from_utf8(line)
            .map_err(|_| bad())?
            .split_ascii_whitespace()
            .map(|v| v.parse::<i64>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let [r, s, sp, c, sl, sz] = f[..] else {
            return Err(bad());
        };
        let u = |v: i64| u64::try_from(v).map_err(|_| bad());
        out.push(CraiEntry {
            ref_id: i32::try_from(r).map_err(|_| bad())?,
            start: s,
            span: sp,
            container: u(c)?,
            slice: u(sl)?,
            size: u(sz)?,
        });
    }
    Ok(out)
}

/// The container a query of `ref_id` from 1-based `pos` starts reading at: the first slice of
/// that reference (in file order) that ends at or after `pos`, else its last one; `None` when
/// the index has no slice of the reference (the query finds nothing). `ref_id` -1 is the
/// unplaced reads.
pub fn start_of(entries: &[CraiEntry], ref_id: i32, pos: i64) -> Option<u64> {
    let mut of_ref: Vec<&CraiEntry> = entries.iter().filter(|e| e.ref_id == ref_id).collect();
    of_ref.sort_by_key(|e| (e.start, e.container, e.slice));
    if ref_id < 0 {
        return of_ref.iter().map(|e| e.container).min();
    }
    let last = of_ref.last()?;
    let first = of_ref
        .iter()
        .find(|e| e.start.saturating_add(e.span) > pos)
        .unwrap_or(last);
    // A slice starting earlier may reach further: start at the earliest that overlaps.
    of_ref
        .iter()
        .filter(|e| e.start <= first.start && e.start.saturating_add(e.span) > pos)
        .map(|e| e.container)
        .chain(std::iter::once(first.container))
        .min()
}
