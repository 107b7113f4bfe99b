//! The region of a query: an interval of one reference, or one of htslib's two special regions.

use crate::position::{Interval, Position, RefId};

/// What a query reads, resolved against a list of names ([`crate::parse_region`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    /// Records of reference `tid` overlapping the 0-based half-open `[beg, end)`. `end` is
    /// [`Position::MAX`] when the string gave no end; neither bound is clamped to the reference
    /// length (htslib does not either: a region past the end simply finds nothing).
    Ref {
        /// The reference.
        tid: RefId,
        /// The 0-based start.
        beg: Position,
        /// The 0-based end, exclusive.
        end: Position,
    },
    /// `*`: the unplaced records at the end of the file (htslib's `HTS_IDX_NOCOOR`).
    Unplaced,
    /// `.`: every record from the start of the file (htslib's `HTS_IDX_START`).
    All,
}

impl Region {
    /// The region `interval` of reference `tid`.
    pub const fn of(tid: RefId, interval: Interval) -> Region {
        Region::Ref {
            tid,
            beg: interval.beg,
            end: interval.end,
        }
    }

    /// The reference and interval of a [`Region::Ref`]; `None` for the special regions.
    pub fn interval(&self) -> Option<(RefId, Interval)> {
        match *self {
            Region::Ref { tid, beg, end } => Some((tid, Interval::new(beg, end))),
            Region::Unplaced | Region::All => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals() {
        let iv = Interval::new(Position::new(5), Position::new(9));
        let r = Region::of(RefId::new(2), iv);
        assert_eq!(r.interval(), Some((RefId::new(2), iv)));
        assert_eq!(Region::All.interval(), None);
    }
}
