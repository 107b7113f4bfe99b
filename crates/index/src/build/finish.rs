//! `hts_idx_finish`'s passes over each reference once every record is in: empty windows of
//! the linear index filled, each bin's `loffset` set, and bins too small to be worth a seek
//! merged into their parents, their chunks joined where they touch.

use super::{Chunks, Reference, MIN_MARKER_DIST};
use crate::binning;

/// `update_loff`: empty windows take the next window's offset; each bin's loffset is the
/// linear-index entry of its first window.
pub(super) fn fill_linear_and_loffsets(r: &mut Reference, n_bins: u32, depth: u32) {
    for l in (0..r.linear.len().saturating_sub(1)).rev() {
        if r.linear[l] == u64::MAX {
            r.linear[l] = r.linear[l + 1];
        }
    }
    let Some(table) = r.bins.as_mut() else {
        return;
    };
    for (i, key) in table.buckets() {
        let loffset = if key < n_bins {
            let bottom = binning::bottom(key, depth) as usize;
            r.linear.get(bottom).copied().unwrap_or(0)
        } else {
            0
        };
        if let Some(bin) = table.at_mut(i) {
            bin.loffset = loffset;
        }
    }
}

/// `compress_binning`: bins whose chunks span less than [`MIN_MARKER_DIST`] move into their
/// parent, level by level from the bottom; then chunks starting in the block where the
/// previous one ends are joined.
pub(super) fn compress_bins(r: &mut Reference, n_bins: u32, depth: u32) {
    let Some(table) = r.bins.as_mut() else {
        return;
    };
    for l in (1..=depth).rev() {
        let start = binning::first_bin(l);
        for (i, key) in table.buckets() {
            if key >= n_bins || key < start {
                continue;
            }
            let Some(bin) = table.at_mut(i) else { continue };
            if l < depth && bin.chunks.len() > 1 {
                bin.chunks.sort_by_key(|c| c.0);
            }
            let (Some(first), Some(last)) = (bin.chunks.first(), bin.chunks.last()) else {
                continue;
            };
            if (last.1 >> 16).wrapping_sub(first.0 >> 16) >= MIN_MARKER_DIST {
                continue;
            }
            let Some(parent) = table.get(binning::parent(key)) else {
                continue;
            };
            if let Some(moved) = table.remove_at(i) {
                if let Some(p) = table.at_mut(parent) {
                    p.chunks.extend(moved.chunks);
                }
            }
        }
    }
    if let Some(root) = table.get(0).and_then(|i| table.at_mut(i)) {
        root.chunks.sort_by_key(|c| c.0);
    }
    for (i, key) in table.buckets() {
        if key >= n_bins {
            continue;
        }
        let Some(bin) = table.at_mut(i) else { continue };
        let mut merged: Chunks = Vec::with_capacity(bin.chunks.len());
        for &c in &bin.chunks {
            match merged.last_mut() {
                Some(m) if m.1 >> 16 >= c.0 >> 16 => m.1 = m.1.max(c.1),
                _ => merged.push(c),
            }
        }
        bin.chunks = merged;
    }
}
