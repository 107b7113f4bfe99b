//! How far a bounded read needs to go: the byte end of a chunk of virtual offsets.

use crate::block::MAX_BLOCK_SIZE;
use crate::VirtualOffset;

/// Compressed offsets known to be block starts, sorted and without duplicates.
///
/// The index layer collects them from every chunk boundary and linear-index entry (or a `.gzi`),
/// so that the end of a chunk's last block can be found without reading it.
///
/// ```
/// let starts: bgzf::BlockStarts = [300, 100, 200, 100].into_iter().collect();
/// assert_eq!(starts.as_slice(), &[100, 200, 300]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockStarts(Vec<u64>);

impl BlockStarts {
    /// Sorts and deduplicates `starts`.
    pub fn new(mut starts: Vec<u64>) -> BlockStarts {
        starts.sort_unstable();
        starts.dedup();
        BlockStarts(starts)
    }

    /// The starts, ascending.
    pub fn as_slice(&self) -> &[u64] {
        &self.0
    }

    /// How many starts are known.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no start is known.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<u64> for BlockStarts {
    fn from_iter<I: IntoIterator<Item = u64>>(iter: I) -> BlockStarts {
        BlockStarts::new(iter.into_iter().collect())
    }
}

/// The byte end (exclusive) of the compressed bytes needed to read a chunk that ends at the
/// virtual offset `end` (docs/ARCHITECTURE.md, rule 2).
///
/// If `end.uoffset()` is 0 the block at `end.coffset()` is not needed, so the end is
/// `end.coffset()`. Otherwise that block must be read whole; its size is unknown, so the end is
/// the first known block start after it (`starts` ascending, e.g. [`BlockStarts::as_slice`]),
/// or `end.coffset() + 65536` (the largest a block can be), whichever comes first. The result
/// is clamped to `file_size`.
///
/// ```
/// use bgzf::{byte_end, BlockStarts, VirtualOffset};
/// let starts = BlockStarts::new(vec![0, 1000, 5000]);
/// assert_eq!(byte_end(VirtualOffset::new(1000, 0), starts.as_slice(), 1 << 20), 1000);
/// assert_eq!(byte_end(VirtualOffset::new(1000, 5), starts.as_slice(), 1 << 20), 5000);
/// assert_eq!(byte_end(VirtualOffset::new(5000, 5), starts.as_slice(), 1 << 20), 5000 + 65536);
/// assert_eq!(byte_end(VirtualOffset::new(5000, 5), &[], 6000), 6000);
/// // A known start further than a block can reach does not widen the end.
/// assert_eq!(byte_end(VirtualOffset::new(0, 5), &[0, 900_000], 1 << 20), 65536);
/// ```
pub fn byte_end(end: VirtualOffset, starts: &[u64], file_size: u64) -> u64 {
    let unclamped = if end.uoffset() == 0 {
        end.coffset()
    } else {
        let largest = end.coffset().saturating_add(MAX_BLOCK_SIZE as u64);
        let i = starts.partition_point(|&s| s <= end.coffset());
        starts.get(i).map_or(largest, |&next| next.min(largest))
    };
    unclamped.min(file_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_starts_are_sorted_and_deduplicated() {
        let s = BlockStarts::new(vec![9, 3, 3, 7, 0]);
        assert_eq!(s.as_slice(), &[0, 3, 7, 9]);
        assert_eq!(s.len(), 4);
        assert!(BlockStarts::default().is_empty());
    }

    #[test]
    fn rule_two() {
        let starts = BlockStarts::new(vec![0, 100, 250, 900]);
        // uoffset 0: the end block is not needed.
        assert_eq!(
            byte_end(VirtualOffset::new(250, 0), starts.as_slice(), 10_000),
            250
        );
        // End block needed: next known start.
        assert_eq!(
            byte_end(VirtualOffset::new(250, 1), starts.as_slice(), 10_000),
            900
        );
        // End inside a block that is not itself a known start: still the next start after it.
        assert_eq!(
            byte_end(VirtualOffset::new(300, 1), starts.as_slice(), 10_000),
            900
        );
        // No known start after: + 64 KiB, clamped.
        assert_eq!(
            byte_end(VirtualOffset::new(900, 1), starts.as_slice(), 10_000),
            10_000
        );
        assert_eq!(
            byte_end(VirtualOffset::new(900, 1), starts.as_slice(), 1 << 30),
            900 + 65536
        );
        assert_eq!(
            byte_end(VirtualOffset::new(250, 1), &[], 1 << 30),
            250 + 65536
        );
        // Clamp applies to uoffset-0 ends too.
        assert_eq!(byte_end(VirtualOffset::new(5000, 0), &[], 4000), 4000);
        // Saturating near the top of the offset range.
        let top = VirtualOffset::new(VirtualOffset::MAX_COFFSET, 1);
        assert_eq!(
            byte_end(top, &[], u64::MAX),
            VirtualOffset::MAX_COFFSET + 65536
        );
    }
}
