use std::fmt;

use bgzf::VirtualOffset;

/// A stretch of a BGZF file to read, from `start` (inclusive) to `end` (exclusive), as virtual
/// offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Chunk {
    /// Where the first record starts.
    pub start: VirtualOffset,
    /// Just past the last record.
    pub end: VirtualOffset,
}

impl Chunk {
    /// Builds a chunk from its two virtual offsets.
    pub const fn new(start: VirtualOffset, end: VirtualOffset) -> Chunk {
        Chunk { start, end }
    }

    /// Builds a chunk from packed (raw) virtual offsets.
    pub const fn from_raw(start: u64, end: u64) -> Chunk {
        Chunk {
            start: VirtualOffset::from_raw(start),
            end: VirtualOffset::from_raw(end),
        }
    }
}

impl fmt::Display for Chunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.start, self.end)
    }
}
