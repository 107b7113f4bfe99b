//! The hierarchical binning scheme shared by BAI and CSI.
//!
//! A scheme is described by `min_shift` (the bottom level's bins cover `2^min_shift` bases) and
//! `depth` (the number of levels below the root bin 0). BAI is `min_shift = 14, depth = 5`.
//! Level `l` starts at bin `(8^l - 1) / 7`; each bin has eight children. Coordinates are 0-based
//! and intervals half-open `[beg, end)`, as in htslib.
//!
//! # Panics
//! The functions expect a scheme that [`crate::Index`] would accept: `depth <=` [`MAX_DEPTH`]
//! and `min_shift + 3 * depth <= 62`. Larger values overflow a shift and panic.

/// The deepest scheme this crate accepts. htslib computes bin numbers in a C `int`, which
/// overflows beyond depth 9.
pub const MAX_DEPTH: u32 = 9;

/// The number of real bins in a scheme of `depth` levels below the root.
///
/// ```
/// assert_eq!(index::binning::bin_count(5), 37449);
/// ```
pub const fn bin_count(depth: u32) -> u32 {
    ((1u64 << (3 * (depth + 1))) - 1) as u32 / 7
}

/// The pseudo-bin that holds per-reference metadata: `bin_count(depth) + 1` (37450 for BAI).
///
/// ```
/// assert_eq!(index::binning::pseudo_bin(5), 37450);
/// assert_eq!(index::binning::pseudo_bin(3), 586);
/// ```
pub const fn pseudo_bin(depth: u32) -> u32 {
    bin_count(depth) + 1
}

/// The first bin of level `level` (0 is the root).
pub const fn first_bin(level: u32) -> u32 {
    (((1u64 << (3 * level)) - 1) / 7) as u32
}

/// The parent of a bin (the root's parent is reported as 0).
pub const fn parent(bin: u32) -> u32 {
    bin.saturating_sub(1) >> 3
}

/// The level of a bin: 0 for the root, `depth` for the bottom level.
pub fn level(bin: u32) -> u32 {
    let mut l = 0;
    let mut b = bin;
    while b != 0 {
        b = parent(b);
        l += 1;
    }
    l
}

/// The index, in bottom-level bins (that is, in linear-index windows), of the first window a
/// bin covers. This is htslib's `hts_bin_bot`.
pub fn bottom(bin: u32, depth: u32) -> u64 {
    let l = level(bin);
    let shift = 3 * depth.saturating_sub(l);
    u64::from(bin - first_bin(l)) << shift
}

/// One past the largest position a scheme can bin: `2^(min_shift + 3 * depth)`
/// (2^29 for BAI).
pub const fn max_position(min_shift: u32, depth: u32) -> u64 {
    1u64 << (min_shift + 3 * depth)
}

fn to_signed(x: u64) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

/// The smallest bin that contains all of `[beg, end)` (htslib's `hts_reg2bin`).
///
/// ```
/// use index::binning::reg2bin;
/// assert_eq!(reg2bin(0, 1, 14, 5), 4681);
/// assert_eq!(reg2bin(16383, 16385, 14, 5), 585);
/// assert_eq!(reg2bin(0, 1 << 29, 14, 5), 0);
/// ```
pub fn reg2bin(beg: u64, end: u64, min_shift: u32, depth: u32) -> u32 {
    reg2bin_signed(to_signed(beg), to_signed(end), min_shift, depth)
}

/// [`reg2bin`] on signed positions, with htslib's arithmetic on `hts_pos_t`: the bin a record
/// at `pos` -1 gets (`[-1, 0)`: the bin left of the first bottom-level bin, 4680 for BAI), as
/// `bam_read1` recomputes it.
///
/// ```
/// use index::binning::reg2bin_signed;
/// assert_eq!(reg2bin_signed(-1, 0, 14, 5), 4680);
/// assert_eq!(reg2bin_signed(16383, 16385, 14, 5), 585);
/// ```
// Inline across crates: bam computes it for every record it decodes.
#[inline]
pub fn reg2bin_signed(beg: i64, end: i64, min_shift: u32, depth: u32) -> u32 {
    let last = end.saturating_sub(1);
    let mut s = min_shift;
    let mut t = i64::from(first_bin(depth));
    let mut l = depth;
    while l > 0 {
        if beg >> s == last >> s {
            return (t + (beg >> s)) as u32;
        }
        l -= 1;
        s += 3;
        t -= 1i64 << (3 * l);
    }
    0
}

