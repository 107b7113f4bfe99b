//! Region strings as `samtools view` 1.16 reads them: `hts_itr_querys` (for `.` and `*`) and
//! `hts_parse_region` with `HTS_PARSE_THOUSANDS_SEP`, resolving names through the header.

use crate::header::Header;
use crate::position::{Interval, Position, RefId};

/// [`Position::MAX`] in the signed arithmetic of `hts_parse_region`.
const POS_MAX: i64 = Position::MAX.get() as i64;

/// Reference names with their 0-based half-open intervals, sorted and merged: regions by name,
/// before they are resolved against a header ([`crate::RegionSet::resolve`]).
pub type RegionList = Vec<NamedIntervals>;

/// One reference's intervals, by name (an entry of a [`RegionList`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NamedIntervals {
    /// The reference name (`.` and `*` for htslib's special regions).
    pub name: Vec<u8>,
    /// 0-based half-open intervals.
    pub intervals: Vec<Interval>,
}

/// What a query reads, resolved against the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// Reads of reference `tid` overlapping the 0-based half-open `[beg, end)`. `end` is
    /// [`Position::MAX`] when the string gave no end; neither bound is clamped to the reference length
    /// (htslib does not either: a region past the end simply finds nothing).
    Ref {
        /// The reference.
        tid: RefId,
        /// The 0-based start.
        beg: Position,
        /// The 0-based end, exclusive.
        end: Position,
    },
    /// `*`: the unplaced reads at the end of the file.
    Unplaced,
    /// `.`: every record from the start of the file (htslib's `HTS_IDX_START`).
    All,
}

/// Why a region string cannot be used. samtools prints [`RegionError::htslib_message`] (when
/// htslib has one) and [`RegionError::samtools_warning`], skips the region and exits 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegionError {
    /// `{name` without its closing brace.
    MismatchedBraces {
        /// The region as given.
        region: String,
    },
    /// `a:b` where both `a:b` and `a` are reference names.
    Ambiguous {
        /// The region as given.
        region: String,
        /// The reference name that also matches.
        name: String,
        /// What follows it.
        rest: String,
    },
    /// Text follows the coordinates.
    Unexpected {
        /// The region as given.
        region: String,
        /// The text after the coordinates.
        text: String,
    },
    /// A start below 1 with an end.
    NotPositive {
        /// The region as given.
        region: String,
    },
    /// No reference of that name.
    UnknownReference {
        /// The region as given.
        region: String,
    },
    /// The end lies before the start.
    Empty {
        /// The region as given.
        region: String,
    },
}

impl RegionError {
    /// The region string as given.
    pub fn region(&self) -> &str {
        match self {
            RegionError::MismatchedBraces { region }
            | RegionError::Ambiguous { region, .. }
            | RegionError::Unexpected { region, .. }
            | RegionError::NotPositive { region }
            | RegionError::UnknownReference { region }
            | RegionError::Empty { region } => region,
        }
    }

    /// The line htslib's `hts_parse_region` prints for this error, if it prints one.
    pub fn htslib_message(&self) -> Option<String> {
        match self {
            RegionError::MismatchedBraces { region } => Some(format!(
                "[E::hts_parse_region] Mismatching braces in \"{region}\""
            )),
            RegionError::Ambiguous { region, name, rest } => Some(format!(
                "[E::hts_parse_region] Range is ambiguous. Use {{{region}}} or {{{name}}}{rest} \
                 instead"
            )),
            RegionError::Unexpected { text, .. } => Some(format!(
                "[E::hts_parse_region] Unexpected string \"{text}\" after region"
            )),
            RegionError::NotPositive { .. } => {
                Some("[E::hts_parse_region] Coordinates must be > 0".to_string())
            }
            RegionError::UnknownReference { .. } | RegionError::Empty { .. } => None,
        }
    }

    /// The line `samtools view` prints when it skips the region.
    pub fn samtools_warning(&self) -> String {
        invalid_region_warning(self.region())
    }
}

