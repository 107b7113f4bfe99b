//! The persistent cache on real files in a temporary directory: changed objects are detected by
//! each validator, damaged entries are deleted with a warning, the directory never grows past
//! its cap, and concurrent writers (threads with their own handles, and separate processes: this
//! test binary run again) leave one valid entry. Nothing waits on a clock: concurrent starts use
//! a barrier (threads) or a byte on stdin (processes), and ages are set as file times.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, SystemTime};

use hfile::cache::{Cache, Change, Refusal, Stored, Validators};

/// A fresh directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("hts-cache-test-{}-{tag}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn validators(size: u64, etag: Option<&str>, lm: Option<&str>) -> Validators {
    Validators {
        size,
        etag: etag.map(String::from),
        last_modified: lm.map(String::from),
    }
}

/// A cache whose warnings are collected.
fn cache_in(dir: &Path, cap: u64) -> (Cache, Arc<Mutex<Vec<String>>>) {
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let w = Arc::clone(&warnings);
    let cache = Cache::new(dir, cap).with_warnings(move |m| w.lock().unwrap().push(m.to_string()));
    (cache, warnings)
}

/// Every file in the directory, entries or not, and their total size.
fn dir_files(dir: &Path) -> (Vec<PathBuf>, u64) {
    let mut files = Vec::new();
    let mut total = 0;
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        total += e.metadata().unwrap().len();
        files.push(e.path());
    }
    files.sort();
    (files, total)
}

fn entry_files(dir: &Path) -> Vec<PathBuf> {
    dir_files(dir)
        .0
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "entry"))
        .collect()
}

/// The entry file whose contents name `needle`.
fn entry_naming(dir: &Path, needle: &str) -> PathBuf {
    entry_files(dir)
        .into_iter()
        .find(|p| {
            fs::read(p)
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
        })
        .unwrap_or_else(|| panic!("no entry names {needle}"))
}

fn set_used(path: &Path, t: SystemTime) {
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(t).unwrap();
}

const URL: &str = "https://bucket.example.org:9000/data/x.bam.bai?X-Amz-Signature=0123";

