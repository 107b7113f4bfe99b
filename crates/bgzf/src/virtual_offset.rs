use std::fmt;

/// A BGZF virtual file offset: the compressed offset of a block's first byte (48 bits) and an
/// offset into that block's uncompressed data (16 bits), packed as `coffset << 16 | uoffset`.
///
/// Ordering is the packed integer's, which is file order.
///
/// ```
/// use bgzf::VirtualOffset;
/// let v = VirtualOffset::new(1234, 56);
/// assert_eq!(v.coffset(), 1234);
/// assert_eq!(v.uoffset(), 56);
/// assert_eq!(u64::from(v), 1234 << 16 | 56);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VirtualOffset(u64);

impl VirtualOffset {
    /// The largest compressed offset a virtual offset can hold.
    pub const MAX_COFFSET: u64 = (1 << 48) - 1;

    /// Packs a compressed offset and an in-block offset. A compressed offset past
    /// [`VirtualOffset::MAX_COFFSET`] (no BGZF file can be that large) saturates to it, so a
    /// bad value can never wrap round to an offset near the start of the file; use
    /// [`VirtualOffset::checked_new`] to refuse it instead.
    pub const fn new(coffset: u64, uoffset: u16) -> VirtualOffset {
        let c = if coffset > Self::MAX_COFFSET {
            Self::MAX_COFFSET
        } else {
            coffset
        };
        VirtualOffset((c << 16) | uoffset as u64)
    }

    /// Packs a compressed offset and an in-block offset; `None` when the compressed offset does
    /// not fit in 48 bits.
    ///
    /// ```
    /// use bgzf::VirtualOffset;
    /// assert!(VirtualOffset::checked_new(VirtualOffset::MAX_COFFSET, 1).is_some());
    /// assert!(VirtualOffset::checked_new(1 << 48, 0).is_none());
    /// ```
    pub const fn checked_new(coffset: u64, uoffset: u16) -> Option<VirtualOffset> {
        if coffset > Self::MAX_COFFSET {
            None
        } else {
            Some(VirtualOffset((coffset << 16) | uoffset as u64))
        }
    }

    /// The packed value as stored in BAI/CSI files.
    pub const fn from_raw(raw: u64) -> VirtualOffset {
        VirtualOffset(raw)
    }

    /// The packed value.
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The compressed offset of the block.
    pub const fn coffset(self) -> u64 {
        self.0 >> 16
    }

    /// The offset into the block's uncompressed data.
    pub const fn uoffset(self) -> u16 {
        (self.0 & 0xffff) as u16
    }
}

impl From<u64> for VirtualOffset {
    fn from(raw: u64) -> VirtualOffset {
        VirtualOffset(raw)
    }
}

impl From<VirtualOffset> for u64 {
    fn from(v: VirtualOffset) -> u64 {
        v.0
    }
}

impl fmt::Debug for VirtualOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VirtualOffset({}:{})", self.coffset(), self.uoffset())
    }
}

impl fmt::Display for VirtualOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.coffset(), self.uoffset())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_and_order() {
        let a = VirtualOffset::new(0, 65535);
        let b = VirtualOffset::new(1, 0);
        assert!(a < b);
        assert_eq!(
            VirtualOffset::new(VirtualOffset::MAX_COFFSET, 7).coffset(),
            VirtualOffset::MAX_COFFSET
        );
        assert_eq!(
            VirtualOffset::new(1 << 48, 9),
            VirtualOffset::new(VirtualOffset::MAX_COFFSET, 9),
            "a compressed offset past 48 bits saturates, never wraps"
        );
        assert_eq!(
            VirtualOffset::new(u64::MAX, 0).coffset(),
            VirtualOffset::MAX_COFFSET
        );
        assert_eq!(VirtualOffset::checked_new(1 << 48, 0), None);
        assert_eq!(VirtualOffset::from_raw(0x1_0002).coffset(), 1);
        assert_eq!(VirtualOffset::from_raw(0x1_0002).uoffset(), 2);
        assert_eq!(format!("{}", VirtualOffset::new(5, 6)), "5:6");
    }
}
