//! A slice's lists (its records as stored, made whole, their mate links) kept, emptied, on
//! the thread that was done with them for the next slice it decodes. Each is megabytes for a
//! slice of 10 000 records: allocated afresh, glibc maps it and unmaps it each time, a page
//! fault for every 4 KiB written (chr22 at one thread: 101 K faults against 7 K). Records made
//! whole are kept too, as husks whose five buffers the next slice's records are made in (as
//! samtools reuses its `bam1_t`): five mallocs and frees a record otherwise, and glibc's
//! consolidation of what they leave.

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
    links: Vec<Vec<Link>>,
    husks: Vec<Alignment>,
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

/// At most this many husks are kept by a thread (a slice of samtools' holds 10 000 records)...
const KEPT_HUSKS: usize = 1 << 14;
/// ...each holding at most this many bytes (a short read's need a few hundred).
const HUSK_BYTES: usize = 2048;

/// An empty list for a slice's records as stored.
pub(crate) fn stored() -> Stored {
    SPARES.with_borrow_mut(|s| s.stored.pop().unwrap_or_default())
}

/// The husks kept: records made whole and done with, whose buffers are reused.
pub(crate) fn husks() -> Vec<Alignment> {
    SPARES.with_borrow_mut(|s| std::mem::take(&mut s.husks))
}

/// Keeps husks [`husks`] gave and were not used.
pub(crate) fn keep_husks(husks: Vec<Alignment>) {
    SPARES.with_borrow_mut(|s| {
        if s.husks.is_empty() {
            s.husks = husks;
        } else {
            add_husks(&mut s.husks, husks);
        }
    });
}

/// Adds the small ones of `recs` to `husks` while there is room.
fn add_husks(husks: &mut Vec<Alignment>, mut recs: Vec<Alignment>) -> Vec<Alignment> {
    let room = KEPT_HUSKS.saturating_sub(husks.len());
    let small = |a: &Alignment| {
        a.name.capacity()
            + a.seq.capacity()
            + a.qual.capacity()
            + a.aux.capacity()
            + 4 * a.cigar.capacity()
            <= HUSK_BYTES
    };
    husks.extend(recs.drain(..).filter(small).take(room));
    recs
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

/// Keeps records made whole as husks (those there is room for) and their list.
pub(crate) fn keep(recs: Vec<Alignment>) {
    SPARES.with_borrow_mut(|s| {
        let recs = add_husks(&mut s.husks, recs);
        keep_in(&mut s.alignments, recs);
    });
}
