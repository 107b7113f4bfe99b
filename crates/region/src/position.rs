//! What a coordinate holds: a reference id ([`RefId`]) and a 0-based position ([`Position`]),
//! both unsigned, from a region string through a query to a record's fields. BAM stores both as
//! signed 32-bit integers with -1 for "unset"; here unset is `None`, and the conversion from
//! the stored integers is written once ([`RefId::from_stored`], [`Position::from_stored`]).

use std::fmt;

/// The index of a reference sequence in the header (`@SQ` lines in order; BAM's `refID`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RefId(usize);

impl RefId {
    /// The reference at `index` in the header.
    pub const fn new(index: usize) -> RefId {
        RefId(index)
    }

    /// The index into the header's references.
    pub const fn get(self) -> usize {
        self.0
    }

    /// A stored `refID` (or `next_refID`): `None` for -1 and any other negative value.
    #[inline]
    pub fn from_stored(stored: i32) -> Option<RefId> {
        usize::try_from(stored).ok().map(RefId)
    }
}

impl From<usize> for RefId {
    fn from(index: usize) -> RefId {
        RefId(index)
    }
}

impl fmt::Display for RefId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A 0-based position on a reference (SAM's POS is this plus one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position(u64);

impl Position {
    /// The first base of a reference.
    pub const ZERO: Position = Position(0);

    /// htslib's `HTS_POS_MAX`: the end of a region given without one.
    pub const MAX: Position = Position((i32::MAX as u64) << 32 | i32::MAX as u64);

    /// The 0-based position `pos`.
    pub const fn new(pos: u64) -> Position {
        Position(pos)
    }

    /// The 0-based value.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// A stored `pos` (or `next_pos`): `None` for -1 and any other negative value.
    #[inline]
    pub fn from_stored(stored: i32) -> Option<Position> {
        u64::try_from(stored).ok().map(Position)
    }

    /// A signed position (a region bound, an end computed in htslib's signed arithmetic):
    /// negative values become 0, as htslib's iterators raise a negative start to 0.
    #[inline]
    pub fn saturating_from(pos: i64) -> Position {
        Position(pos.max(0) as u64)
    }
}

impl From<u64> for Position {
    fn from(pos: u64) -> Position {
        Position(pos)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A 0-based half-open interval `[beg, end)` on one reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Interval {
    /// The first position.
    pub beg: Position,
    /// One past the last position.
    pub end: Position,
}

impl Interval {
    /// `[beg, end)`.
    pub const fn new(beg: Position, end: Position) -> Interval {
        Interval { beg, end }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_minus_one_is_none() {
        assert_eq!(RefId::from_stored(-1), None);
        assert_eq!(RefId::from_stored(3), Some(RefId::new(3)));
        assert_eq!(Position::from_stored(-1), None);
        assert_eq!(Position::from_stored(-7), None);
        assert_eq!(Position::from_stored(0), Some(Position::ZERO));
        assert_eq!(Position::saturating_from(-3), Position::ZERO);
        assert_eq!(Position::MAX.get(), 0x7fff_ffff_7fff_ffff);
    }
}
