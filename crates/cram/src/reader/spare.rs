//! A slice's lists (its records as stored, made whole, their mate links) kept, emptied, on
//! the thread that was done with them for the next slice it decodes. Each is megabytes for a
//! slice of 10 000 records: allocated afresh, glibc maps it and unmaps it each time, a page
//! fault for every 4 KiB written (chr22 at one thread: 101 K faults against 7 K). The
//! records' own small buffers are left to the allocator: keeping them as well cost more in
//! cache misses than the allocations it saved (measured: 20% more user time for 10% fewer
//! instructions).

use std::cell::RefCell;

use crate::alignment::Alignment;
use crate::mates::Link;
use crate::record::Record;

/// At most this many lists of each kind are kept by a thread.
const KEPT_LISTS: usize = 4;

#[derive(Default)]
struct Spares {
    records: Vec<Vec<Record>>,
    alignments: Vec<Vec<Alignment>>,
    links: Vec<Vec<Link>>,
}

thread_local! {
    static SPARES: RefCell<Spares> = RefCell::default();
}

/// A list with room for more entries than this is not kept: a slice far larger than samtools
/// writes (10 000 records) would otherwise hold its memory for the reader's life.
const KEPT_ENTRIES: usize = 1 << 16;

/// Keeps `v`, emptied, unless enough are kept, it holds nothing, or it is very large.
fn keep_in<T>(list: &mut Vec<Vec<T>>, mut v: Vec<T>) {
    if v.capacity() == 0 || v.capacity() > KEPT_ENTRIES || list.len() >= KEPT_LISTS {
        return;
    }
    v.clear();
    list.push(v);
}

/// An empty list for a slice's records as stored.
pub(crate) fn records() -> Vec<Record> {
    SPARES.with_borrow_mut(|s| s.records.pop().unwrap_or_default())
}

/// An empty list for a slice's records made whole.
pub(crate) fn alignments() -> Vec<Alignment> {
    SPARES.with_borrow_mut(|s| s.alignments.pop().unwrap_or_default())
}

/// An empty list for a slice's mate links.
pub(crate) fn links() -> Vec<Link> {
    SPARES.with_borrow_mut(|s| s.links.pop().unwrap_or_default())
}

/// Keeps the lists of a slice's stored records and links.
pub(crate) fn keep_lists(records: Vec<Record>, links: Vec<Link>) {
    SPARES.with_borrow_mut(|s| {
        keep_in(&mut s.records, records);
        keep_in(&mut s.links, links);
    });
}

/// Frees records made whole and keeps their list.
pub(crate) fn keep(recs: Vec<Alignment>) {
    SPARES.with_borrow_mut(|s| keep_in(&mut s.alignments, recs));
}
