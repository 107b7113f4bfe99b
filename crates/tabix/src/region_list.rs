//! Regions and targets files (`tabix -R`, `-T`) read as htslib 1.16's `regidx` reads them: the
//! parser picked by the file name (`.bed`, `.bed.gz`, `.bed.bgz`: BED, 0-based half-open;
//! `.vcf`, `.vcf.gz`: a position per line; else `CHR`, `CHR BEG` or `CHR BEG END`, 1-based),
//! blank-led and `#` lines skipped, reading stopped at the first empty line; sequences kept in
//! the order met, each one's regions sorted by start (longer first); overlaps answered with
//! `regidx_overlap`'s binned search.

use std::collections::HashMap;
use std::io::Read;

use region::{parse_decimal, Decimal, ParseFlags};

/// The largest coordinate a region file holds (`REGIDX_MAX`, 0-based).
const MAX_COOR: i64 = 1 << 35;

/// The longest regions file read (the file is the user's, but a wrong path could name a huge
/// one).
const MAX_FILE: u64 = 1 << 32;

/// How a regions file's lines are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `CHR BEG END`, 0-based half-open.
    Bed,
    /// `CHR POS`: one position.
    Vcf,
    /// `CHR [BEG [END]]`, 1-based inclusive.
    Tab,
}

impl Format {
    /// The format `regidx_init` picks for `name`.
    pub fn of(name: &str) -> Format {
        let n = name.to_ascii_lowercase();
        if [".bed.gz", ".bed.bgz", ".bed"]
            .iter()
            .any(|s| n.ends_with(s))
        {
            Format::Bed
        } else if [".vcf", ".vcf.gz"].iter().any(|s| n.ends_with(s)) {
            Format::Vcf
        } else {
            Format::Tab
        }
    }

    fn label(self) -> &'static str {
        match self {
            Format::Bed => "bed",
            Format::Vcf | Format::Tab => "tab",
        }
    }
}

/// One sequence's regions (0-based, both ends inclusive) and their bin lookup.
#[derive(Debug, Default)]
struct List {
    regs: Vec<(i64, i64)>,
    /// For each 8 kb bin, 1 + the first region touching it (0: none).
    bins: Vec<usize>,
}

/// A regions file's contents.
#[derive(Debug, Default)]
pub struct RegionList {
    names: Vec<Vec<u8>>,
    lists: Vec<List>,
    by_name: HashMap<Vec<u8>, usize>,
}

fn bin(x: i64) -> usize {
    usize::try_from(x >> 13).unwrap_or(0)
}

impl RegionList {
    /// Reads the regions file `location` (a path or URL; gzip or BGZF compressed or plain).
    ///
    /// # Errors
    /// The file cannot be read, or a line does not parse (the message is `regidx`'s).
    pub fn read(location: &str, opts: &hfile::OpenOptions) -> Result<RegionList, String> {
        let mut bytes = Vec::new();
        hfile::open(location, opts)
            .map_err(|e| e.to_string())?
            .take(MAX_FILE)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{location}: {e}"))?;
        if bgzf::block::has_gzip_magic(&bytes) {
            let mut plain = Vec::new();
            flate2::read::MultiGzDecoder::new(&bytes[..])
                .take(MAX_FILE)
                .read_to_end(&mut plain)
                .map_err(|e| format!("{location}: {e}"))?;
            bytes = plain;
        }
        RegionList::parse(Format::of(location), &bytes)
    }

    /// Parses a regions file's text.
    ///
    /// # Errors
    /// A line does not parse (the message is `regidx`'s).
    pub fn parse(format: Format, text: &[u8]) -> Result<RegionList, String> {
        let mut list = RegionList::default();
        for mut line in text.split(|&b| b == b'\n') {
            if let Some(l) = line.strip_suffix(b"\r") {
                line = l;
            }
            // `hts_getline` returns 0 for an empty line, which ends regidx's loop.
            if line.is_empty() {
                break;
            }
            if let Some((name, beg, end)) = parse_line(format, line)? {
                list.push(name, beg, end);
            }
        }
        for l in &mut list.lists {
            l.regs.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            l.index();
        }
        Ok(list)
    }

    fn push(&mut self, name: &[u8], beg: i64, end: i64) {
        let i = *self.by_name.entry(name.to_vec()).or_insert_with(|| {
            self.names.push(name.to_vec());
            self.lists.push(List::default());
            self.lists.len() - 1
        });
        let clamp = |x: i64| x.clamp(0, MAX_COOR);
        self.lists[i].regs.push((clamp(beg), clamp(end)));
    }

    /// Every region as tabix `-R` turns it into a region string (`CHR:BEG-END`, 1-based), in
    /// the order it queries them.
    pub fn region_strings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, l) in self.names.iter().zip(&self.lists) {
            if let Some(first) = l.first_overlap(0, i64::MAX) {
                for &(b, e) in &l.regs[first..] {
                    let name = String::from_utf8_lossy(name);
                    out.push(format!("{name}:{}-{}", b + 1, e + 1));
                }
            }
        }
        out
    }

    /// Whether a region on `name` overlaps `beg..=end` (0-based, inclusive), as
    /// `regidx_overlap` answers.
    pub fn overlaps(&self, name: &[u8], beg: i64, end: i64) -> bool {
        let Some(&i) = self.by_name.get(name) else {
            return false;
        };
        self.lists[i].first_overlap(beg, end).is_some()
    }
}

impl List {
    fn index(&mut self) {
        let n = self
            .regs
            .iter()
            .map(|r| bin(r.1))
            .max()
            .map_or(0, |m| m + 1);
        self.bins = vec![0; n];
        for (j, &(b, e)) in self.regs.iter().enumerate() {
            for k in bin(b)..=bin(e) {
                if let Some(slot) = self.bins.get_mut(k).filter(|s| **s == 0) {
                    *slot = j + 1;
                }
            }
        }
    }

