//! The cache at scale: a lookup and a store cost the same with 100,000 entries as with 10
//! (counted work, not time), eviction is amortised, and many processes storing many objects at
//! once keep the cap.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hfile::cache::{Cache, Stored, Validators, Work};

struct TempDir(PathBuf);

impl TempDir {
    /// In memory where there is a tmpfs (100,000 files on a disk busy with builds can take
    /// minutes to write, and what is measured is counted work, not the disk).
    fn new(tag: &str) -> TempDir {
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() && fs::metadata(shm).is_ok_and(|m| !m.permissions().readonly()) {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let p = base.join(format!(
            "hts-cache-scale-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&p);
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn v(etag: &str) -> Validators {
    Validators {
        size: 1 << 20,
        etag: Some(format!("\"{etag}\"")),
        last_modified: None,
    }
}

fn url(i: usize) -> String {
    format!("https://bucket.example.org/cohort/sample{i}.bam.bai?X-Amz-Signature=s{i}")
}

/// The work one call did.
fn cost(cache: &Cache, call: impl FnOnce()) -> Work {
    let before = cache.work();
    call();
    let after = cache.work();
    Work {
        files_opened: after.files_opened - before.files_opened,
        dir_entries_read: after.dir_entries_read - before.dir_entries_read,
        sweeps: after.sweeps - before.sweeps,
    }
}

/// What storing and looking up one more object costs now.
fn costs_now(cache: &Cache, i: usize, data: &[u8]) -> (Work, Work) {
    let store = cost(cache, || {
        let r = cache.store(&url(i), &v("new"), &[(0, data)]).unwrap();
        assert!(matches!(r, Stored::Stored { .. }), "{r:?}");
    });
    let lookup = cost(cache, || {
        let e = cache.lookup(&url(i)).expect("just stored");
        assert_eq!(e.prefix(), data);
    });
    (store, lookup)
}

fn entry_count(dir: &Path) -> usize {
    fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "entry")
        })
        .count()
}

#[test]
fn a_query_costs_the_same_at_100_000_entries_as_at_10() {
    let tmp = TempDir::new("100k");
    let cache = Cache::new(&tmp.0, 1 << 30);
    let data = vec![7u8; 64];
    let started = Instant::now();
    for i in 0..10 {
        cache.store(&url(i), &v("e"), &[(0, &data)]).unwrap();
    }
    let small = costs_now(&cache, 10, &data);
    // Fill to 100,000 entries from several threads (handles of one directory), bounded in time.
    let threads = 4;
    std::thread::scope(|s| {
        for t in 0..threads {
            let cache = cache.clone();
            let data = &data;
            s.spawn(move || {
                for i in (11 + t..100_000).step_by(threads) {
                    cache.store(&url(i), &v("e"), &[(0, data)]).unwrap();
                    assert!(
                        started.elapsed() < Duration::from_secs(240),
                        "filling too slow"
                    );
                }
            });
        }
    });
    let filled = started.elapsed();
    assert!(entry_count(&tmp.0) >= 100_000);
    let large = costs_now(&cache, 100_000, &data);
    eprintln!("10 entries: store {:?}, lookup {:?}", small.0, small.1);
    eprintln!("100,000 entries: store {:?}, lookup {:?}", large.0, large.1);
    eprintln!("filled in {filled:?}; sweeps {}", cache.work().sweeps);
    assert_eq!(small, large, "the cost changed with the number of entries");
    // A store: the state file, the old entry, the new temporary file; a lookup: its entry.
    assert_eq!(large.0.files_opened, 3);
    assert_eq!(large.1.files_opened, 1);
    assert_eq!(large.0.dir_entries_read + large.1.dir_entries_read, 0);
    // Only the very first store listed the (empty) directory, to start the running total.
    assert_eq!(cache.work().sweeps, 1);
}

#[test]
fn eviction_is_amortised_and_keeps_the_cap() {
    let tmp = TempDir::new("amortised");
    let data = vec![1u8; 1000];
    // About 100 entries fit.
    let one = {
        let c = Cache::new(&tmp.0, 1 << 20);
        c.store(&url(0), &v("e"), &[(0, &data)]).unwrap();
        c.used_bytes()
    };
    let cap = one * 100;
    let cache = Cache::new(&tmp.0, cap);
    // Another handle measures, so that its listing is not counted as the cache's work.
    let meter = Cache::new(&tmp.0, cap);
    let stores = 2_000;
    for i in 1..stores {
        cache.store(&url(i), &v("e"), &[(0, &data)]).unwrap();
        assert!(meter.used_bytes() <= cap, "past the cap after store {i}");
    }
    let work = cache.work();
    // Each sweep frees a tenth of the cap (10 entries), so at most one store in 10 sweeps,
    // and the directory is listed that often, never on every store.
    assert!(
        work.sweeps <= stores as u64 / 10 + 1,
        "{} sweeps for {stores} stores",
        work.sweeps
    );
    assert!(work.sweeps >= stores as u64 / 13, "{work:?}");
    assert!(
        work.dir_entries_read <= work.sweeps * 110,
        "{work:?}: more listed than sweeps explain"
    );
    // The newest survive.
    assert!(cache.lookup(&url(stores - 1)).is_some());
    assert!(cache.lookup(&url(1)).is_none());
}

/// The child side of [`processes_store_many_objects_under_one_cap`].
fn child(dir: &Path, id: usize, cap: u64) {
    let mut go = [0u8; 1];
    std::io::stdin().read_exact(&mut go).unwrap();
    let cache = Cache::new(dir, cap);
    for round in 0..400 {
        let i = id * 1000 + round;
        let data = vec![id as u8; 700 + (round % 7) * 100];
        cache.store(&url(i), &v("e"), &[(0, &data)]).unwrap();
        if let Some(e) = cache.lookup(&url(i)) {
            assert_eq!(e.prefix(), &data[..]);
        }
        // Now and then another process's object, whose entry may be evicted under us.
        if let Some(e) = cache.lookup(&url(((id + 1) % 4) * 1000 + round / 2)) {
            assert!(e.prefix().iter().all(|&b| b == ((id + 1) % 4) as u8));
        }
    }
}

#[test]
fn processes_store_many_objects_under_one_cap() {
    let cap: u64 = 100_000;
    if let (Ok(dir), Ok(id)) = (
        std::env::var("HTS_CACHE_SCALE_DIR"),
        std::env::var("HTS_CACHE_SCALE_ID"),
    ) {
        child(Path::new(&dir), id.parse().unwrap(), cap);
        return;
    }
    let tmp = TempDir::new("procs");
    testkit::children::run_together("processes_store_many_objects_under_one_cap", 4, |id| {
        vec![
            ("HTS_CACHE_SCALE_DIR", tmp.0.clone().into()),
            ("HTS_CACHE_SCALE_ID", id.to_string().into()),
        ]
    });
    let cache = Cache::new(&tmp.0, cap);
    let used = cache.used_bytes();
    // The stated slack: entries written while a sweep ran, at most one per other writer.
    let slack = 3 * 1400;
    assert!(used <= cap + slack, "{used} bytes under a cap of {cap}");
    // Every entry left is whole and verified (a damaged one would be a miss and a warning).
    let mut whole = 0;
    for id in 0..4 {
        for round in 0..400 {
            if let Some(e) = cache.lookup(&url(id * 1000 + round)) {
                assert!(e.prefix().iter().all(|&b| b == id as u8));
                whole += 1;
            }
        }
    }
    assert_eq!(whole, entry_count(&tmp.0));
    assert!(whole > 40, "only {whole} entries left");
    // One more store after the storm: the running total is good enough that the cap holds.
    cache
        .store(&url(9999), &v("e"), &[(0, &[9u8; 900])])
        .unwrap();
    assert!(cache.used_bytes() <= cap, "{}", cache.used_bytes());
}
