//! SAM's FLAG field as a type: a named constant for each bit the SAM specification defines.

use std::fmt;
use std::ops::{BitAnd, BitOr, BitOrAssign, Not};

/// The FLAG bits of a record.
///
/// ```
/// use bam::Flags;
/// let f = Flags::PAIRED | Flags::READ1 | Flags::MATE_UNMAPPED;
/// assert!(f.is_paired() && f.is_mate_unmapped() && !f.is_unmapped());
/// assert!(f.contains(Flags::PAIRED | Flags::READ1));
/// assert_eq!(f.bits(), 0x49);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(u16);

impl Flags {
    /// 0x1: the template has more than one segment (paired).
    pub const PAIRED: Flags = Flags(0x1);
    /// 0x2: each segment properly aligned (proper pair).
    pub const PROPER_PAIR: Flags = Flags(0x2);
    /// 0x4: this segment is unmapped.
    pub const UNMAPPED: Flags = Flags(0x4);
    /// 0x8: the next segment (the mate) is unmapped.
    pub const MATE_UNMAPPED: Flags = Flags(0x8);
    /// 0x10: the sequence is reverse complemented.
    pub const REVERSE: Flags = Flags(0x10);
    /// 0x20: the mate's sequence is reverse complemented.
    pub const MATE_REVERSE: Flags = Flags(0x20);
    /// 0x40: the first segment of the template (read 1).
    pub const READ1: Flags = Flags(0x40);
    /// 0x80: the last segment of the template (read 2).
    pub const READ2: Flags = Flags(0x80);
    /// 0x100: a secondary alignment.
    pub const SECONDARY: Flags = Flags(0x100);
    /// 0x200: not passing quality controls.
    pub const QC_FAIL: Flags = Flags(0x200);
    /// 0x400: a PCR or optical duplicate.
    pub const DUPLICATE: Flags = Flags(0x400);
    /// 0x800: a supplementary alignment.
    pub const SUPPLEMENTARY: Flags = Flags(0x800);
    /// No bit set.
    pub const NONE: Flags = Flags(0);

    /// The flags of the stored FLAG field (every bit kept, defined or not).
    pub const fn from_bits(bits: u16) -> Flags {
        Flags(bits)
    }

    /// The FLAG field as stored.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// True when every bit of `other` is set.
    #[inline]
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// True when any bit of `other` is set.
    #[inline]
    pub const fn intersects(self, other: Flags) -> bool {
        self.0 & other.0 != 0
    }

    /// 0x1 is set.
    pub const fn is_paired(self) -> bool {
        self.contains(Flags::PAIRED)
    }
    /// 0x2 is set.
    pub const fn is_proper_pair(self) -> bool {
        self.contains(Flags::PROPER_PAIR)
    }
    /// 0x4 is set.
    pub const fn is_unmapped(self) -> bool {
        self.contains(Flags::UNMAPPED)
    }
    /// 0x8 is set.
    pub const fn is_mate_unmapped(self) -> bool {
        self.contains(Flags::MATE_UNMAPPED)
    }
    /// 0x10 is set.
    pub const fn is_reverse(self) -> bool {
        self.contains(Flags::REVERSE)
    }
    /// 0x20 is set.
    pub const fn is_mate_reverse(self) -> bool {
        self.contains(Flags::MATE_REVERSE)
    }
    /// 0x40 is set.
    pub const fn is_read1(self) -> bool {
        self.contains(Flags::READ1)
    }
    /// 0x80 is set.
    pub const fn is_read2(self) -> bool {
        self.contains(Flags::READ2)
    }
    /// 0x100 is set.
    pub const fn is_secondary(self) -> bool {
        self.contains(Flags::SECONDARY)
    }
    /// 0x200 is set.
    pub const fn is_qc_fail(self) -> bool {
        self.contains(Flags::QC_FAIL)
    }
    /// 0x400 is set.
    pub const fn is_duplicate(self) -> bool {
        self.contains(Flags::DUPLICATE)
    }
    /// 0x800 is set.
    pub const fn is_supplementary(self) -> bool {
        self.contains(Flags::SUPPLEMENTARY)
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl BitOrAssign for Flags {
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for Flags {
    type Output = Flags;
    fn bitand(self, rhs: Flags) -> Flags {
        Flags(self.0 & rhs.0)
    }
}

impl Not for Flags {
    type Output = Flags;
    fn not(self) -> Flags {
        Flags(!self.0)
    }
}

impl fmt::Display for Flags {
    /// The decimal FLAG, as SAM prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
