//! BED targets and region lists as samtools' `bedidx.c` builds them: `-L FILE` (a filter on
//! overlap), and for `-M`/`--region-file` the region hash merged with the command-line regions.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;

use region::{parse_reg, Interval, NamedIntervals, ParsedRegion, Position, RegionList};

use super::expr::lexer::{is_c_space, sign};

/// A BED file could not be read.
#[derive(Debug)]
pub enum BedError {
    /// The file could not be opened or read.
    Io {
        /// The file, as given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not `name start [end]` (1-based line number among the non-empty lines).
    Parse {
        /// The file, as given.
        path: String,
        /// The 1-based number of the line among the non-empty lines.
        line: u32,
        /// Start and end, when the line is well formed but its end is before its start.
        reversed: Option<(u64, u64)>,
    },
}

impl fmt::Display for BedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BedError::Io { path, source } => write!(f, "Could not read file \"{path}\": {source}"),
            BedError::Parse {
                path,
                line,
                reversed: None,
            } => write!(f, "Parse error reading \"{path}\" at line {line}"),
            BedError::Parse {
                path,
                line,
                reversed: Some((end, beg)),
            } => write!(
                f,
                "Parse error reading \"{path}\" at line {line} : end ({end}) must not be less than start ({beg})"
            ),
        }
    }
}

impl std::error::Error for BedError {}

/// bedidx's linear index windows: 8 kbp (`LIDX_SHIFT`).
const LIDX_SHIFT: u32 = 13;

/// The most windows an index is built for; past that, as when samtools' allocation fails, the
/// list has no index and every search starts at its first interval.
const MAX_WINDOWS: i64 = 1 << 20;

/// The intervals of one reference name (bedidx's `bed_reglist_t`), 0-based half-open, sorted
/// by (start, end) when indexed, with the index built then.
#[derive(Debug, Clone, Default)]
struct Intervals {
    list: Vec<(i64, i64)>,
    /// `bed_index_core`: for each 8 kbp window, the first interval touching it (-1: none).
    /// Built by [`Intervals::index`] and, as in samtools, not rebuilt by
    /// [`Intervals::unify`], so after a merge it can point past the interval it meant: samtools
    /// then misses overlaps (`-P` tests mates and records against such a list).
    idx: Option<Vec<i32>>,
    /// bedidx's `filter` flag: set when command-line regions selected this reference.
    filtered: bool,
}

impl Intervals {
    /// `bed_index`: sorts, then indexes the windows.
    fn index(&mut self) {
        self.list.sort_unstable();
        let mut idx: Vec<i32> = Vec::new();
        for (i, &(beg, end)) in self.list.iter().enumerate() {
            let (wb, we) = ((beg >> LIDX_SHIFT).max(0), (end >> LIDX_SHIFT).max(0));
            // An end past i64::MAX reads as negative (samtools keeps it in a signed
            // `hts_pos_t` too): such an interval overlaps nothing and has no windows.
            if wb > we {
                continue;
            }
            if we >= MAX_WINDOWS {
                self.idx = None;
                return;
            }
            if idx.len() < (we + 1) as usize {
                idx.resize(((we + 1) as usize).next_power_of_two(), -1);
            }
            for slot in &mut idx[wb as usize..=we as usize] {
                if *slot < 0 {
                    *slot = i as i32;
                }
            }
        }
        self.idx = Some(idx);
    }

    /// `bed_unify`: merges overlapping and touching neighbours of the sorted list, in place;
    /// the index is left as it was.
    fn unify(&mut self) {
        let mut out: Vec<(i64, i64)> = Vec::with_capacity(self.list.len());
        for &(b, e) in &self.list {
            match out.last_mut() {
                Some(last) if last.1 >= b => last.1 = last.1.max(e),
                _ => out.push((b, e)),
            }
        }
        self.list = out;
    }

