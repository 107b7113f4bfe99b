//! Region strings as tabix reads them (`hts_parse_region` with thousands separators):
//! `NAME`, `NAME:BEG`, `NAME:BEG-END`, `NAME:-END`, 1-based and inclusive; a whole string that
//! is a sequence name is that name even when it holds a `:`.

use index::tbi::Meta;

/// The end of a region without one (htslib's `HTS_POS_MAX`).
pub const MAX_END: i64 = (1i64 << 62) - 1;

/// A region resolved against the index's names: 0-based, half-open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// The sequence's index in [`Meta::names`].
    pub tid: usize,
    /// 0-based start.
    pub beg: i64,
    /// 0-based exclusive end.
    pub end: i64,
}

/// A number with optional `,` separators; `None` unless the whole text is one.
fn number(s: &str) -> Option<i64> {
    let digits: String = s.chars().filter(|&c| c != ',').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<i64>().unwrap_or(MAX_END).min(MAX_END))
}

/// Resolves `text` against `meta`'s names. `None` for a name the index does not hold or text
/// that is not a region: tabix prints nothing for either and goes on.
pub fn parse(meta: &Meta, text: &str) -> Option<Region> {
    if let Some(tid) = meta.tid(text) {
        return Some(Region {
            tid,
            beg: 0,
            end: MAX_END,
        });
    }
    let (name, range) = text.rsplit_once(':')?;
    let tid = meta.tid(name)?;
    let (beg, end) = match range.split_once('-') {
        Some((b, e)) => (
            if b.is_empty() { Some(1) } else { number(b) },
            if e.is_empty() {
                Some(MAX_END)
            } else {
                number(e)
            },
        ),
        None => (number(range), Some(MAX_END)),
    };
    let (beg, end) = (beg?, end?);
    Some(Region {
        tid,
        beg: (beg - 1).max(0),
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Meta {
        Meta {
            format: 2,
            col_seq: 1,
            col_beg: 2,
            col_end: 0,
            meta_char: 35,
            skip: 0,
            names: vec!["chr1".into(), "HLA:1".into()],
        }
    }

    #[test]
    fn regions() {
        let m = meta();
        let r = |s| parse(&m, s).map(|r| (r.tid, r.beg, r.end));
        assert_eq!(r("chr1"), Some((0, 0, MAX_END)));
        assert_eq!(r("chr1:0"), Some((0, 0, MAX_END)));
        assert_eq!(r("chr1:150"), Some((0, 149, MAX_END)));
        assert_eq!(r("chr1:1,000-20,100"), Some((0, 999, 20100)));
        assert_eq!(r("chr1:-150"), Some((0, 0, 150)));
        assert_eq!(r("chr1:5-"), Some((0, 4, MAX_END)));
        assert_eq!(r("HLA:1"), Some((1, 0, MAX_END)));
        assert_eq!(r("HLA:1:5-9"), Some((1, 4, 9)));
        assert_eq!(r("chrX"), None);
        assert_eq!(r("chr1:x-9"), None);
    }
}
