//! Reference bases read before their slices arrive. A remote query waits tens of milliseconds
//! for its containers after the index has named them, and the index gives each slice's
//! reference span as its header will (`.crai`: reference, start, span). In that wait the
//! bases are read from a local FASTA and their MD5 digest made by an idle worker, work that
//! otherwise comes after the container's bytes, on the way to the first record (a tenth of a
//! five-region query's time). A slice whose header names another span, or whose bases were
//! not read ahead, reads them as before; nothing read ahead is used unchecked: the slice's MD5
//! is compared with the digest made of exactly the bases it is given.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use super::decode::SliceRef;
use super::Reader;
use crate::crai::CraiEntry;
use crate::md5::SpanCheck;
use crate::{Error, SliceHeader};

/// Most slices read ahead ([`Reader::read_references_ahead`] takes no more lines), and most
/// bases held for them: what fits in the wait for the first
/// containers (16 slices' reading and hashing take about 20 ms on one core), not a whole
/// chromosome's, which the decoding threads keep up with as the containers come.
pub const MAX_SLICES: usize = 16;
const MAX_BASES: usize = 16 << 20;

/// A slice's span: reference id, 1-based start, length (as its header and the index give it).
type Key = (i32, i64, i64);

/// A slice's reference bases and their MD5 digest, made once by whoever needs it first: a
/// worker while the container is on its way, or the slice's check. The check waits only for
/// a worker already hashing, never for a queued job (which could be queued behind the very
/// container waiting).
#[derive(Clone)]
pub(crate) struct Span {
    pub(crate) bases: SliceRef,
    pub(crate) digest: OnceLock<[u8; 16]>,
}

impl Span {
    pub(super) fn new(bases: SliceRef) -> Span {
        Span {
            bases,
            digest: OnceLock::new(),
        }
    }

    /// The bases against their slice's MD5 (`check`; none: not checked), the digest made
    /// here unless it was made before.
    pub(super) fn check(&self, check: Option<SpanCheck>) -> Result<(), Error> {
        check.map_or(Ok(()), |c| c.check_once(&self.bases.0, &self.digest))
    }
}

/// The spans read ahead and not yet taken, and the bases they hold.
#[derive(Default)]
pub(super) struct Spans {
    spans: HashMap<Key, Arc<Span>>,
    bases: usize,
}

impl Reader {
    /// Reads the reference bases of the slices `entries` name (the index's lines of the
    /// containers a query is about to read, in that order) ahead of their containers, with
    /// their MD5 digests made on idle workers: a remote query does this while its containers
    /// are on their way. Only from a FASTA already open and local (a remote one's bytes are
    /// asked for when a slice needs them); within 16 slices and 16 MiB (a line's span counted
    /// before it is read); a span that cannot be read is skipped (its slice reads it again
    /// and gives the error in its turn). Spans an earlier call read and no slice took are
    /// forgotten.
    pub fn read_references_ahead(&mut self, entries: &[CraiEntry]) {
        self.forget_ahead();
        // Without bases, or with MD5s ignored, there is nothing worth doing early.
        if self.without_bases || self.ignore_md5 {
            return;
        }
        for e in entries.iter().take(MAX_SLICES) {
            let key = (e.ref_id, e.start, e.span);
            // A slice header holds 32-bit positions: a line beyond them names no slice.
            let fits = |v: i64| (1..=i64::from(i32::MAX)).contains(&v);
            if e.ref_id < 0 || !fits(e.start) || !fits(e.span) {
                continue;
            }
            let within = usize::try_from(e.span).is_ok_and(|n| self.ahead.bases + n <= MAX_BASES);
            let local = self.ref_name(e.ref_id, 0).ok().is_some_and(|name| {
                self.reference
                    .as_ref()
                    .is_some_and(|f| !f.is_remote() && f.entry(&name).is_some())
            });
            if !within || !local || self.ahead.spans.contains_key(&key) {
                continue;
            }
            let Ok(bases) = self.span_from(e.ref_id, e.start, e.span, 0) else {
                continue;
            };
            self.ahead.bases += bases.0.len();
            let span = Arc::new(Span::new(bases));
            self.digest_ahead(&span, e.span);
            self.ahead.spans.insert(key, span);
        }
    }

