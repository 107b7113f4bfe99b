//! BED targets and region lists as samtools' `bedidx.c` builds them: `-L FILE` (a filter on
//! overlap), and for `-M`/`--region-file` the region hash merged with the command-line regions.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;

use super::expr::lexer::{is_c_space, sign};

/// htslib's `HTS_POS_MAX`, the end of an open-ended region before it is clamped.
const INT_MAX: i64 = i32::MAX as i64;

/// Reference names with their 0-based half-open intervals, sorted and merged.
pub type RegionList = Vec<(Vec<u8>, Vec<(i64, i64)>)>;

/// A BED file could not be read.
#[derive(Debug)]
pub enum BedError {
    /// The file could not be opened or read.
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A line is not `name start [end]` (1-based line number among the non-empty lines).
    Parse {
        path: String,
        line: u32,
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

/// The intervals of one reference name, sorted by (start, end), 0-based half-open.
#[derive(Debug, Clone, Default)]
struct Intervals {
    list: Vec<(i64, i64)>,
    /// `max_end[i]`: the largest end among `list[..=i]`, for overlap tests by binary search.
    max_end: Vec<i64>,
    /// bedidx's `filter` flag: set when command-line regions selected this reference.
    filtered: bool,
}

impl Intervals {
    fn index(&mut self) {
        self.list.sort_unstable();
        let mut m = i64::MIN;
        self.max_end = self
            .list
            .iter()
            .map(|&(_, e)| {
                m = m.max(e);
                m
            })
            .collect();
    }

    /// `bed_index` then `bed_unify`: sorts, then merges overlapping and touching intervals.
    fn unify(&mut self) {
        self.list.sort_unstable();
        let mut out: Vec<(i64, i64)> = Vec::with_capacity(self.list.len());
        for &(b, e) in &self.list {
            match out.last_mut() {
                Some(last) if last.1 >= b => last.1 = last.1.max(e),
                _ => out.push((b, e)),
            }
        }
        self.list = out;
        self.index();
    }

    /// `bed_overlap_core`: some interval has `start < end && beg < its end`.
    fn overlaps(&self, beg: i64, end: i64) -> bool {
        let n = self.list.partition_point(|&(b, _)| b < end);
        n > 0 && self.max_end[n - 1] > beg
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
        if raw.starts_with(&[0x1f, 0x8b]) {
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

    /// `bed_unify` on every name (what `-M` does to a BED without command-line regions).
    pub fn unify(&mut self) {
        self.by_name.values_mut().for_each(Intervals::unify);
    }

    /// `bed_hash_regions`: with no BED, the command-line regions become the targets; with one,
    /// the targets are cut down to their intersection with the regions and only references
    /// the regions touched are kept for iteration (`true` is returned then: "filtered").
    /// Regions are read with `hts_parse_reg` (`name`, `name:beg`, `name:beg-end`).
    pub fn merge_regions(bed: Option<Targets>, regions: &[String]) -> (Targets, bool) {
        let mut parsed = Targets::default();
        for r in regions {
            let (name, beg, end) = match parse_reg(r.as_bytes()) {
                Some((name_len, beg, end)) => (&r.as_bytes()[..name_len], beg, end),
                None => (r.as_bytes(), 0, INT_MAX),
            };
            parsed
                .by_name
                .entry(name.to_vec())
                .or_default()
                .list
                .push((beg, end));
        }
        let Some(mut bed) = bed else {
            parsed.unify();
            return (parsed, false);
        };
        parsed.unify();
        for (name, cut) in &parsed.by_name {
            let Some(p) = bed.by_name.get_mut(name) else {
                continue;
            };
            if p.list.is_empty() {
                continue;
            }
            let mut out = Vec::new();
            for &(b, e) in &cut.list {
                for &(pb, pe) in &p.list {
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
        bed.unify();
        (bed, true)
    }

    /// `bed_reglist`: the names and their intervals to iterate over (only the filtered names
    /// when `filtered_only`). Sorted by name, so the result does not depend on hashing.
    pub fn region_list(&self, filtered_only: bool) -> RegionList {
        let mut v: Vec<_> = self
            .by_name
            .iter()
            .filter(|(_, i)| !filtered_only || i.filtered)
            .map(|(n, i)| (n.clone(), i.list.clone()))
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

/// `hts_parse_reg`: the length of the name (up to the last `:`), and the 0-based half-open
/// range clamped to `int`; `None` when the text after the colon is not a valid range.
pub fn parse_reg(s: &[u8]) -> Option<(usize, i64, i64)> {
    let Some(colon) = s.iter().rposition(|&b| b == b':') else {
        return Some((s.len(), 0, INT_MAX));
    };
    let (b, after) = parse_decimal(&s[colon + 1..]);
    let beg = (b - 1).max(0);
    let end = match after.first() {
        None => i64::MAX,
        Some(b'-') => parse_decimal(&after[1..]).0,
        Some(_) => return None,
    };
    if beg >= end || beg > INT_MAX {
        return None;
    }
    let end = if end == i64::MAX {
        INT_MAX
    } else if end > INT_MAX {
        return None;
    } else {
        end
    };
    Some((colon, beg, end))
}

/// `hts_parse_decimal` with thousands separators: `1,000`, `1.5k`, `2M`, `3e3`; the value and
/// the text after it (all of `s` when there are no digits).
fn parse_decimal(s: &[u8]) -> (i64, &[u8]) {
    let mut i = s.iter().take_while(|&&b| is_c_space(b)).count();
    let neg = sign(s, &mut i);
    let (mut n, mut digits, mut decimals, mut e) = (0i64, 0, 0i32, 0i32);
    while let Some(&c) = s.get(i) {
        if c.is_ascii_digit() {
            digits += 1;
            n = n.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
        } else if c != b',' {
            break;
        }
        i += 1;
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&c) = s.get(i).filter(|c| c.is_ascii_digit()) {
            decimals += 1;
            digits += 1;
            n = n.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
            i += 1;
        }
    }
    match s.get(i) {
        Some(b'e' | b'E') => {
            i += 1;
            let eneg = sign(s, &mut i);
            while let Some(&c) = s.get(i).filter(|c| c.is_ascii_digit()) {
                e = e.saturating_mul(10).saturating_add(i32::from(c - b'0'));
                i += 1;
            }
            if eneg {
                e = -e;
            }
        }
        Some(b'k' | b'K') => {
            e += 3;
            i += 1;
        }
        Some(b'm' | b'M') => {
            e += 6;
            i += 1;
        }
        Some(b'g' | b'G') => {
            e += 9;
            i += 1;
        }
        _ => {}
    }
    e -= decimals;
    while e > 0 {
        n = n.wrapping_mul(10);
        e -= 1;
    }
    while e < 0 {
        n /= 10;
        e += 1;
    }
    let rest = if digits > 0 { &s[i..] } else { s };
    (if neg { -n } else { n }, rest)
}

#[cfg(test)]
mod tests;