    /// `bed_minoff`: where the search for `beg` starts. It compares the window with the number
    /// of intervals, not of windows, as samtools does; a window past the index counts as one
    /// without intervals (samtools reads past its array there).
    fn min_off(&self, beg: i64) -> usize {
        let Some(idx) = &self.idx else {
            return 0;
        };
        let n = self.list.len() as i64;
        let at = |w: i64| {
            usize::try_from(w)
                .ok()
                .and_then(|w| idx.get(w))
                .copied()
                .unwrap_or(-1)
        };
        let w = (beg >> LIDX_SHIFT).max(0);
        let found = if w >= n { at(n - 1) } else { at(w) };
        if found >= 0 {
            return found as usize;
        }
        let mut i = w.min(n) - 1;
        while i >= 0 && at(i) < 0 {
            i -= 1;
        }
        if i >= 0 {
            at(i) as usize
        } else {
            0
        }
    }

    /// `bed_overlap_core`: from [`Intervals::min_off`], some interval with `start < end` and
    /// `beg < its end`, the search stopping at the first interval starting at or after `end`.
    fn overlaps(&self, beg: i64, end: i64) -> bool {
        for &(b, e) in self.list.iter().skip(self.min_off(beg)) {
            if b >= end {
                break;
            }
            if e > beg && b < end {
                return true;
            }
        }
        false
    }
}

/// Named interval lists (bedidx's region hash).
#[derive(Debug, Clone, Default)]
pub struct Targets {
    by_name: HashMap<Vec<u8>, Intervals>,
}

impl Targets {
    /// `bed_read`: a BED file (plain or gzip-compressed; `-` is standard input). Lines are
    /// `name start end` (0-based) or `name pos` (1-based, VCF style); blank lines, `#` comments
    /// and `browser`/`track` lines are skipped.
    pub fn read(path: &str) -> Result<Targets, BedError> {
        let io = |source| BedError::Io {
            path: path.to_string(),
            source,
        };
        let mut raw = Vec::new();
        if path == "-" {
            std::io::stdin().read_to_end(&mut raw).map_err(io)?;
        } else {
            std::fs::File::open(path)
                .and_then(|mut f| f.read_to_end(&mut raw))
                .map_err(io)?;
        }
        if bgzf::block::has_gzip_magic(&raw) {
            let mut text = Vec::new();
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_end(&mut text)
                .map_err(io)?;
            raw = text;
        }
        Targets::parse(path, &raw)
    }