impl std::fmt::Display for RegionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let region = self.region();
        match self {
            RegionError::MismatchedBraces { .. } => {
                write!(f, "region \"{region}\": mismatched braces")
            }
            RegionError::Ambiguous { name, rest, .. } => write!(
                f,
                "region \"{region}\" is ambiguous: write {{{region}}} or {{{name}}}{rest}"
            ),
            RegionError::Unexpected { text, .. } => {
                write!(
                    f,
                    "region \"{region}\": unexpected \"{text}\" after the coordinates"
                )
            }
            RegionError::NotPositive { .. } => {
                write!(f, "region \"{region}\": coordinates must be > 0")
            }
            RegionError::UnknownReference { .. } => {
                write!(f, "region \"{region}\": no such reference in the header")
            }
            RegionError::Empty { .. } => {
                write!(f, "region \"{region}\": the end lies before the start")
            }
        }
    }
}

impl std::error::Error for RegionError {}

/// The line `samtools view` prints for a region it cannot use (unknown name, bad syntax, or no
/// index data for the reference); it then continues with the next region and exits 0.
pub fn invalid_region_warning(region: &str) -> String {
    format!(
        "[main_samview] region \"{region}\" specifies an invalid region or unknown reference. \
         Continue anyway."
    )
}

/// Resolves a region string against the header with samtools 1.16's rules: `chr`, `chr:beg`,
/// `chr:beg-end`, `chr:-end`, `{name}` and `{name}:beg-end` for names containing `:`, numbers
/// with `,` thousands separators (and htslib's `k`/`M`/`G`/exponent suffixes), `*` and `.`.
/// An unbraced string is first tried as a whole name; if its part before the last `:` is also a
/// name, it is ambiguous.
///
/// ```
/// use bam::header::{Header, Reference};
/// use bam::region::{parse_region, RegionError, Target};
/// use bam::{Position, RefId};
///
/// let refs = vec![Reference { name: b"chr1".to_vec(), len: 1000 }];
/// let header = Header::from_parts(Vec::new(), refs).unwrap();
/// assert_eq!(
///     parse_region("chr1:1,001-2,000", &header),
///     Ok(Target::Ref { tid: RefId::new(0), beg: Position::new(1000), end: Position::new(2000) })
/// );
/// assert_eq!(parse_region("*", &header), Ok(Target::Unplaced));
/// assert!(matches!(
///     parse_region("chr9", &header),
///     Err(RegionError::UnknownReference { .. })
/// ));
/// ```
pub fn parse_region(s: &str, header: &Header) -> Result<Target, RegionError> {
    match s {
        "." => return Ok(Target::All),
        "*" => return Ok(Target::Unplaced),
        _ => {}
    }
    let (tid, beg, end) = parse(s.as_bytes(), header)?;
    Ok(Target::Ref {
        tid,
        // hts_itr_query raises a 0 start (from `chr:0-...`) to 0; `end` is then positive.
        beg: Position::saturating_from(beg),
        end: Position::saturating_from(end),
    })
}

