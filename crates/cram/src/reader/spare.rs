//! A slice's lists (its records as stored, made whole, their mate links) kept, emptied, on
//! the thread that was done with them for the next slice it decodes. Each is megabytes for a
//! slice of 10 000 records: allocated afresh, glibc maps it and unmaps it each time, a page
//! fault for every 4 KiB written (chr22 at one thread: 101 K faults against 7 K). Records made
//! whole are not kept for their buffers: a slice's worth of them (megabytes) cost more in
//! cache misses than the allocations saved (measured twice: 20% more user time for 10% fewer
//! instructions, then 8% more for 11% fewer); a record laid out where it is made whole
//! ([`super::laid`]) is made in one reused record instead.

use std::cell::RefCell;

use crate::alignment::Alignment;
use crate::mates::Link;
use crate::record::Stored;

/// At most this many lists of each kind are kept by a thread.
const KEPT_LISTS: usize = 4;

#[derive(Default)]
struct Spares {
    stored: Vec<Stored>,
    alignments: Vec<Vec<Alignment>>,
    placed: Vec<Alignment>,
    links: Vec<Vec<Link>>,
}

thread_local! {
    static SPARES: RefCell<Spares> = RefCell::default();
}

/// A list with room for more entries than this is not kept: a slice far larger than samtools
/// writes (10 000 records) would otherwise hold its memory for the reader's life.
const KEPT_ENTRIES: usize = 1 << 16;
/// ...nor a buffer of a slice's stored bytes larger than this.
const KEPT_BYTES: usize = 64 << 20;

/// Keeps `v`, emptied, unless enough are kept, it holds nothing, or it is very large.
fn keep_in<T>(list: &mut Vec<Vec<T>>, mut v: Vec<T>) {
    if v.capacity() == 0 || v.capacity() > KEPT_ENTRIES || list.len() >= KEPT_LISTS {
        return;
    }
    v.clear();
    list.push(v);
}

/// An empty list for a slice's records as stored.
pub(crate) fn stored() -> Stored {
    SPARES.with_borrow_mut(|s| s.stored.pop().unwrap_or_default())
}

/// An empty list for a slice's records made whole.
pub(crate) fn alignments() -> Vec<Alignment> {
    SPARES.with_borrow_mut(|s| s.alignments.pop().unwrap_or_default())
}

/// The list a slice's records are placed in before they are laid out: those of the last
/// slice, whose buffers (names) are reused.
pub(crate) fn placed() -> Vec<Alignment> {
    SPARES.with_borrow_mut(|s| std::mem::take(&mut s.placed))
}

/// Keeps the list [`placed`] gave, unless very large.
pub(crate) fn keep_placed(placed: Vec<Alignment>) {
    if placed.capacity() <= KEPT_ENTRIES {
        SPARES.with_borrow_mut(|s| s.placed = placed);
    }
}

/// An empty list for a slice's mate links.
pub(crate) fn links() -> Vec<Link> {
    SPARES.with_borrow_mut(|s| s.links.pop().unwrap_or_default())
}

/// Keeps the lists of a slice's stored records and links.
pub(crate) fn keep_lists(mut stored: Stored, links: Vec<Link>) {
    SPARES.with_borrow_mut(|s| {
        let large = stored.records.capacity() > KEPT_ENTRIES
            || stored.features.capacity() > 4 * KEPT_ENTRIES
            || stored.bytes.capacity() > KEPT_BYTES;
        if !large && s.stored.len() < KEPT_LISTS {
            stored.clear();
            s.stored.push(stored);
        }
        keep_in(&mut s.links, links);
    });
}

/// Frees records made whole and keeps their list.
pub(crate) fn keep(recs: Vec<Alignment>) {
    SPARES.with_borrow_mut(|s| keep_in(&mut s.alignments, recs));
}
