//! htslib's region grammar: `hts_itr_querys` (`.` and `*`) and `hts_parse_region`, resolving
//! names through a [`Names`] list, with the errors htslib and samtools print.

use crate::decimal::{parse_decimal, Decimal};
use crate::names::Names;
use crate::position::{Position, RefId};
use crate::region::Region;

/// [`Position::MAX`] in the signed arithmetic of `hts_parse_region`.
const POS_MAX: i64 = Position::MAX.get() as i64;

/// htslib's `HTS_PARSE_*` flags, for [`parse_decimal`] and [`parse_region`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ParseFlags(u8);

impl ParseFlags {
    /// No flag.
    pub const NONE: ParseFlags = ParseFlags(0);
    /// `HTS_PARSE_THOUSANDS_SEP`: `,` within a number is skipped (`1,000`). `hts_parse_region`
    /// always sets it, so [`parse_region`] reads separators whatever the flags say.
    pub const THOUSANDS_SEP: ParseFlags = ParseFlags(1);
    /// `HTS_PARSE_ONE_COORD`: `chr:pos` is the one base `pos`, not `pos` to the end.
    pub const ONE_COORD: ParseFlags = ParseFlags(2);

    /// True when every flag of `other` is set.
    pub const fn contains(self, other: ParseFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for ParseFlags {
    type Output = ParseFlags;

    fn bitor(self, other: ParseFlags) -> ParseFlags {
        ParseFlags(self.0 | other.0)
    }
}

/// Why a region string cannot be used. samtools prints [`RegionError::htslib_message`] (when
/// htslib has one) and [`RegionError::samtools_warning`], skips the region and exits 0; tabix
/// prints htslib's line and goes on, and finds nothing for an unknown name or an empty range.
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

    /// What `hts_parse_region` logs for this error (without its `[E::hts_parse_region] `
    /// prefix), if it logs anything.
    pub fn htslib_complaint(&self) -> Option<String> {
        match self {
            RegionError::MismatchedBraces { region } => {
                Some(format!("Mismatching braces in \"{region}\""))
            }
            RegionError::Ambiguous { region, name, rest } => Some(format!(
                "Range is ambiguous. Use {{{region}}} or {{{name}}}{rest} instead"
            )),
            RegionError::Unexpected { text, .. } => {
                Some(format!("Unexpected string \"{text}\" after region"))
            }
            RegionError::NotPositive { .. } => Some("Coordinates must be > 0".to_string()),
            RegionError::UnknownReference { .. } | RegionError::Empty { .. } => None,
        }
    }

    /// The line htslib's `hts_parse_region` prints for this error, if it prints one.
    pub fn htslib_message(&self) -> Option<String> {
        self.htslib_complaint()
            .map(|c| format!("[E::hts_parse_region] {c}"))
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

/// Resolves a region string against `names` as htslib 1.16's `hts_itr_querys` does (samtools
/// view's and tabix's regions): `.` and `*`, else `hts_parse_region`: `chr`, `chr:beg`,
/// `chr:beg-end`, `chr:-end`, `{name}` and `{name}:beg-end` for names containing `:`, 1-based
/// and inclusive, numbers with `,` thousands separators (and htslib's `k`/`M`/`G`/exponent
/// suffixes). An unbraced string is first tried as a whole name; if its part before the last
/// `:` is also a name, it is ambiguous.
///
/// ```
/// use region::{parse_region, Position, RefId, Region, RegionError};
///
/// let names: &[&str] = &["chr1"];
/// assert_eq!(
///     parse_region("chr1:1,001-2,000", names),
///     Ok(Region::Ref { tid: RefId::new(0), beg: Position::new(1000), end: Position::new(2000) })
/// );
/// assert_eq!(parse_region("*", names), Ok(Region::Unplaced));
/// assert!(matches!(parse_region("chr9", names), Err(RegionError::UnknownReference { .. })));
/// ```
pub fn parse_region<N: Names + ?Sized>(s: &str, names: &N) -> Result<Region, RegionError> {
    parse_region_with(s, names, ParseFlags::NONE)
}

/// [`parse_region`] with htslib's `HTS_PARSE_*` flags (`hts_parse_region`'s `flags`):
/// [`ParseFlags::ONE_COORD`] reads `chr:pos` as the one base `pos`; thousands separators are
/// always read, as `hts_parse_region` reads them.
pub fn parse_region_with<N: Names + ?Sized>(
    s: &str,
    names: &N,
    flags: ParseFlags,
) -> Result<Region, RegionError> {
    match s {
        "." => return Ok(Region::All),
        "*" => return Ok(Region::Unplaced),
        _ => {}
    }
    let (tid, beg, end) = parse(s.as_bytes(), names, flags | ParseFlags::THOUSANDS_SEP)?;
    Ok(Region::Ref {
        tid,
        // hts_itr_query raises a 0 start (from `chr:0-...`) to 0; `end` is then positive.
        beg: Position::saturating_from(beg),
        end: Position::saturating_from(end),
    })
}

/// `hts_parse_region`.
fn parse<N: Names + ?Sized>(
    s: &[u8],
    names: &N,
    flags: ParseFlags,
) -> Result<(RefId, i64, i64), RegionError> {
    let original = String::from_utf8_lossy(s);
    let region = || original.to_string();
    let unknown = || RegionError::UnknownReference { region: region() };
    let lookup = |name: &[u8]| names.tid(name);
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
    let Decimal { value: n, used } = parse_decimal(coords, flags);
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
        None if flags.contains(ParseFlags::ONE_COORD) => beg.wrapping_add(1),
        None => POS_MAX,
        Some(b'-') => {
            let Decimal { value: e, used } = parse_decimal(&rest[1..], flags);
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

#[cfg(test)]
mod tests;