    /// Makes `span`'s digest (of its first `len` bases, as the slice's check takes them): on
    /// a worker when there are workers (not at all if the span is forgotten first), else now.
    fn digest_ahead(&self, span: &Arc<Span>, len: i64) {
        let make = move |s: &Span| {
            s.digest
                .get_or_init(|| crate::md5::span_digest(&s.bases.0, len));
        };
        let Some(pool) = self.pool.as_ref() else {
            return make(span);
        };
        let weak = Arc::downgrade(span);
        let queued = pool.run(move || {
            #[cfg(test)]
            tests::hold();
            if let Some(s) = weak.upgrade() {
                make(&s);
            }
        });
        if queued.is_none() {
            make(span);
        }
    }

    /// The bases read ahead for `sh`'s span, with their digest made or being made, if they
    /// were.
    pub(super) fn take_ahead(&mut self, sh: &SliceHeader) -> Option<Arc<Span>> {
        let key = (sh.reference_id, i64::from(sh.start), i64::from(sh.span));
        let span = self.ahead.spans.remove(&key)?;
        self.ahead.bases = self.ahead.bases.saturating_sub(span.bases.0.len());
        Some(span)
    }

    /// Forgets the bases read ahead (another reference, or the whole file from its start).
    pub(super) fn forget_ahead(&mut self) {
        self.ahead = Spans::default();
    }
}

#[cfg(test)]
mod tests {
    //! A digest job held back until the container needing it is being decoded: the slice
    //! makes the digest itself, at every thread count, and nothing waits on the held job.

    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    static HOLD: AtomicBool = AtomicBool::new(false);

    /// While the test holds digest jobs, those on the workers wait here (at most a few
    /// seconds); the reader's thread, which runs queued jobs while it waits, is not held.
    pub(super) fn hold() {
        let worker = std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("cram-decode"));
        let until = Instant::now() + Duration::from_secs(5);
        while worker && HOLD.load(Ordering::Relaxed) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_digest_still_queued_is_made_by_the_slice_and_nothing_waits_for_it() {
        let dir =
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/cram"));
        let name = "aligned-3.0-slices.cram";
        let crai = std::fs::read(dir.join(format!("{name}.crai"))).unwrap();
        let lines: Vec<_> = crate::crai::parse(&crai)
            .unwrap()
            .into_iter()
            .filter(|e| e.ref_id == 1)
            .collect();
        let container = lines[0].container;
        let range = crate::reader::Range {
            ref_id: 1,
            start: 1,
            end: i64::MAX,
        };
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let read = |threads: usize, ahead: bool| -> (Vec<crate::Alignment>, crate::Reader) {
            let fasta = crate::Fasta::open(&dir.join("ref.fa")).unwrap();
            let cursor = std::io::Cursor::new(bytes.clone());
            let mut r = crate::Reader::open(cursor, name, Some(fasta)).unwrap();
            r.set_threads(threads);
            if ahead {
                r.read_references_ahead(&lines);
            }
            r.seek_range(container, range);
            let mut out = Vec::new();
            while let Some(recs) = r.next_container().unwrap() {
                out.extend(recs);
            }
            assert!(r.ahead.spans.is_empty(), "every span read ahead is taken");
            (out, r)
        };
        let (want, _) = read(0, false);
        assert!(!want.is_empty());
        for threads in [1, 2, 3] {
            HOLD.store(true, Ordering::Relaxed);
            let started = Instant::now();
            let (got, reader) = read(threads, true);
            let took = started.elapsed();
            // Let the held jobs go before the reader's workers are joined.
            HOLD.store(false, Ordering::Relaxed);
            drop(reader);
            assert!(got == want, "-@{threads}");
            assert!(
                took < Duration::from_secs(4),
                "-@{threads}: the reading waited for a held digest"
            );
        }
    }
}
