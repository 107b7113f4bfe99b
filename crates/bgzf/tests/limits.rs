//! The read-ahead limit reaches the byte source, and threaded read-ahead stays inside it.

mod common;

use std::sync::{Arc, Mutex};

use bgzf::{byte_end, Reader, VirtualOffset};
use common::{fixture_bytes, walk_blocks};
use hfile::{Backend, HFile, MemoryBackend};

#[derive(Debug, Clone, PartialEq)]
enum Event {
    Limit(Option<u64>),
    Seek(u64),
    /// A read starting at `.0` that returned `.1` bytes.
    Read(u64, usize),
}

/// A memory backend that records what the layers above ask of it. Like a bounded HTTP response,
/// a read starting inside the window ends at the limit; a read at or past it is a new request.
struct Recording {
    inner: MemoryBackend,
    limit: Option<u64>,
    log: Arc<Mutex<Vec<Event>>>,
}

impl Backend for Recording {
    fn read(&mut self, buf: &mut [u8]) -> hfile::Result<usize> {
        let pos = self.inner.position();
        let mut len = buf.len();
        if let Some(limit) = self.limit.filter(|&l| pos < l) {
            len = len.min((limit - pos) as usize);
        }
        let n = self.inner.read(&mut buf[..len])?;
        self.log.lock().unwrap().push(Event::Read(pos, n));
        Ok(n)
    }
    fn seek(&mut self, pos: u64) -> hfile::Result<()> {
        self.log.lock().unwrap().push(Event::Seek(pos));
        self.inner.seek(pos)
    }
    fn position(&self) -> u64 {
        self.inner.position()
    }
    fn size(&mut self) -> hfile::Result<u64> {
        self.inner.size()
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
}

impl hfile::Hints for Recording {
    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        self.log.lock().unwrap().push(Event::Limit(limit));
        self.limit = limit;
    }
}

fn recording(rel: &str) -> (Reader, Arc<Mutex<Vec<Event>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let backend = Recording {
        inner: MemoryBackend::new(rel, fixture_bytes(rel)),
        limit: None,
        log: Arc::clone(&log),
    };
    let reader = Reader::new(HFile::new(Box::new(backend))).unwrap();
    (reader, log)
}

fn take(log: &Mutex<Vec<Event>>) -> Vec<Event> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// Reads the chunk `[start, end)` the way the BAM iterator does: until the position reaches
/// `end`. Returns the bytes.
fn read_chunk(r: &mut Reader, start: VirtualOffset, end: VirtualOffset, limit: u64) -> Vec<u8> {
    r.seek_limit(start, limit).unwrap();
    let mut out = Vec::new();
    let mut byte = [0u8; 1];
    while r.virtual_offset() < end {
        if !r.read_exact_or_eof(&mut byte).unwrap() {
            break;
        }
        out.push(byte[0]);
    }
    out
}

/// The bytes from `start` to `end` as a reader without a limit gives them.
fn read_unlimited(r: &mut Reader, start: VirtualOffset, end: VirtualOffset) -> Vec<u8> {
    r.seek(start).unwrap();
    let mut out = Vec::new();
    let mut byte = [0u8; 1];
    while r.virtual_offset() < end {
        r.read_exact_data(&mut byte).unwrap();
        out.push(byte[0]);
    }
    out
}

#[test]
fn seek_limit_sends_the_byte_end_down_before_any_read() {
    let file = "data/rand.bam";
    let size = fixture_bytes(file).len() as u64;
    let starts = walk_blocks(&fixture_bytes(file));
    let (mut r, log) = recording(file);
    let start = VirtualOffset::new(starts[2], 10);

    take(&log);
    let end = byte_end(VirtualOffset::new(starts[4], 100), &starts, size);
    assert_eq!(end, starts[5]);
    r.seek_limit(start, end).unwrap();
    assert_eq!(take(&log), vec![Event::Limit(Some(starts[5]))]);
    assert_eq!(r.readahead_limit(), Some(starts[5]));

    // A byte end before the start still gives a limit at or after the read position.
    r.seek_limit(start, 0).unwrap();
    assert_eq!(take(&log)[0], Event::Limit(Some(starts[2])));

    // A plain seek lifts the limit.
    r.seek(start).unwrap();
    assert_eq!(take(&log)[0], Event::Limit(None));
    assert_eq!(r.readahead_limit(), None);
}