    /// `bed_read` on text already in memory; `path` names it in errors.
    pub fn parse(path: &str, text: &[u8]) -> Result<Targets, BedError> {
        let mut t = Targets::default();
        let mut line_no = 0u32;
        for line in text.split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            line_no += 1;
            let start = line
                .iter()
                .position(|&b| !is_c_space(b))
                .unwrap_or(line.len());
            let line = &line[start..];
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            let name_end = line
                .iter()
                .position(|&b| is_c_space(b))
                .unwrap_or(line.len());
            let name = &line[..name_end];
            let (num, mut beg, mut end) = if name_end < line.len() {
                scan_two_u64(&line[name_end + 1..])
            } else {
                (0, 0, 0)
            };
            if num == 1 {
                end = beg;
                beg = beg.wrapping_sub(1);
            }
            if num < 1 || end < beg {
                if name == b"browser" || name == b"track" {
                    continue;
                }
                return Err(BedError::Parse {
                    path: path.to_string(),
                    line: line_no,
                    reversed: (num >= 1).then_some((end, beg)),
                });
            }
            t.by_name
                .entry(name.to_vec())
                .or_default()
                .list
                .push((beg as i64, end as i64));
        }
        t.by_name.values_mut().for_each(Intervals::index);
        Ok(t)
    }

    /// True when no name has any interval.
    pub fn is_empty(&self) -> bool {
        self.by_name.values().all(|i| i.list.is_empty())
    }

    /// `bed_overlap`: does `[beg, end)` on reference `name` overlap an interval?
    pub fn overlaps(&self, name: &[u8], beg: i64, end: i64) -> bool {
        self.by_name.get(name).is_some_and(|i| i.overlaps(beg, end))
    }

    /// `bed_unify` on every name (what `-M` does to a BED without command-line regions): the
    /// lists merged, their indexes left as they were built when the file was read.
    pub fn unify(&mut self) {
        self.by_name.values_mut().for_each(Intervals::unify);
    }

    /// `bed_hash_regions`: with no BED, the command-line regions become the targets; with one,
    /// the targets are cut down to their intersection with the regions and only references
    /// the regions touched are kept for iteration ("filtered").
    /// Regions are read with `hts_parse_reg` (`name`, `name:beg`, `name:beg-end`).
    pub fn merge_regions(bed: Option<Targets>, regions: &[String]) -> MergedTargets {
        let mut parsed = Targets::default();
        for r in regions {
            let (name, beg, end) = match parse_reg(r.as_bytes()) {
                Some(p) => (&r.as_bytes()[..p.name_len], p.beg, p.end),
                None => (r.as_bytes(), 0, ParsedRegion::OPEN_END),
            };
            parsed
                .by_name
                .entry(name.to_vec())
                .or_default()
                .list
                .push((beg, end));
        }
        parsed.index_and_unify();
        let Some(mut bed) = bed else {
            return MergedTargets {
                targets: parsed,
                filtered: false,
            };
        };
        // `bed_filter`: each BED list cut down to its overlaps with the regions (searched from
        // the BED's own index, as read).
        for (name, cut) in &parsed.by_name {
            let Some(p) = bed.by_name.get_mut(name) else {
                continue;
            };
            if p.list.is_empty() {
                continue;
            }
            let mut out = Vec::new();
            for &(b, e) in &cut.list {
                for &(pb, pe) in p.list.iter().skip(p.min_off(b)) {
                    if pb >= e {
                        break;
                    }
                    if pe > b && pb < e {
                        out.push((pb.max(b), pe.min(e)));
                    }
                }
            }
            if !out.is_empty() {
                p.list = out;
                p.filtered = true;
            }
        }
        bed.index_and_unify();
        MergedTargets {
            targets: bed,
            filtered: true,
        }
    }

    /// `bed_index` then `bed_unify` on every name, as `bed_hash_regions` ends: the lists
    /// merged, their indexes those of the lists before merging.
    fn index_and_unify(&mut self) {
        for i in self.by_name.values_mut() {
            i.index();
            i.unify();
        }
    }

    /// `bed_reglist`: the names and their intervals to iterate over (only the filtered names
    /// when `filtered_only`). Sorted by name, so the result does not depend on hashing.
    pub fn region_list(&self, filtered_only: bool) -> RegionList {
        let mut v: Vec<_> = self
            .by_name
            .iter()
            .filter(|(_, i)| !filtered_only || i.filtered)
            .map(|(n, i)| NamedIntervals {
                name: n.clone(),
                // htslib's iterators raise a start below 0 to 0 (an end below 0 finds nothing).
                intervals: i
                    .list
                    .iter()
                    .map(|&(b, e)| {
                        Interval::new(Position::saturating_from(b), Position::saturating_from(e))
                    })
                    .collect(),
            })
            .collect();
        v.sort();
        v
    }
}

/// `sscanf(s, "%lu %lu", &beg, &end)`: how many numbers were read, and the two values.
fn scan_two_u64(s: &[u8]) -> (u32, u64, u64) {
    let mut i = 0;
    let mut vals = [0u64; 2];
    for (n, slot) in vals.iter_mut().enumerate() {
        while s.get(i).copied().is_some_and(is_c_space) {
            i += 1;
        }
        let neg = sign(s, &mut i);
        let start = i;
        let mut v: u64 = 0;
        let mut overflow = false;
        while let Some(d) = s.get(i).filter(|b| b.is_ascii_digit()) {
            match v
                .checked_mul(10)
                .and_then(|x| x.checked_add(u64::from(d - b'0')))
            {
                Some(x) => v = x,
                None => overflow = true,
            }
            i += 1;
        }
        if i == start {
            return (n as u32, vals[0], vals[1]);
        }
        if overflow {
            v = u64::MAX;
        }
        *slot = if neg { v.wrapping_neg() } else { v };
    }
    (2, vals[0], vals[1])
}

/// The targets `-L` and the command-line regions make together ([`Targets::merge_regions`]).
#[derive(Debug, Clone)]
pub struct MergedTargets {
    /// The region hash.
    pub targets: Targets,
    /// True when a BED was cut down to the regions: only the references they touched are
    /// iterated ([`Targets::region_list`] with `filtered_only`).
    pub filtered: bool,
}

#[cfg(test)]
mod tests;