/// `hts_parse_region`.
fn parse(s: &[u8], header: &Header) -> Result<(RefId, i64, i64), RegionError> {
    let original = String::from_utf8_lossy(s);
    let region = || original.to_string();
    let unknown = || RegionError::UnknownReference { region: region() };
    let lookup = |name: &[u8]| header.tid(name);
    let (body, colon, quoted) = if s.first() == Some(&b'{') {
        let Some(close) = s.iter().position(|&b| b == b'}') else {
            return Err(RegionError::MismatchedBraces { region: region() });
        };
        let colon = (s.get(close + 1) == Some(&b':')).then_some(close + 1);
        (&s[1..], colon.map(|c| c - 1), true)
    } else {
        (s, s.iter().rposition(|&b| b == b':'), false)
    };

    let Some(colon) = colon else {
        // A braced name is everything up to the last byte, whatever that byte is (htslib trims
        // one character without checking it is the brace).
        let name = if quoted {
            &body[..body.len().saturating_sub(1)]
        } else {
            body
        };
        return lookup(name).map(|t| (t, 0, POS_MAX)).ok_or_else(unknown);
    };

    if !quoted {
        if let Some(tid) = lookup(body) {
            if lookup(&body[..colon]).is_some() {
                return Err(RegionError::Ambiguous {
                    region: region(),
                    name: String::from_utf8_lossy(&body[..colon]).into_owned(),
                    rest: String::from_utf8_lossy(&body[colon..]).into_owned(),
                });
            }
            return Ok((tid, 0, POS_MAX));
        }
    }

    let name_end = if quoted { colon - 1 } else { colon };
    let tid = lookup(&body[..name_end]).ok_or_else(unknown)?;

    let coords = &body[colon + 1..];
    let (n, used) = parse_decimal(coords);
    let beg = n.wrapping_sub(1);
    let rest = &coords[used..];
    let unexpected = |rest: &[u8]| RegionError::Unexpected {
        region: region(),
        text: String::from_utf8_lossy(rest).into_owned(),
    };
    if beg < 0 {
        if beg != -1 && rest.first() == Some(&b'-') && !coords.is_empty() {
            return Err(RegionError::NotPositive { region: region() });
        }
        match rest.first() {
            None | Some(b'0'..=b'9') | Some(b',') => {
                // `chr:-100` means `chr:1-100`.
                let end = if beg == -1 {
                    POS_MAX
                } else {
                    beg.wrapping_add(1).wrapping_neg()
                };
                return Ok((tid, 0, end));
            }
            _ if beg < -1 => return Err(unexpected(rest)),
            _ => {}
        }
    }

    let mut end = match rest.first() {
        None => POS_MAX,
        Some(b'-') => {
            let (e, used) = parse_decimal(&rest[1..]);
            let after = &rest[1 + used..];
            if !(after.is_empty() || after[0] == b',') {
                return Err(unexpected(after));
            }
            e
        }
        Some(_) => return Err(unexpected(rest)),
    };
    if end == 0 {
        // `chr:100-` means to the end.
        end = POS_MAX;
    }
    if beg >= end {
        return Err(RegionError::Empty { region: region() });
    }
    Ok((tid, beg, end))
}