#[test]
fn threaded_read_ahead_never_reads_past_the_limit() {
    let file = "data/rand.bam";
    let bytes = fixture_bytes(file);
    let starts = walk_blocks(&bytes);
    let mut single = Reader::new(HFile::from_bytes(file, bytes.clone())).unwrap();
    let size = bytes.len() as u64;
    for (with_starts, threads) in [(true, 4), (false, 4), (true, 2), (false, 8)] {
        let (mut r, log) = recording(file);
        r.set_threads(threads);
        let known: &[u64] = if with_starts { &starts } else { &[] };
        // Three chunks, as a query would visit them: the limit changes between them.
        for (s, e) in [(2usize, 4usize), (6, 7), (9, 13)] {
            let start = VirtualOffset::new(starts[s], 7);
            let end = VirtualOffset::new(starts[e], 300);
            take(&log);
            let got = read_chunk(&mut r, start, end, byte_end(end, known, size));
            let limit = r.readahead_limit().unwrap();
            let expect_limit = if with_starts {
                starts[e + 1]
            } else {
                starts[e] + 65536
            };
            assert_eq!(limit, expect_limit);
            let events = take(&log);
            assert_eq!(events[0], Event::Limit(Some(limit)), "limit before any I/O");
            for ev in &events {
                if let Event::Read(pos, n) = *ev {
                    assert!(
                        pos < limit && pos + n as u64 <= limit,
                        "read {pos}+{n} beyond limit {limit} ({threads} threads, chunk {s}-{e})"
                    );
                }
            }
            assert!(events.iter().any(|e| matches!(e, Event::Read(..))));
            // Same bytes as a single-threaded reader without limits.
            let expect = read_unlimited(&mut single, start, end);
            assert!(got == expect, "chunk {s}-{e}");
            // Reading on past the limit (the record straddling the chunk end) still works.
            let mut more = vec![0u8; 200_000];
            let mut sm = vec![0u8; 200_000];
            r.read_exact_data(&mut more).unwrap();
            single.read_exact_data(&mut sm).unwrap();
            assert!(more == sm);
            let past = take(&log);
            assert!(
                past.iter()
                    .any(|e| matches!(e, Event::Read(p, _) if *p >= limit)),
                "reading on needed bytes past the limit"
            );
        }
    }
}

#[test]
fn single_threaded_read_ahead_stops_at_the_limit_and_reads_on_only_on_demand() {
    let file = "data/rand.bam";
    let bytes = fixture_bytes(file);
    let starts = walk_blocks(&bytes);
    let size = bytes.len() as u64;
    let (mut r, log) = recording(file);
    let start = VirtualOffset::new(starts[1], 3);
    let end = VirtualOffset::new(starts[3], 200);
    let limit = byte_end(end, &starts, size);
    take(&log);
    let got = read_chunk(&mut r, start, end, limit);
    let events = take(&log);
    for ev in &events {
        if let Event::Read(pos, n) = *ev {
            assert!(
                pos + n as u64 <= limit,
                "read {pos}+{n} beyond limit {limit}"
            );
        }
    }
    // One read brings several blocks: far fewer reads than blocks' header and body pieces.
    let reads = events
        .iter()
        .filter(|e| matches!(e, Event::Read(..)))
        .count();
    assert!(reads <= 3, "{reads} reads: {events:?}");
    // The same bytes as an unlimited reader.
    let mut plain = Reader::new(HFile::from_bytes(file, bytes.clone())).unwrap();
    let expect = read_unlimited(&mut plain, start, end);
    assert!(got == expect);
    // Reading on past the limit reads only the blocks asked for.
    let mut more = vec![0u8; 70_000];
    r.read_exact_data(&mut more).unwrap();
    let past: Vec<(u64, usize)> = take(&log)
        .into_iter()
        .filter_map(|e| match e {
            Event::Read(p, n) => Some((p, n)),
            _ => None,
        })
        .collect();
    assert!(past.iter().all(|&(p, _)| p >= limit), "{past:?}");
    // 70 KB of data lie in the next few blocks; the byte source's own buffer may round the
    // last read up to 64 KiB, but nothing is read a chunk ahead.
    let read: u64 = past.iter().map(|&(_, n)| n as u64).sum();
    let first = starts.iter().position(|&s| s == limit).unwrap();
    let needed = starts[(first + 3).min(starts.len() - 1)] - limit;
    assert!(
        read <= needed + 65536,
        "read {read} bytes past the limit for 70 KB of data"
    );
}