/// A deterministic object to cache pieces of.
fn object(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn stores_extends_and_shares_across_signatures() {
    let tmp = TempDir::new("basic");
    let (cache, warnings) = cache_in(&tmp.0, 1 << 20);
    let obj = object(10_000);
    let v = validators(10_000, Some("\"e1\""), None);
    assert!(cache.lookup(URL).is_none());
    cache.store(URL, &v, &[(0, &obj[..1000])]).unwrap();
    // [0,1000) + [1000,3000) -> [0,3000); and the 28-byte tail kept apart.
    let stored = cache
        .store(URL, &v, &[(1000, &obj[1000..3000]), (9972, &obj[9972..])])
        .unwrap();
    assert!(
        matches!(stored, Stored::Stored { ref ranges, .. } if ranges == &[(0, 3000), (9972, 10_000)]),
        "{stored:?}"
    );
    let other_signature = "https://BUCKET.example.org:9000/data/x.bam.bai?X-Amz-Signature=ffff";
    let e = cache.lookup(other_signature).unwrap();
    assert_eq!(e.prefix(), &obj[..3000]);
    assert_eq!(e.get(9980, 10_000), Some(&obj[9980..]));
    assert_eq!(e.get(2990, 3001), None);
    assert_eq!(e.stored_bytes(), 3028);
    assert_eq!(
        e.key().as_str(),
        "https://bucket.example.org:9000/data/x.bam.bai"
    );
    // Another port or path is another object.
    assert!(cache
        .lookup("https://bucket.example.org/data/x.bam.bai")
        .is_none());
    assert!(cache
        .lookup("https://bucket.example.org:9000/data/y.bam.bai")
        .is_none());
    // Nothing secret on disk: no query string anywhere in the entry.
    for f in entry_files(&tmp.0) {
        let bytes = fs::read(&f).unwrap();
        assert!(
            !bytes.windows(9).any(|w| w == b"Signature"),
            "{}",
            f.display()
        );
    }
    assert!(cache.remove(URL).unwrap());
    assert!(!cache.remove(URL).unwrap());
    assert!(cache.lookup(URL).is_none());
    assert!(warnings.lock().unwrap().is_empty());
}

#[test]
fn a_changed_object_is_detected_by_each_validator() {
    let tmp = TempDir::new("changed");
    let (cache, _) = cache_in(&tmp.0, 1 << 20);
    let lm = "Wed, 21 Oct 2015 07:28:00 GMT";
    let v = validators(5000, Some("\"abc\""), Some(lm));
    cache.store(URL, &v, &[(0, &object(100))]).unwrap();
    let e = cache.lookup(URL).unwrap();
    assert!(e.is_valid_for(&v));
    // A response without Last-Modified still validates on the ETag, and the reverse.
    assert!(e.is_valid_for(&validators(5000, Some("\"abc\""), None)));
    assert!(e.is_valid_for(&validators(5000, None, Some(lm))));

    let cases = [
        (validators(5001, Some("\"abc\""), Some(lm)), "object changed (size 5000 -> 5001)"),
        (validators(5000, Some("\"abd\""), Some(lm)), "object changed (ETag \"abc\" -> \"abd\")"),
        (
            validators(5000, Some("\"abc\""), Some("Thu, 22 Oct 2015 07:28:00 GMT")),
            "object changed (Last-Modified Wed, 21 Oct 2015 07:28:00 GMT -> Thu, 22 Oct 2015 07:28:00 GMT)",
        ),
        (validators(5000, None, None), "object cannot be shown unchanged (no ETag or Last-Modified in common)"),
    ];
    for (now, reason) in cases {
        assert!(!e.is_valid_for(&now), "{now:?}");
        assert_eq!(e.check(&now).unwrap_err().to_string(), reason);
    }
    // Same size, new Last-Modified, no ETag on either side: changed.
    cache
        .store(
            "https://h/lm.bai",
            &validators(10, None, Some(lm)),
            &[(0, b"x")],
        )
        .unwrap();
    let e = cache.lookup("https://h/lm.bai").unwrap();
    assert!(matches!(
        e.check(&validators(10, None, Some("later"))),
        Err(Change::LastModified { .. })
    ));

    // Storing for a changed object replaces the entry instead of merging into it.
    let v2 = validators(5000, Some("\"new\""), None);
    let stored = cache
        .store(URL, &v2, &[(200, &object(300)[200..])])
        .unwrap();
    assert!(matches!(stored, Stored::Stored { ref ranges, .. } if ranges == &[(200, 300)]));
    let e = cache.lookup(URL).unwrap();
    assert_eq!(e.validators(), &v2);
    assert!(e.prefix().is_empty());
}

#[test]
fn objects_that_cannot_be_validated_are_not_cached() {
    let tmp = TempDir::new("refuse");
    let (cache, _) = cache_in(&tmp.0, 1 << 20);
    let r = cache
        .store(URL, &validators(100, None, None), &[(0, b"abc")])
        .unwrap();
    assert_eq!(r, Stored::Refused(Refusal::NoValidators));
    let r = cache
        .store(
            "/local/x.bai",
            &validators(100, Some("\"e\""), None),
            &[(0, b"abc")],
        )
        .unwrap();
    assert_eq!(r, Stored::Refused(Refusal::NotRemote));
    let r = cache
        .store(URL, &validators(2, Some("\"e\""), None), &[(0, b"abc")])
        .unwrap();
    assert!(matches!(r, Stored::Refused(Refusal::OutOfBounds { .. })));
    let v = validators(1000, Some("\"e\""), None);
    let pieces: Vec<(u64, &[u8])> = (0..17).map(|i| (i * 10, &b"x"[..])).collect();
    assert_eq!(
        cache.store(URL, &v, &pieces).unwrap(),
        Stored::Refused(Refusal::TooManyRanges)
    );
    assert!(entry_files(&tmp.0).is_empty(), "{:?}", dir_files(&tmp.0));
}

#[test]
fn damaged_entries_are_deleted_with_a_warning_that_names_them() {
    let tmp = TempDir::new("damaged");
    let (cache, warnings) = cache_in(&tmp.0, 1 << 20);
    let v = validators(5000, Some("\"abc\""), None);
    let good = {
        cache.store(URL, &v, &[(0, &object(2000))]).unwrap();
        let files = entry_files(&tmp.0);
        assert_eq!(files.len(), 1);
        (files[0].clone(), fs::read(&files[0]).unwrap())
    };
    let (path, bytes) = good;
    let mut flipped = bytes.clone();
    flipped[1000] ^= 1;
    let mut padded = bytes.clone();
    padded.extend(b"junk");
    let damaged: Vec<(&str, Vec<u8>)> = vec![
        ("one bit flipped in the data", flipped),
        ("truncated", bytes[..bytes.len() - 100].to_vec()),
        ("truncated inside the header", bytes[..30].to_vec()),
        ("empty", Vec::new()),
        ("padded", padded),
        ("garbage", b"not a cache entry at all".to_vec()),
    ];
    for (what, content) in damaged {
        fs::write(&path, &content).unwrap();
        assert!(cache.lookup(URL).is_none(), "{what}");
        assert!(!path.exists(), "{what}: not deleted");
        let w = warnings
            .lock()
            .unwrap()
            .pop()
            .unwrap_or_else(|| panic!("{what}: no warning"));
        assert!(
            w.contains(&path.display().to_string()) && w.contains("damaged"),
            "{what}: {w}"
        );
        assert!(!w.contains('\n'), "one line: {w}");
    }
    // A damaged entry found while storing is replaced, not merged into.
    fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    cache
        .store(URL, &v, &[(4000, &object(4100)[4000..])])
        .unwrap();
    assert_eq!(warnings.lock().unwrap().len(), 1);
    assert_eq!(cache.lookup(URL).unwrap().ranges().len(), 1);
}

#[test]
fn the_directory_never_grows_past_the_cap_and_the_least_recently_used_go_first() {
    let tmp = TempDir::new("cap");
    let cap = 20_000;
    let (cache, _) = cache_in(&tmp.0, cap);
    let v = validators(1_000_000, Some("\"e\""), None);
    let obj = object(1500);
    let url = |i: usize| format!("https://h/obj{i}.bai");
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    for i in 0..60 {
        let r = cache.store(&url(i), &v, &[(0, &obj)]).unwrap();
        assert!(matches!(r, Stored::Stored { .. }));
        let (_, total) = dir_files(&tmp.0);
        assert!(total <= cap, "after {i} stores: {total} > {cap}");
        // Make ages explicit: entry i was used i seconds after an hour ago.
        set_used(
            &entry_naming(&tmp.0, &format!("/obj{i}.")),
            hour_ago + Duration::from_secs(i as u64),
        );
    }
    let held: Vec<usize> = (0..60)
        .filter(|&i| cache.lookup(&url(i)).is_some())
        .collect();
    // Every lookup above touched its entry, in order: the newest survive, and they fill the cap.
    assert!(held.len() >= 10 && held.len() < 60, "{held:?}");
    assert_eq!(held, ((60 - held.len())..60).collect::<Vec<_>>());
    // Use the oldest survivor, then add more: it outlives the ones not used since.
    let oldest = held[0];
    let survivor = held[1];
    for (k, &i) in held.iter().enumerate() {
        set_used(
            &entry_naming(&tmp.0, &format!("/obj{i}.")),
            hour_ago + Duration::from_secs(k as u64),
        );
    }
    assert!(cache.lookup(&url(oldest)).is_some());
    cache.store(&url(100), &v, &[(0, &obj)]).unwrap();
    assert!(
        cache.lookup(&url(oldest)).is_some(),
        "the entry just used was evicted"
    );
    assert!(
        cache.lookup(&url(survivor)).is_none(),
        "the least recently used entry was kept"
    );
    assert!(dir_files(&tmp.0).1 <= cap);

    // An entry larger than the whole cache is refused and evicts nothing.
    let before = dir_files(&tmp.0);
    let big = object(30_000);
    let r = cache
        .store(
            &url(200),
            &validators(30_000, Some("\"e\""), None),
            &[(0, &big)],
        )
        .unwrap();
    assert!(
        matches!(r, Stored::Refused(Refusal::TooLarge { .. })),
        "{r:?}"
    );
    assert_eq!(dir_files(&tmp.0), before);
    let entries: u64 = entry_files(&tmp.0)
        .iter()
        .map(|p| fs::metadata(p).unwrap().len())
        .sum();
    assert_eq!(cache.used_bytes(), entries);
}

#[test]
fn threads_with_their_own_handles_leave_one_valid_entry() {
    let tmp = TempDir::new("threads");
    let n = 6;
    let barrier = Arc::new(Barrier::new(n));
    let obj = Arc::new(object(60_000));
    let handles: Vec<_> = (0..n)
        .map(|t| {
            let dir = tmp.0.clone();
            let barrier = Arc::clone(&barrier);
            let obj = Arc::clone(&obj);
            std::thread::spawn(move || {
                let (cache, warnings) = cache_in(&dir, 1 << 22);
                barrier.wait();
                for round in 0..15 {
                    // Half the rounds: replace with this thread's own version of the object;
                    // the other half: extend the shared version with this thread's piece.
                    if round % 2 == 0 {
                        let v = validators(60_000, Some(&format!("\"t{t}\"")), None);
                        let data = vec![t as u8; 5000];
                        cache.store(URL, &v, &[(0, &data)]).unwrap();
                    } else {
                        let v = validators(60_000, Some("\"shared\""), None);
                        let at = t * 10_000;
                        cache
                            .store(URL, &v, &[(at as u64, &obj[at..at + 10_000])])
                            .unwrap();
                    }
                    if let Some(e) = cache.lookup(URL) {
                        check_consistent(&e, &obj);
                    }
                }
                assert!(
                    warnings.lock().unwrap().is_empty(),
                    "{:?}",
                    warnings.lock().unwrap()
                );
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let files = entry_files(&tmp.0);
    assert_eq!(files.len(), 1, "{files:?}");
    let (cache, warnings) = cache_in(&tmp.0, 1 << 22);
    check_consistent(&cache.lookup(URL).unwrap(), &obj);
    assert!(warnings.lock().unwrap().is_empty());
}

/// An entry is one whole version: a thread's own (all bytes its number) or pieces of the shared
/// object at their places.
fn check_consistent(e: &hfile::cache::Entry, obj: &[u8]) {
    let etag = e.validators().etag.clone().unwrap();
    if etag == "\"shared\"" {
        for r in e.ranges() {
            assert_eq!(r.data, obj[r.start as usize..r.end() as usize]);
        }
    } else {
        let t: u8 = etag.trim_matches('"')[1..].parse().unwrap();
        assert_eq!(e.ranges().len(), 1);
        assert!(e.prefix().iter().all(|&b| b == t) && e.prefix().len() == 5000);
    }
}

/// The child side of [`processes_fill_one_entry`]: waits for a byte on stdin, then stores its
/// piece of the object and reads the entry back, many times.
fn child(dir: &Path, id: usize) {
    let mut go = [0u8; 1];
    std::io::stdin().read_exact(&mut go).unwrap();
    let (cache, warnings) = cache_in(dir, 1 << 22);
    let obj = object(80_000);
    let v = validators(
        80_000,
        Some("\"obj\""),
        Some("Mon, 01 Jan 2024 00:00:00 GMT"),
    );
    for _ in 0..25 {
        let at = id * 20_000;
        cache
            .store(URL, &v, &[(at as u64, &obj[at..at + 20_000])])
            .unwrap();
        let e = cache.lookup(URL).expect("an entry after storing one");
        for r in e.ranges() {
            assert_eq!(r.data, obj[r.start as usize..r.end() as usize]);
        }
        assert!(
            e.get(at as u64, (at + 20_000) as u64).is_some(),
            "my piece is gone"
        );
    }
    assert!(
        warnings.lock().unwrap().is_empty(),
        "{:?}",
        warnings.lock().unwrap()
    );
}

#[test]
fn processes_fill_one_entry() {
    if let (Ok(dir), Ok(id)) = (
        std::env::var("HTS_CACHE_TEST_DIR"),
        std::env::var("HTS_CACHE_TEST_ID"),
    ) {
        child(Path::new(&dir), id.parse().unwrap());
        return;
    }
    let tmp = TempDir::new("procs");
    testkit::children::run_together("processes_fill_one_entry", 4, |id| {
        vec![
            ("HTS_CACHE_TEST_DIR", tmp.0.clone().into()),
            ("HTS_CACHE_TEST_ID", id.to_string().into()),
        ]
    });
    let files = entry_files(&tmp.0);
    assert_eq!(files.len(), 1, "{files:?}");
    let (cache, warnings) = cache_in(&tmp.0, 1 << 22);
    let e = cache.lookup(URL).unwrap();
    // Writers take turns under the lock, each merging into what is there: nothing is lost.
    assert_eq!(e.ranges().len(), 1);
    assert_eq!(e.prefix(), &object(80_000)[..]);
    assert!(warnings.lock().unwrap().is_empty());
}

#[test]
fn the_environment_turns_the_cache_off_and_places_it() {
    if let Ok(expect) = std::env::var("HTS_CACHE_TEST_EXPECT") {
        let got = Cache::from_env().map(|c| (c.dir().to_path_buf(), c.max_bytes()));
        assert_eq!(format!("{got:?}"), expect);
        return;
    }
    let tmp = TempDir::new("env");
    let exe = std::env::current_exe().unwrap();
    let run = |vars: &[(&str, &str)], expect: String| {
        let mut cmd = Command::new(&exe);
        cmd.args([
            "--exact",
            "the_environment_turns_the_cache_off_and_places_it",
            "--test-threads=1",
        ])
        .env_remove("HTS_CACHE")
        .env_remove("HTS_CACHE_MAX")
        .env_remove("XDG_CACHE_HOME")
        .env("HOME", &tmp.0)
        .env("HTS_CACHE_TEST_EXPECT", &expect);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{vars:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
    };
    let xdg = tmp.0.join("xdg");
    let home_dir = tmp.0.join(".cache").join("hts");
    run(&[], format!("{:?}", Some((home_dir, 2u64 << 30))));
    run(
        &[
            ("XDG_CACHE_HOME", xdg.to_str().unwrap()),
            ("HTS_CACHE_MAX", "64M"),
        ],
        format!("{:?}", Some((xdg.join("hts"), 64u64 << 20))),
    );
    run(
        &[
            ("HTS_CACHE", "off"),
            ("XDG_CACHE_HOME", xdg.to_str().unwrap()),
        ],
        "None".to_string(),
    );
}
