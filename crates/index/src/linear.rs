//! The linear index of a BAI (or TBI) as htslib holds it after loading: gaps filled, and each
//! bin's loffset derived from it.

use crate::binning;
use crate::bins::Bins;

/// Fills gaps in a loaded linear index as htslib does: zero entries after the first non-zero one
/// take the next entry's value (older samtools and tabix left them), then entries equal to
/// `u64::MAX` take the next entry's value (`update_loff`).
pub(crate) fn fill_linear(offsets: &mut [u64]) {
    let n = offsets.len();
    let first_nonzero = offsets.iter().position(|&o| o != 0).unwrap_or(n);
    let mut j = n.saturating_sub(1);
    while j > first_nonzero {
        if offsets[j - 1] == 0 {
            offsets[j - 1] = offsets[j];
        }
        j -= 1;
    }
    for l in (0..n.saturating_sub(1)).rev() {
        if offsets[l] == u64::MAX {
            offsets[l] = offsets[l + 1];
        }
    }
}

/// BAI stores no per-bin loffset; htslib derives it from the linear index entry of the bin's
/// first window, or 0 when that window is past the linear index or the bin is out of range.
pub(crate) fn set_bai_loffsets(bins: &mut Bins, linear: &[u64], depth: u32, n_bins: u32) {
    bins.set_loffsets(|id| {
        if id < n_bins {
            let bot = binning::bottom(id, depth);
            usize::try_from(bot)
                .ok()
                .and_then(|b| linear.get(b))
                .copied()
                .unwrap_or(0)
        } else {
            0
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_fill() {
        let mut v = vec![0, 0, 5, 0, 0, 9, 0, 12];
        fill_linear(&mut v);
        assert_eq!(v, vec![0, 0, 5, 9, 9, 9, 12, 12]);
        let mut v = vec![3, u64::MAX, u64::MAX, 7];
        fill_linear(&mut v);
        assert_eq!(v, vec![3, 7, 7, 7]);
        let mut v: Vec<u64> = vec![];
        fill_linear(&mut v);
        let mut v = vec![0, 0];
        fill_linear(&mut v);
        assert_eq!(v, vec![0, 0]);
    }
}
