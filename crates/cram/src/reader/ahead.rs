//! Reference bases read before their slices arrive. A remote query waits tens of milliseconds
//! for its containers after the index has named them, and the index gives each slice's
//! reference span as its header will (`.crai`: reference, start, span). In that wait the
//! bases are read from a local FASTA and their MD5 digest made by an idle worker, work that
//! otherwise comes after the container's bytes, on the way to the first record (a tenth of a
//! five-region query's time). A slice whose header names another span, or whose bases were
//! not read ahead, reads them as before; nothing read ahead is used unchecked: the slice's MD5
//! is compared with the digest made of exactly the bases it is given.

use std::collections::HashMap;
use std::sync::Arc;

use crossbeam_channel::Receiver;

use super::decode::SliceRef;
use super::Reader;
use crate::crai::CraiEntry;
use crate::{Error, SliceHeader};

/// Most slices read ahead, and most bases held for them: the first containers of a query,
/// not a whole chromosome's.
const MAX_SLICES: usize = 64;
const MAX_BASES: usize = 64 << 20;

/// A slice's span: reference id, 1-based start, length (as its header and the index give it).
type Key = (i32, i64, i64);

/// Bases read ahead with their digest, made or being made on a worker (which holds the bases
/// until it is done; a job dropped with the queue makes none, and it is made when taken).
enum Prepared {
    Made(SliceRef, [u8; 16]),
    Coming(Arc<SliceRef>, i64, Receiver<Result<[u8; 16], Error>>),
}

/// The spans read ahead and not yet taken.
#[derive(Default)]
pub(super) struct Ahead {
    spans: HashMap<Key, Prepared>,
    bases: usize,
}

impl Reader {
    /// Reads the reference bases of the slices `entries` name (the index's lines of the
    /// containers a query is about to read, in that order) ahead of their containers, with
    /// their MD5 digests made on idle workers: a remote query does this while its containers
    /// are on their way. Only from a FASTA already open and local (a remote one's bytes are
    /// asked for when a slice needs them); within 64 slices and 64 MiB; a span that cannot
    /// be read is skipped (its slice reads it again and gives the error in its turn).
    pub fn read_references_ahead(&mut self, entries: &[CraiEntry]) {
        if self.without_bases {
            return;
        }
        for e in entries.iter().take(MAX_SLICES) {
            let key = (e.ref_id, e.start, e.span);
            if e.ref_id < 0 || e.span <= 0 || self.ahead.spans.contains_key(&key) {
                continue;
            }
            let local = self.ref_name(e.ref_id, 0).ok().is_some_and(|name| {
                self.reference
                    .as_ref()
                    .is_some_and(|f| !f.is_remote() && f.entry(&name).is_some())
            });
            if !local || self.ahead.bases >= MAX_BASES {
                continue;
            }
            let Ok(bases) = self.span(e.ref_id, e.start, e.start + e.span - 1, 0) else {
                continue;
            };
            self.ahead.bases += bases.0.len();
            let prepared = self.digest_ahead(bases, e.span);
            self.ahead.spans.insert(key, prepared);
        }
    }

    /// `bases`' digest (their first `span`, as the slice's check takes them): on a worker
    /// when there are workers, else here.
    fn digest_ahead(&self, bases: SliceRef, span: i64) -> Prepared {
        let Some(pool) = self.pool.as_ref() else {
            let d = crate::md5::span_digest(&bases.0, span);
            return Prepared::Made(bases, d);
        };
        let shared = Arc::new(bases);
        let held = Arc::clone(&shared);
        let job = move || {
            let d = crate::md5::span_digest(&held.0, span);
            // Let go of the bases before answering: the taker then owns them alone.
            drop(held);
            Ok(d)
        };
        match pool.run(job) {
            Some(rx) => Prepared::Coming(shared, span, rx),
            None => {
                let bases = Arc::unwrap_or_clone(shared);
                let d = crate::md5::span_digest(&bases.0, span);
                Prepared::Made(bases, d)
            }
        }
    }

    /// The bases read ahead for `sh`'s span and their digest, if they were.
    pub(super) fn take_ahead(&mut self, sh: &SliceHeader) -> Option<(SliceRef, [u8; 16])> {
        let key = (sh.reference_id, i64::from(sh.start), i64::from(sh.span));
        let prepared = self.ahead.spans.remove(&key)?;
        let (bases, digest) = match prepared {
            Prepared::Made(bases, d) => (bases, d),
            // Made on a worker: long done when the container came over a network.
            Prepared::Coming(shared, span, rx) => {
                let made = self.pool.as_ref().and_then(|p| p.wait_for(&rx).ok());
                let bases = Arc::unwrap_or_clone(shared);
                let d = made.unwrap_or_else(|| crate::md5::span_digest(&bases.0, span));
                (bases, d)
            }
        };
        self.ahead.bases = self.ahead.bases.saturating_sub(bases.0.len());
        Some((bases, digest))
    }
}