/// Every bin, level by level from the root, that may hold records overlapping `[beg, end)`
/// (htslib's `reg2bins`). Empty when `beg >= end`; `end` is clamped to
/// [`max_position`].
///
/// The list can be long for deep schemes (a whole 2^32 reference at `min_shift 14, depth 6`
/// lists about 300 000 bins); [`crate::Index::query`] walks the bins present instead.
///
/// ```
/// use index::binning::reg2bins;
/// assert_eq!(reg2bins(0, 1, 14, 5), vec![0, 1, 9, 73, 585, 4681]);
/// assert!(reg2bins(10, 10, 14, 5).is_empty());
/// ```
pub fn reg2bins(beg: u64, end: u64, min_shift: u32, depth: u32) -> Vec<u32> {
    let mut bins = Vec::new();
    for_each_level(beg, end, min_shift, depth, |first, last| {
        bins.extend(first..=last);
    });
    bins
}

/// Calls `f(first, last)` with the inclusive bin range of each level that `[beg, end)` touches,
/// root first, exactly as htslib's `reg2bins` would list them.
pub(crate) fn for_each_level(
    beg: u64,
    end: u64,
    min_shift: u32,
    depth: u32,
    mut f: impl FnMut(u32, u32),
) {
    let beg = to_signed(beg);
    let mut end = to_signed(end);
    let mut s = min_shift + 3 * depth;
    if beg >= end {
        return;
    }
    end = end.min(1i64 << s);
    end -= 1;
    let mut t: i64 = 0;
    for l in 0..=depth {
        let b = t + (beg >> s);
        let e = t + (end >> s);
        if b <= e {
            f(b as u32, e as u32);
        }
        t += 1i64 << (3 * l);
        s = s.saturating_sub(3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The straightforward definition: at each level, the bins whose span overlaps the region.
    fn naive_reg2bins(beg: u64, end: u64, min_shift: u32, depth: u32) -> Vec<u32> {
        let mut out = Vec::new();
        if beg >= end {
            return out;
        }
        let end = end.min(max_position(min_shift, depth));
        for l in 0..=depth {
            let width = 1u64 << (min_shift + 3 * (depth - l));
            for i in (beg / width)..=((end - 1) / width) {
                out.push(first_bin(l) + i as u32);
            }
        }
        out
    }

    fn naive_reg2bin(beg: u64, end: u64, min_shift: u32, depth: u32) -> u32 {
        for l in (0..=depth).rev() {
            let width = 1u64 << (min_shift + 3 * (depth - l));
            if beg / width == (end - 1) / width {
                return first_bin(l) + (beg / width) as u32;
            }
        }
        0
    }

    #[test]
    fn bin_counts() {
        assert_eq!(bin_count(0), 1);
        assert_eq!(bin_count(3), 585);
        assert_eq!(bin_count(6), 299593);
        assert_eq!(first_bin(5), 4681);
        assert_eq!(first_bin(0), 0);
        assert_eq!(level(0), 0);
        assert_eq!(level(4681), 5);
        assert_eq!(level(37448), 5);
        assert_eq!(level(4680), 4);
        assert_eq!(bottom(0, 5), 0);
        assert_eq!(bottom(4681 + 7, 5), 7);
        assert_eq!(bottom(585 + 2, 5), 16);
        assert_eq!(bottom(2, 5), 4096);
        assert_eq!(max_position(14, 5), 1 << 29);
        assert_eq!(max_position(14, 6), 1 << 32);
    }

    #[test]
    fn bai_level_boundaries() {
        // The last base of each bottom-level window and of each coarser bin.
        assert_eq!(reg2bin(16383, 16384, 14, 5), 4681);
        assert_eq!(reg2bin(16384, 16385, 14, 5), 4682);
        assert_eq!(reg2bin(16383, 16385, 14, 5), 585);
        assert_eq!(reg2bin((1 << 17) - 1, (1 << 17) + 1, 14, 5), 73);
        assert_eq!(reg2bin((1 << 20) - 1, (1 << 20) + 1, 14, 5), 9);
        assert_eq!(reg2bin((1 << 23) - 1, (1 << 23) + 1, 14, 5), 1);
        assert_eq!(reg2bin((1 << 26) - 1, (1 << 26) + 1, 14, 5), 0);
        assert_eq!(reg2bin((1 << 29) - 1, 1 << 29, 14, 5), 37448);
        assert_eq!(reg2bin(0, 1 << 17, 14, 5), 585);
        assert_eq!(reg2bin(0, (1 << 17) + 1, 14, 5), 73);
        assert_eq!(reg2bin(0, 1 << 26, 14, 5), 1);
        for k in [14u32, 17, 20, 23, 26, 29] {
            let p = 1u64 << k;
            for (b, e) in [
                (p - 1, p),
                (p - 1, p + 1),
                (0, p),
                (p, p + 1),
                (p - 16384, p),
            ] {
                assert_eq!(
                    reg2bins(b, e, 14, 5),
                    naive_reg2bins(b, e, 14, 5),
                    "[{b},{e})"
                );
                if e <= 1 << 29 {
                    assert_eq!(
                        reg2bin(b, e, 14, 5),
                        naive_reg2bin(b, e, 14, 5),
                        "[{b},{e})"
                    );
                }
            }
        }
    }

    #[test]
    fn bai_reg2bins_exact() {
        assert_eq!(
            reg2bins(16383, 16385, 14, 5),
            vec![0, 1, 9, 73, 585, 4681, 4682]
        );
        assert_eq!(
            reg2bins((1 << 29) - 1, 1 << 29, 14, 5),
            vec![0, 8, 72, 584, 4680, 37448]
        );
        // End beyond 2^29 is clamped, so this is the same as the line above.
        assert_eq!(
            reg2bins((1 << 29) - 1, 1 << 40, 14, 5),
            vec![0, 8, 72, 584, 4680, 37448]
        );
        // A start beyond the scheme gives nothing, even though end > beg.
        assert!(reg2bins((1 << 29) + 5, 1 << 30, 14, 5).is_empty());
        assert_eq!(reg2bins(0, 1 << 29, 14, 5).len(), 37449);
        assert_eq!(reg2bins(0, u64::MAX, 14, 5).len(), 37449);
    }

    #[test]
    fn csi_geometries() {
        for min_shift in [12u32, 14] {
            for depth in 3..=7u32 {
                let max = max_position(min_shift, depth);
                let mut points = vec![0u64, 1, max - 1, max];
                for l in 0..=depth {
                    let w = 1u64 << (min_shift + 3 * l);
                    if w <= max {
                        points.extend([w - 1, w, w + 1, 3 * w - 1]);
                    }
                }
                points.retain(|&p| p <= max);
                points.sort_unstable();
                for &b in &points {
                    for &e in &points {
                        if b < e && (e - b) >> min_shift < 5000 {
                            assert_eq!(
                                reg2bins(b, e, min_shift, depth),
                                naive_reg2bins(b, e, min_shift, depth),
                                "m{min_shift} d{depth} [{b},{e})"
                            );
                        }
                        if b < e {
                            assert_eq!(
                                reg2bin(b, e, min_shift, depth),
                                naive_reg2bin(b, e, min_shift, depth),
                                "m{min_shift} d{depth} [{b},{e})"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn long_reference() {
        // 1.5 Gbp needs 2^31 > 1.5e9: min_shift 14 with depth 6 reaches 2^32.
        let len = 1_500_000_000u64;
        assert!(max_position(14, 6) > len);
        assert_eq!(
            reg2bin(len - 1, len, 14, 6),
            first_bin(6) + ((len - 1) >> 14) as u32
        );
        // Level-1 bins are 2^29 wide here, so crossing 2^29 or 2^30 needs the root.
        assert_eq!(reg2bin((1 << 30) - 1, (1 << 30) + 1, 14, 6), 0);
        assert_eq!(reg2bin((1 << 29) - 1, (1 << 29) + 1, 14, 6), 0);
        assert_eq!(reg2bin((1 << 28) - 1, (1 << 28) + 1, 14, 6), 1);
        assert_eq!(
            reg2bin((1 << 30) + 5, (1 << 30) + 6, 14, 6),
            first_bin(6) + (1 << 16)
        );
        assert_eq!(
            reg2bins((1 << 30) - 1, (1 << 30) + 1, 14, 6),
            naive_reg2bins((1 << 30) - 1, (1 << 30) + 1, 14, 6)
        );
        assert_eq!(
            reg2bins((1 << 30) - 1, (1 << 30) + 1, 12, 7),
            naive_reg2bins((1 << 30) - 1, (1 << 30) + 1, 12, 7)
        );
        assert_eq!(reg2bins(len - 1, len, 14, 6)[..2], [0, 3]);
    }

    #[test]
    fn depth_zero() {
        assert_eq!(reg2bins(0, 100, 14, 0), vec![0]);
        assert_eq!(reg2bins(0, 1 << 20, 14, 0), vec![0]);
        assert!(reg2bins(1 << 14, 1 << 20, 14, 0).is_empty());
        assert_eq!(reg2bin(0, 100, 14, 0), 0);
    }
}
