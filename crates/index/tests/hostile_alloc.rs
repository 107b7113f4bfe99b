//! Hostile counts in a streamed index (no known length to check them against) must fail without
//! allocating for them: the peak of live heap bytes during a load, measured by a counting
//! global allocator, stays far below what the counts claim and near what actually arrived.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use index::{Error, Loader, Wanted};
// One test at a time (`serial`): the counters are global, and a test allocating beside a
// measurement would count in its peak.
use testkit::serial;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed)
                    + (new_size - layout.size());
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and returns its result with the peak heap growth it caused and its duration
/// (callers hold [`serial`]).
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, Duration) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let t = Instant::now();
    let out = f();
    let elapsed = t.elapsed();
    (
        out,
        PEAK.load(Ordering::Relaxed).saturating_sub(base),
        elapsed,
    )
}

/// A stream that hands out its bytes a few at a time, as a slow network would.
struct Trickle<R>(R);

impl<R: Read> Read for Trickle<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(7);
        self.0.read(&mut buf[..n])
    }
}

fn le(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// A BAI header with one reference, then `rest`.
fn bai(rest: &[&[u8]]) -> Vec<u8> {
    let mut b = b"BAI\x01".to_vec();
    b.extend(le(1));
    for r in rest {
        b.extend_from_slice(r);
    }
    b
}

const KIB: usize = 1024;

/// The buffers of the stream itself (64 KiB for a plain index; for BGZF one block and the
/// reader's read-ahead buffer, at most 256 KiB) and small bookkeeping: anything beyond this was
/// allocated for a count.
const BUDGET: usize = 300 * KIB + 256 * KIB;

fn expect_fail(what: &str, bytes: &[u8], wanted: Wanted) -> Error {
    let (r, peak, took) = measure(|| {
        Loader::new(what)
            .wanted(wanted)
            .read(Trickle(bytes))
            .map(|_| ())
    });
    let e = r.expect_err(what);
    eprintln!("{what}: peak {peak} bytes, {took:?}: {e}");
    assert!(peak < BUDGET, "{what}: peak {peak} bytes ({e})");
    assert!(took < Duration::from_secs(5), "{what}: {took:?}");
    e
}

fn assert_truncated(e: &Error, field: &str) {
    assert!(
        matches!(e, Error::Truncated { what, .. } if *what == field),
        "{e:?}"
    );
}

#[test]
fn huge_counts_with_short_streams() {
    let _serial = serial();
    let pad = vec![0u8; 100];
    for wanted in [Wanted::all(), Wanted::refs([0])] {
        // n_bin 2^31-1, then 1000 empty bins.
        let bins: Vec<u8> = (0..1000u32)
            .flat_map(|id| [le(id), le(0)])
            .flatten()
            .collect();
        let e = expect_fail("n_bin", &bai(&[&le(0x7fff_ffff), &bins]), wanted.clone());
        assert_truncated(&e, "bin number");
        // One bin with n_chunk 2^31-1.
        let e = expect_fail(
            "n_chunk",
            &bai(&[&le(1), &le(4681), &le(0x7fff_ffff), &pad]),
            wanted.clone(),
        );
        assert_truncated(&e, "chunk start");
        // No bins, n_intv 2^32-1.
        let e = expect_fail(
            "n_intv",
            &bai(&[&le(0), &le(u32::MAX), &pad]),
            wanted.clone(),
        );
        assert_truncated(&e, "linear index offset");
    }
    // CSI with l_aux 2^32-1.
    let mut csi = b"CSI\x01".to_vec();
    for v in [14, 5, u32::MAX] {
        csi.extend(le(v));
    }
    csi.extend(&pad);
    let e = expect_fail("l_aux", &csi, Wanted::all());
    assert_truncated(&e, "CSI aux data");
    // n_ref 2^31-1 in a skipped stretch: nothing is kept for the references skipped.
    let mut b = b"BAI\x01".to_vec();
    b.extend(le(0x7fff_ffff));
    b.extend(&pad);
    expect_fail("n_ref", &b, Wanted::refs([1_000_000]));
}

#[test]
fn many_empty_references_cost_nothing() {
    let _serial = serial();
    // n_ref 2^31-1 followed by 16 MiB of zeros: two million empty references, all loaded.
    let mut head = b"BAI\x01".to_vec();
    head.extend(le(0x7fff_ffff));
    let zeros = io::repeat(0).take(16 << 20);
    let (r, peak, _) = measure(|| {
        Loader::new("zeros")
            .read(head.as_slice().chain(zeros))
            .map(|_| ())
    });
    assert!(matches!(r, Err(Error::Truncated { .. })), "{r:?}");
    assert!(peak < BUDGET, "peak {peak}");
}

#[test]
fn endless_and_compressed_streams_stop_at_the_limit() {
    let _serial = serial();
    // An endless stream of empty references ends at the limit, not at the end of memory.
    let mut head = b"BAI\x01".to_vec();
    head.extend(le(0x7fff_ffff));
    let (r, peak, _) = measure(|| {
        Loader::new("endless")
            .limit(4 << 20)
            .read(head.as_slice().chain(io::repeat(0)))
            .map(|_| ())
    });
    assert!(
        matches!(r, Err(Error::TooLarge { limit, .. }) if limit == 4 << 20),
        "{r:?}"
    );
    assert!(peak < BUDGET, "peak {peak}");

    // A BGZF bomb: 16 MiB of zeros after a CSI header, in about 30 KB.
    let mut w = bgzf::Writer::new(Vec::new());
    let mut csi = b"CSI\x01".to_vec();
    for v in [14, 5, 0, 0x7fff_ffff] {
        csi.extend(le(v));
    }
    w.write_all(&csi).unwrap();
    let block = vec![0u8; 60_000];
    for _ in 0..(16 << 20) / block.len() {
        w.write_all(&block).unwrap();
    }
    let bomb = w.finish().unwrap();
    assert!(bomb.len() < 100_000, "{}", bomb.len());
    let (r, peak, _) = measure(|| {
        Loader::new("bomb")
            .limit(4 << 20)
            .read(&bomb[..])
            .map(|_| ())
    });
    assert!(matches!(r, Err(Error::TooLarge { .. })), "{r:?}");
    assert!(peak < BUDGET, "peak {peak}");
    // Under the default limit it reads to the end of the data and finds it cut short.
    let (r, peak, _) = measure(|| Loader::new("bomb").read(&bomb[..]).map(|_| ()));
    assert!(
        matches!(
            r,
            Err(Error::Truncated {
                compressed: true,
                ..
            })
        ),
        "{r:?}"
    );
    assert!(peak < BUDGET, "peak {peak}");
}

#[test]
fn not_an_index_fails_after_four_bytes() {
    let _serial = serial();
    // /dev/zero as an index: the magic is wrong, nothing more is read.
    let (r, peak, took) = measure(|| index::read("/dev/zero").map(|_| ()));
    match r {
        Err(Error::BadMagic { found, .. }) => assert_eq!(found, [0, 0, 0, 0]),
        other => panic!("{other:?}"),
    }
    assert!(
        peak < BUDGET && took < Duration::from_secs(1),
        "{peak} {took:?}"
    );

    // The same from an endless reader: it has given 4 bytes when the load fails.
    struct Counted(u64);
    impl Read for Counted {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.0 += buf.len() as u64;
            buf.fill(b'x');
            Ok(buf.len())
        }
    }
    let mut input = Counted(0);
    let e = Loader::new("x").read(&mut input).unwrap_err();
    assert!(matches!(e, Error::BadMagic { .. }), "{e:?}");
    assert_eq!(input.0, 4);
}