/// htslib's `hts_parse_decimal` with `HTS_PARSE_THOUSANDS_SEP`: returns the value and the
/// number of bytes used (0 when there were no digits, as htslib then points back at the start).
/// Overflow wraps as htslib's arithmetic does on common machines, and never panics.
pub fn parse_decimal(s: &[u8]) -> (i64, usize) {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let mut negative = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        negative = s[i] == b'-';
        i += 1;
    }
    let mut n: i64 = 0;
    let mut digits = 0;
    let push = |n: i64, c: u8| n.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
    while i < s.len() {
        match s[i] {
            c @ b'0'..=b'9' => {
                digits += 1;
                n = push(n, c);
            }
            b',' => {}
            _ => break,
        }
        i += 1;
    }
    let mut decimals = 0;
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            decimals += 1;
            digits += 1;
            n = push(n, s[i]);
            i += 1;
        }
    }
    let mut e: i32 = 0;
    if i < s.len() {
        match s[i] {
            b'e' | b'E' => {
                i += 1;
                let mut eneg = false;
                if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
                    eneg = s[i] == b'-';
                    i += 1;
                }
                while i < s.len() && s[i].is_ascii_digit() {
                    e = e.wrapping_mul(10).wrapping_add(i32::from(s[i] - b'0'));
                    i += 1;
                }
                // A 2^31 exponent wraps to i32::MIN, which plain negation would overflow.
                if eneg {
                    e = e.wrapping_neg();
                }
            }
            b'k' | b'K' => {
                e += 3;
                i += 1;
            }
            b'm' | b'M' => {
                e += 6;
                i += 1;
            }
            b'g' | b'G' => {
                e += 9;
                i += 1;
            }
            _ => {}
        }
    }
    // Once `n` is 0 further scaling changes nothing; stopping there keeps `1e999999999` fast.
    e = e.wrapping_sub(decimals);
    while e > 0 && n != 0 {
        n = n.wrapping_mul(10);
        e -= 1;
    }
    while e < 0 && n != 0 {
        n /= 10;
        e += 1;
    }
    let value = if negative { n.wrapping_neg() } else { n };
    (value, if digits > 0 { i } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::Reference;

    fn header(names: &[&str]) -> Header {
        let refs = names
            .iter()
            .map(|n| Reference {
                name: n.as_bytes().to_vec(),
                len: 1000,
            })
            .collect();
        Header::from_parts(Vec::new(), refs).unwrap()
    }

    fn colons() -> Header {
        header(&[
            "chr1",
            "chr1:100",
            "chr1:100-200",
            "chr2:100-200",
            "chr3",
            "chr1,chr3",
        ])
    }

    fn r(tid: usize, beg: u64, end: i64) -> Result<Target, RegionError> {
        Ok(Target::Ref {
            tid: RefId::new(tid),
            beg: Position::new(beg),
            end: Position::new(end as u64),
        })
    }

    /// What samtools prints on stderr for a skipped region.
    fn skip(s: &str, h: &Header) -> String {
        match parse_region(s, h) {
            Err(e) => {
                let mut out = e.htslib_message().map(|m| m + "\n").unwrap_or_default();
                out.push_str(&e.samtools_warning());
                out
            }
            other => panic!("{s}: expected skip, got {other:?}"),
        }
    }

    #[test]
    fn plain_forms() {
        let h = header(&["chr1", "chr2"]);
        assert_eq!(parse_region("chr2", &h), r(1, 0, POS_MAX));
        assert_eq!(parse_region("chr1:100", &h), r(0, 99, POS_MAX));
        assert_eq!(parse_region("chr1:100-200", &h), r(0, 99, 200));
        assert_eq!(parse_region("chr1:1,000-2,000", &h), r(0, 999, 2000));
        assert_eq!(parse_region("chr1:123456-123456", &h), r(0, 123455, 123456));
        assert_eq!(parse_region("chr1:-100", &h), r(0, 0, 100));
        assert_eq!(parse_region("chr1:0-100", &h), r(0, 0, 100));
        assert_eq!(parse_region("chr1:100-", &h), r(0, 99, POS_MAX));
        assert_eq!(parse_region("chr1:", &h), r(0, 0, POS_MAX));
        assert_eq!(parse_region("chr1:2k-3k", &h), r(0, 1999, 3000));
        assert_eq!(parse_region("chr1:1.5k", &h), r(0, 1499, POS_MAX));
        assert_eq!(parse_region("chr1:1e3-2e3", &h), r(0, 999, 2000));
        assert_eq!(parse_region("chr1:250001-300000", &h), r(0, 250000, 300000));
        assert_eq!(parse_region("*", &h), Ok(Target::Unplaced));
        assert_eq!(parse_region(".", &h), Ok(Target::All));
    }

    #[test]
    fn unknown_and_invalid() {
        let h = header(&["chr1", "chrM"]);
        assert_eq!(
            skip("nope:1-10", &h),
            "[main_samview] region \"nope:1-10\" specifies an invalid region or unknown \
             reference. Continue anyway."
        );
        assert_eq!(
            skip("chr1:500-400", &h),
            "[main_samview] region \"chr1:500-400\" specifies an invalid region or unknown \
             reference. Continue anyway."
        );
        assert!(skip("chr1:100-100x", &h)
            .starts_with("[E::hts_parse_region] Unexpected string \"x\" after region\n"));
        assert!(skip("chr1:abc", &h)
            .starts_with("[E::hts_parse_region] Unexpected string \"abc\" after region\n"));
        assert!(
            skip("chr1:-5-10", &h).starts_with("[E::hts_parse_region] Coordinates must be > 0\n")
        );
        assert!(parse_region("chr1:100--5", &h).is_err());
        assert_eq!(
            parse_region("", &h),
            Err(RegionError::UnknownReference {
                region: String::new()
            })
        );
        assert_eq!(
            parse_region("chr1:500-400", &h),
            Err(RegionError::Empty {
                region: "chr1:500-400".to_string()
            })
        );
        // Past the reference end is not an error.
        assert_eq!(parse_region("chrM:20000", &h), r(1, 19999, POS_MAX));
    }

    #[test]
    fn colon_names() {
        let h = colons();
        assert_eq!(
            skip("chr1:100", &h),
            "[E::hts_parse_region] Range is ambiguous. Use {chr1:100} or {chr1}:100 instead\n\
             [main_samview] region \"chr1:100\" specifies an invalid region or unknown \
             reference. Continue anyway."
        );
        assert_eq!(parse_region("{chr1}:100", &h), r(0, 99, POS_MAX));
        assert_eq!(parse_region("{chr1:100}", &h), r(1, 0, POS_MAX));
        assert_eq!(parse_region("{chr1:100-200}", &h), r(2, 0, POS_MAX));
        assert_eq!(parse_region("{chr1:100-200}:100-100", &h), r(2, 99, 100));
        // chr2 is not a name, so the whole string is.
        assert_eq!(parse_region("chr2:100-200", &h), r(3, 0, POS_MAX));
        assert_eq!(parse_region("chr2:100-200:1-100", &h), r(3, 0, 100));
        assert_eq!(parse_region("chr1,chr3", &h), r(5, 0, POS_MAX));
        assert_eq!(
            skip("{chr1", &h),
            "[E::hts_parse_region] Mismatching braces in \"{chr1\"\n[main_samview] region \
             \"{chr1\" specifies an invalid region or unknown reference. Continue anyway."
        );
        // htslib drops the last character of a braced name without looking at it.
        assert_eq!(skip("{chr1}x", &h), invalid_region_warning("{chr1}x"));
        assert_eq!(parse_region("{chr3}", &h), r(4, 0, POS_MAX));
    }

    #[test]
    fn manyrefs_names() {
        let h = header(&[
            "HLA-A*01:01:01:01",
            "chrUn:100-200",
            "chr2:50",
            "chr2",
            "weird|name;x=1",
        ]);
        assert_eq!(parse_region("HLA-A*01:01:01:01", &h), r(0, 0, POS_MAX));
        assert_eq!(
            parse_region("HLA-A*01:01:01:01:3000-4000", &h),
            r(0, 2999, 4000)
        );
        assert_eq!(
            parse_region("{HLA-A*01:01:01:01}:9000-9600", &h),
            r(0, 8999, 9600)
        );
        assert_eq!(parse_region("chrUn:100-200", &h), r(1, 0, POS_MAX));
        assert_eq!(parse_region("{chrUn:100-200}:1-1000", &h), r(1, 0, 1000));
        assert_eq!(parse_region("{chr2}:50", &h), r(3, 49, POS_MAX));
        assert_eq!(parse_region("{chr2:50}", &h), r(2, 0, POS_MAX));
        assert_eq!(parse_region("{chr2:50}:5000-6000", &h), r(2, 4999, 6000));
        assert!(matches!(
            parse_region("chr2:50", &h),
            Err(RegionError::Ambiguous { .. })
        ));
        assert_eq!(parse_region("weird|name;x=1:300", &h), r(4, 299, POS_MAX));
    }

    #[test]
    fn decimals() {
        assert_eq!(parse_decimal(b"1,000"), (1000, 5));
        assert_eq!(parse_decimal(b"  12x"), (12, 4));
        assert_eq!(parse_decimal(b"-7"), (-7, 2));
        assert_eq!(parse_decimal(b"x"), (0, 0));
        assert_eq!(parse_decimal(b""), (0, 0));
        assert_eq!(parse_decimal(b"2.5M"), (2_500_000, 4));
        assert_eq!(parse_decimal(b"1.25"), (1, 4));
        assert_eq!(parse_decimal(b"1e999999999"), (0, 11));
        assert_eq!(parse_decimal(b"5e-999999999"), (0, 12));
        // The fuzzer's find: the exponent's digits wrap to i32::MIN before the sign applies.
        assert_eq!(parse_decimal(b"1e-2147483648"), (0, 13));
        // Other exponents past i32 wrap as C's int does (this one to 938855437, then negated).
        assert_eq!(parse_decimal(b"1e-28888888888333"), (0, 17));
    }
}
