//! Buffers of records the caller is done with, kept on the thread that gave them back for
//! the records it makes next: a record is made of a name, bases, qualities, tags, a CIGAR
//! and its read features, and a container of 10 000 records allocated and freed them in
//! bursts (glibc's bins and consolidation: a tenth of the CPU). samtools reuses its records'
//! memory the same way. Kept per thread, so that memory stays with the thread (and arena)
//! that uses it.

use std::cell::RefCell;

use crate::alignment::Alignment;
use crate::mates::Link;
use crate::record::{Feature, Record};

/// At most this many buffers of each kind are kept.
const KEPT: usize = 1 << 15;

/// At most this many lists of a slice's records (or their links) are kept: a container's
/// lists are large enough for the allocator to map and unmap them each time (a page fault
/// for every 4 KiB of them) unless kept.
const KEPT_LISTS: usize = 4;

/// At most this many bytes of buffers in all are kept by a thread (long reads give large
/// buffers: a few thousand of them are enough).
const KEPT_BYTES: usize = 64 << 20;

/// What a byte buffer is used for: each kind is kept apart, as their sizes differ.
#[derive(Clone, Copy)]
pub(crate) enum Bytes {
    Name,
    Seq,
    Qual,
    Aux,
}

#[derive(Default)]
struct Spares {
    bytes: [Vec<Vec<u8>>; 4],
    cigar: Vec<Vec<u32>>,
    features: Vec<Vec<Feature>>,
    records: Vec<Vec<Record>>,
    alignments: Vec<Vec<Alignment>>,
    links: Vec<Vec<Link>>,
    /// Bytes held by the buffers above.
    held: usize,
}

thread_local! {
    static SPARES: RefCell<Spares> = RefCell::default();
}

fn keep_in<T>(list: &mut Vec<Vec<T>>, held: &mut usize, mut v: Vec<T>) {
    let size = v.capacity() * std::mem::size_of::<T>();
    if size == 0 || list.len() >= KEPT || *held + size > KEPT_BYTES {
        return;
    }
    v.clear();
    *held += size;
    list.push(v);
}

fn take_from<T>(list: &mut Vec<Vec<T>>, held: &mut usize) -> Vec<T> {
    match list.pop() {
        Some(v) => {
            *held -= v.capacity() * std::mem::size_of::<T>();
            v
        }
        None => Vec::new(),
    }
}

/// An empty buffer for `kind`, with room from an earlier record if one was kept.
pub(crate) fn bytes(kind: Bytes) -> Vec<u8> {
    SPARES.with_borrow_mut(|s| take_from(&mut s.bytes[kind as usize], &mut s.held))
}

/// An empty CIGAR buffer.
pub(crate) fn cigar() -> Vec<u32> {
    SPARES.with_borrow_mut(|s| take_from(&mut s.cigar, &mut s.held))
}

/// An empty list for a slice's records as stored.
pub(crate) fn records() -> Vec<Record> {
    SPARES.with_borrow_mut(|s| take_from(&mut s.records, &mut s.held))
}

/// An empty list for a slice's records made whole.
pub(crate) fn alignments() -> Vec<Alignment> {
    SPARES.with_borrow_mut(|s| take_from(&mut s.alignments, &mut s.held))
}

/// An empty list for a slice's mate links.
pub(crate) fn links() -> Vec<Link> {
    SPARES.with_borrow_mut(|s| take_from(&mut s.links, &mut s.held))
}

/// Keeps the lists of a slice's stored records (emptied) and links.
pub(crate) fn keep_lists(mut records: Vec<Record>, mut links: Vec<Link>) {
    records.clear();
    links.clear();
    SPARES.with_borrow_mut(|s| {
        if s.records.len() < KEPT_LISTS {
            keep_in(&mut s.records, &mut s.held, records);
        }
        if s.links.len() < KEPT_LISTS {
            keep_in(&mut s.links, &mut s.held, links);
        }
    });
}

/// An empty list of read features.
pub(crate) fn features() -> Vec<Feature> {
    SPARES.with_borrow_mut(|s| take_from(&mut s.features, &mut s.held))
}

/// Keeps a byte buffer for `kind`.
pub(crate) fn keep_bytes(kind: Bytes, v: Vec<u8>) {
    SPARES.with_borrow_mut(|s| keep_in(&mut s.bytes[kind as usize], &mut s.held, v));
}

/// Keeps a list of read features (emptied: what its features hold is freed).
pub(crate) fn keep_features(mut f: Vec<Feature>) {
    f.clear();
    SPARES.with_borrow_mut(|s| keep_in(&mut s.features, &mut s.held, f));
}

/// Keeps the buffers of a record made whole.
pub(crate) fn keep_one(a: Alignment) {
    SPARES.with_borrow_mut(|s| keep_alignment(s, a));
}

/// Keeps the buffers of records made whole.
pub(crate) fn keep(mut recs: Vec<Alignment>) {
    SPARES.with_borrow_mut(|s| {
        for a in recs.drain(..) {
            keep_alignment(s, a);
        }
        if s.alignments.len() < KEPT_LISTS {
            keep_in(&mut s.alignments, &mut s.held, recs);
        }
    });
}

fn keep_alignment(s: &mut Spares, a: Alignment) {
    let Alignment {
        name,
        seq,
        qual,
        aux,
        cigar,
        ..
    } = a;
    let [names, seqs, quals, auxes] = &mut s.bytes;
    keep_in(names, &mut s.held, name);
    keep_in(seqs, &mut s.held, seq);
    keep_in(quals, &mut s.held, qual);
    keep_in(auxes, &mut s.held, aux);
    keep_in(&mut s.cigar, &mut s.held, cigar);
}