    /// The first region overlapping `beg..=end` by `regidx_overlap`'s search: a single region
    /// is checked directly; else from the first region touching `beg`'s bin (or a later bin
    /// up to `end`'s), on in start order.
    fn first_overlap(&self, beg: i64, end: i64) -> Option<usize> {
        match self.regs.as_slice() {
            [] => return None,
            [(b, e)] => return (beg <= *e && end >= *b).then_some(0),
            _ => {}
        }
        let ibeg = bin(beg);
        if ibeg >= self.bins.len() {
            return None;
        }
        let mut i = self.bins[ibeg];
        if i == 0 {
            let iend = bin(end).min(self.bins.len());
            i = (ibeg..=iend)
                .map(|k| self.bins.get(k).copied().unwrap_or(0))
                .find(|&v| v != 0)?;
        }
        for (j, &(b, e)) in self.regs.iter().enumerate().skip(i - 1) {
            if b > end {
                return None;
            }
            if e >= beg && b <= end {
                return Some(j);
            }
        }
        None
    }
}

type Parsed<'a> = Option<(&'a [u8], i64, i64)>;

/// One line by `regidx_parse_bed`, `_tab` or `_vcf`: `None` for a skipped line.
fn parse_line(format: Format, line: &[u8]) -> Result<Parsed<'_>, String> {
    let fail = |why: &str| {
        format!(
            "[E::regidx_parse_{}] Could not parse {} line{why}: {}",
            format.label(),
            format.label(),
            String::from_utf8_lossy(line)
        )
    };
    let start = line.iter().take_while(|&&b| is_space(b)).count();
    let s = &line[start..];
    if s.is_empty() || s[0] == b'#' {
        return Ok(None);
    }
    let name_len = s.iter().take_while(|&&b| !is_space(b)).count();
    let name = &s[..name_len];
    if name_len == s.len() {
        return Ok(Some((name, 0, MAX_COOR)));
    }
    let after = &s[name_len + 1..];
    let Decimal { value: beg, used } = parse_decimal(after, ParseFlags::NONE);
    if used == 0 {
        return Err(fail(""));
    }
    let rest = &after[used..];
    if format == Format::Bed {
        let Decimal { value: end, used } =
            parse_decimal(rest.get(1..).unwrap_or(&[]), ParseFlags::NONE);
        if used == 0 {
            return Err(fail(""));
        }
        return Ok(Some((name, beg, end.wrapping_sub(1))));
    }
    let one_based = ", expected 1-based coordinate";
    if beg == 0 {
        return Err(fail(one_based));
    }
    let beg = beg - 1;
    let end = if rest.len() < 2 || format == Format::Vcf {
        beg
    } else {
        let after = &rest[1..];
        let Decimal { value: end, used } = parse_decimal(after, ParseFlags::NONE);
        if used == 0 || after.get(used).is_some_and(|&b| !is_space(b)) {
            beg
        } else if end == 0 {
            return Err(fail(one_based));
        } else {
            end - 1
        }
    };
    Ok(Some((name, beg, end)))
}

/// C's `isspace` in the C locale.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_order() {
        let text = b"chr2\t5\t9\n# c\n  chr1\t10\nchr1\t3\t4\nchr1\nchr2\t1\t100\n\nchr3\t1\n";
        let l = RegionList::parse(Format::Tab, text).unwrap();
        assert_eq!(
            l.region_strings(),
            [
                "chr2:1-100",
                "chr2:5-9",
                "chr1:1-34359738369",
                "chr1:3-4",
                "chr1:10-10"
            ]
        );
        let bed = RegionList::parse(Format::Bed, b"c\t0\t10\nc\t20\t30x\n").unwrap();
        assert_eq!(bed.region_strings(), ["c:1-10", "c:21-30"]);
        let vcf = RegionList::parse(Format::Vcf, b"c\t7\t100\n").unwrap();
        assert_eq!(vcf.region_strings(), ["c:7-7"]);
        assert!(vcf.overlaps(b"c", 6, 6) && !vcf.overlaps(b"c", 7, 9) && !vcf.overlaps(b"d", 6, 6));
        assert_eq!(Format::of("x.BED.gz"), Format::Bed);
        assert_eq!(Format::of("x.txt"), Format::Tab);
    }

    #[test]
    fn overlaps_across_bins() {
        let l =
            RegionList::parse(Format::Tab, b"c\t100\t200\nc\t50000\t90000\nc\t70000\n").unwrap();
        assert!(l.overlaps(b"c", 199, 199));
        assert!(!l.overlaps(b"c", 200, 49_998));
        assert!(l.overlaps(b"c", 200, 49_999));
        assert!(l.overlaps(b"c", 80_000, 80_000));
        assert!(!l.overlaps(b"c", 90_000, 1 << 40));
    }

    #[test]
    fn bad_lines() {
        let e = RegionList::parse(Format::Tab, b"c\t0\n").unwrap_err();
        assert!(e.contains("expected 1-based coordinate: c\t0"), "{e}");
        let e = RegionList::parse(Format::Tab, b"c\tx\n").unwrap_err();
        assert_eq!(e, "[E::regidx_parse_tab] Could not parse tab line: c\tx");
        assert!(RegionList::parse(Format::Bed, b"c\t1\n").is_err());
        let ok = RegionList::parse(Format::Tab, b"c\t5\tx\n").unwrap();
        assert_eq!(ok.region_strings(), ["c:5-5"]);
    }
}
