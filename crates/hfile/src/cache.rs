//! A persistent cache of byte ranges of remote objects (a BAM's header blocks, an index's
//! prefix), kept with the validators that show whether the object has changed since.
//!
//! Entries live under `$XDG_CACHE_HOME/hts` (else `~/.cache/hts`), never in the working
//! directory, one file per object, named by a hash of its [`Key`] (scheme, host and path: no
//! query string, so the pre-signed URLs of one object share an entry). Each file is written to a
//! temporary file in the same directory and renamed into place, so readers never see a half
//! written entry and concurrent writers leave one whole entry; every entry is checksummed and
//! fully verified when read, and a damaged one is deleted with a warning. The directory is kept
//! under a size cap (default 2 GiB) by evicting the least recently used entries.
//!
//! A lookup or a store costs the same with 100,000 entries as with 10: a lookup opens its one
//! entry; a store locks only its key's shard of the entries (so two writers of one object merge
//! in turn) and adds what it wrote to a running total in a small state file (`usage`). Only a
//! store that would take that total past the cap lists the directory, and it evicts down to
//! 90% of the cap, so listing happens once per tenth of the cap stored (`sweep`). The cap holds
//! once writers are done; while several write at once it may be passed by the entries being
//! written during a sweep (and the total, recounted at each sweep, may be off by as much
//! until the next). [`Cache::work`] counts what a handle did, for tests.
//!
//! The cache never decides that an entry is current: [`Entry::check`] compares the validators
//! stored with those of a response the caller got anyway.
//!
//! ```
//! use hfile::cache::{Cache, Validators};
//! # let dir = std::env::temp_dir().join(format!("hts-cache-doc-{}", std::process::id()));
//! let cache = Cache::new(&dir, 1 << 20);
//! let url = "https://example.org/x.bam.bai?X-Amz-Signature=abc";
//! let v = Validators { size: 1000, etag: Some("\"v1\"".into()), last_modified: None };
//!
//! // First run: the index prefix fetched is stored; later runs extend it.
//! cache.store(url, &v, &[(0, &[1u8; 100][..])])?;
//! cache.store(url, &v, &[(100, &[2u8; 50][..])])?;
//!
//! // Another run, another signature: the same entry, used once the object is shown unchanged.
//! let entry = cache.lookup("https://example.org/x.bam.bai?X-Amz-Signature=xyz").unwrap();
//! assert_eq!(entry.prefix().len(), 150);
//! assert!(entry.is_valid_for(&v));
//!
//! // The object changed: its entry is dropped, with the reason for the log.
//! let now = Validators { etag: Some("\"v2\"".into()), ..v.clone() };
//! let why = entry.check(&now).unwrap_err();
//! assert_eq!(why.to_string(), "object changed (ETag \"v1\" -> \"v2\")");
//! cache.remove(url)?;
//! assert!(cache.lookup(url).is_none());
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), hfile::cache::CacheError>(())
//! ```

mod entry;
mod key;
mod settings;
mod sweep;
mod usage;
mod writer;

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

pub use entry::{CachedPrefix, Change, Entry, Range, Validators, MAX_RANGES};
pub use key::Key;
pub use settings::{parse_size, Settings, DEFAULT_MAX_BYTES};
pub use writer::{in_background, Queued};

const ENTRY_EXT: &str = "entry";
const PART_EXT: &str = "part";

/// A failure to write or delete in the cache directory. Reading never fails: an entry that
/// cannot be read is a miss.
#[derive(Debug)]
pub struct CacheError {
    /// The file or directory involved.
    pub path: PathBuf,
    /// What was being done.
    pub action: &'static str,
    /// What the operating system said.
    pub source: io::Error,
}

impl fmt::Display for CacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cache {}: cannot {}: {}",
            self.path.display(),
            self.action,
            self.source
        )
    }
}

impl std::error::Error for CacheError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// What [`Cache::store`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    /// The entry now holds these ranges.
    Stored {
        /// Size of the entry's file.
        file_bytes: u64,
        /// The ranges held, as `(start, end)`.
        ranges: Vec<(u64, u64)>,
    },
    /// Nothing was stored, for this reason.
    Refused(Refusal),
}

/// Why an object is not cached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A local path: only remote objects are cached.
    NotRemote,
    /// The server sent neither ETag nor Last-Modified, so a cached copy could never be shown
    /// current.
    NoValidators,
    /// The entry would be larger than the whole cache.
    TooLarge {
        /// Bytes asked to be kept.
        bytes: u64,
        /// The most the cache keeps.
        cap: u64,
    },
    /// A range lies outside the object.
    OutOfBounds {
        /// The first byte of the range.
        start: u64,
        /// One past the last byte of the range.
        end: u64,
        /// The object's size in bytes, when known.
        size: u64,
    },
    /// The ranges would stay apart in more than [`MAX_RANGES`] pieces.
    TooManyRanges,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotRemote => write!(f, "not cached: not a remote object"),
            Refusal::NoValidators => {
                write!(f, "not cached: the server sent no ETag or Last-Modified")
            }
            Refusal::TooLarge { bytes, cap } => {
                write!(
                    f,
                    "not cached: {bytes} bytes is more than the cache's cap of {cap}"
                )
            }
            Refusal::OutOfBounds { start, end, size } => write!(
                f,
                "not cached: bytes {start}-{end} lie outside the object's {size} bytes"
            ),
            Refusal::TooManyRanges => {
                write!(f, "not cached: more than {MAX_RANGES} separate ranges")
            }
        }
    }
}

type Warn = Arc<dyn Fn(&str) + Send + Sync>;

/// The work a cache handle (and its clones) did, counted so that tests can show what a lookup
/// or a store costs and that it does not grow with the number of entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Files opened (entries, temporary files, the state file).
    pub files_opened: u64,
    /// Directory entries read while listing the cache directory (only sweeps list it).
    pub dir_entries_read: u64,
    /// Sweeps that listed the directory to evict entries or recount the total.
    pub sweeps: u64,
}

#[derive(Default, Debug)]
struct Counters {
    files_opened: AtomicU64,
    dir_entries_read: AtomicU64,
    sweeps: AtomicU64,
}

/// A handle on a cache directory. Cheap to clone; any number of handles, in any number of
/// processes, may use one directory at once.
#[derive(Clone)]
pub struct Cache {
    dir: PathBuf,
    max_bytes: u64,
    warn: Warn,
    work: Arc<Counters>,
}

impl fmt::Debug for Cache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cache")
            .field("dir", &self.dir)
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}

impl Cache {
    /// The cache the environment asks for (see [`Settings::from_env`]); `None` when disabled
    /// or when there is no home or cache directory to put it in. Problems with the variables
    /// are warned about on stderr.
    pub fn from_env() -> Option<Cache> {
        let settings = Settings::from_env();
        for w in &settings.warnings {
            eprintln!("[W::hts_cache] {w}");
        }
        settings.open()
    }

    /// A cache in `dir` (created when first written) holding at most `max_bytes`. Warnings go
    /// to stderr.
    pub fn new(dir: impl Into<PathBuf>, max_bytes: u64) -> Cache {
        Cache {
            dir: dir.into(),
            max_bytes,
            warn: Arc::new(|m| eprintln!("[W::hts_cache] {m}")),
            work: Arc::default(),
        }
    }

    /// Sends warnings (a damaged entry found and deleted) to `warn` instead of stderr.
    pub fn with_warnings(mut self, warn: impl Fn(&str) + Send + Sync + 'static) -> Cache {
        self.warn = Arc::new(warn);
        self
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The size cap in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// What this handle and its clones have done so far (see [`Work`]).
    pub fn work(&self) -> Work {
        let w = &self.work;
        Work {
            files_opened: w.files_opened.load(Ordering::Relaxed),
            dir_entries_read: w.dir_entries_read.load(Ordering::Relaxed),
            sweeps: w.sweeps.load(Ordering::Relaxed),
        }
    }

    fn entry_path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.{ENTRY_EXT}", key.file_stem()))
    }

    /// The entry for the object at `url`, verified, and marked as just used; `None` when there
    /// is none (or it is damaged: it is then deleted with a warning naming its file).
    pub fn lookup(&self, url: &str) -> Option<Entry> {
        let key = Key::from_url(url)?;
        let path = self.entry_path(&key);
        let (entry, file) = self.read_entry(&path)?;
        if entry.key != key {
            // Another key with the same hash: a miss; storing this one will replace it.
            return None;
        }
        // Used now: eviction goes by this time. A failure only makes eviction less fair.
        let _ = file.set_modified(SystemTime::now());
        Some(entry)
    }

    /// Opens, reads and verifies an entry file (one open: the handle also marks it used); a
    /// damaged one is deleted with a warning.
    fn read_entry(&self, path: &Path) -> Option<(Entry, File)> {
        self.work.files_opened.fetch_add(1, Ordering::Relaxed);
        // Read-only when it cannot be written (only the mark of use is lost); a missing entry
        // (the usual miss) is not asked for twice.
        let mut file = File::options()
            .read(true)
            .write(true)
            .open(path)
            .or_else(|e| match e.kind() {
                io::ErrorKind::NotFound => Err(e),
                _ => File::open(path),
            })
            .ok()?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).ok()?;
        match entry::decode(&bytes) {
            Ok(e) => Some((e, file)),
            Err(why) => {
                let removed = match fs::remove_file(path) {
                    Ok(()) => {
                        // Its bytes leave the total (an unknown total stays unknown).
                        if let Ok(usage) = self.usage() {
                            let _ = usage.add(-(bytes.len() as i64));
                        }
                        "deleted".to_string()
                    }
                    Err(e) => format!("could not delete it: {e}"),
                };
                (self.warn)(&format!(
                    "cache entry {} is damaged ({why}); {removed}",
                    path.display()
                ));
                None
            }
        }
    }

    /// Stores `ranges` (`(start, bytes)`) of the object at `url`, whose validators are `v`.
    ///
    /// If the cache already holds the same object (the stored validators pass
    /// [`Entry::check`] against `v`), the new ranges are merged with the old ones (ranges that
    /// touch or overlap are joined: `[0,n)` and `[n,m)` become `[0,m)`); otherwise the entry is
    /// replaced. A store costs the same however many entries the cache holds: it locks only the
    /// entries that share its key's shard and updates a running total; the one store that
    /// would take the total past the cap evicts least recently used entries first (down to
    /// 90% of the cap, so that it happens rarely).
    ///
    /// # Errors
    /// [`CacheError`] when the directory cannot be created or written. A refusal (no
    /// validators, too large, ...) is not an error: see [`Stored::Refused`].
    pub fn store(
        &self,
        url: &str,
        v: &Validators,
        ranges: &[(u64, &[u8])],
    ) -> Result<Stored, CacheError> {
        let Some(key) = Key::from_url(url) else {
            return Ok(Stored::Refused(Refusal::NotRemote));
        };
        if !v.is_cacheable() {
            return Ok(Stored::Refused(Refusal::NoValidators));
        }
        for &(start, data) in ranges {
            let end = start.saturating_add(data.len() as u64);
            if end > v.size {
                return Ok(Stored::Refused(Refusal::OutOfBounds {
                    start,
                    end,
                    size: v.size,
                }));
            }
        }
        let usage = self.usage_creating_dir()?;
        // Two writers of one object take turns, each merging into what the other left.
        let _shard = self.lock_entry(&usage, &key)?;
        let path = self.entry_path(&key);
        let mut entry = Entry {
            key,
            validators: v.clone(),
            ranges: Vec::new(),
        };
        let mut old_len = 0;
        if let Some((old, file)) = self.read_entry(&path) {
            old_len = file.metadata().map_or(0, |m| m.len());
            if old.key == entry.key && old.check(v).is_ok() {
                // Keep what the new response did not repeat.
                entry.validators.etag = v.etag.clone().or(old.validators.etag);
                entry.validators.last_modified =
                    v.last_modified.clone().or(old.validators.last_modified);
                entry.ranges = old.ranges;
            }
        }
        for &(start, data) in ranges {
            entry::merge(
                &mut entry.ranges,
                Range {
                    start,
                    data: data.to_vec(),
                },
            );
        }
        if entry.ranges.len() > MAX_RANGES {
            return Ok(Stored::Refused(Refusal::TooManyRanges));
        }
        let bytes = entry::encode(&entry);
        let len = bytes.len() as u64;
        if len > self.max_bytes {
            return Ok(Stored::Refused(Refusal::TooLarge {
                bytes: len,
                cap: self.max_bytes,
            }));
        }
        let grows = len as i64 - old_len as i64;
        let fits = usage
            .total()
            .is_some_and(|t| t.saturating_add_signed(grows) <= self.max_bytes);
        if !fits {
            // Over the cap, or the total is unknown (a new directory, a damaged state file):
            // the one place a store pays for the whole directory.
            self.sweep(len, &path)?;
        }
        self.write_atomically(&path, &bytes)?;
        let _ = usage.add(grows);
        Ok(Stored::Stored {
            file_bytes: len,
            ranges: entry.ranges.iter().map(|r| (r.start, r.end())).collect(),
        })
    }

    /// Deletes the entry of the object at `url` (after [`Entry::check`] found it changed, say).
    /// Returns whether there was one.
    ///
    /// # Errors
    /// [`CacheError`] when the file exists but cannot be deleted.
    pub fn remove(&self, url: &str) -> Result<bool, CacheError> {
        let Some(key) = Key::from_url(url) else {
            return Ok(false);
        };
        let path = self.entry_path(&key);
        if fs::symlink_metadata(&path).is_err() {
            // Nothing to delete (nor, perhaps, a directory to lock in).
            return Ok(false);
        }
        let usage = self.usage()?;
        let _shard = self.lock_entry(&usage, &key)?;
        let len = fs::metadata(&path).map_or(0, |m| m.len());
        match fs::remove_file(&path) {
            Ok(()) => {
                let _ = usage.add(-(len as i64));
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(CacheError {
                path,
                action: "delete entry",
                source,
            }),
        }
    }

    fn create_dir(&self) -> Result<(), CacheError> {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        // Index and header bytes of private objects: readable by their owner only.
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&self.dir).map_err(|source| CacheError {
            path: self.dir.clone(),
            action: "create the cache directory",
            source,
        })
    }

    /// The lock on `key`'s shard of the entries.
    fn lock_entry<'u>(
        &self,
        usage: &'u usage::Usage,
        key: &Key,
    ) -> Result<usage::Held<'u>, CacheError> {
        usage.lock_shard(key.hash64()).map_err(|source| CacheError {
            path: self.dir.join(usage::USAGE_FILE),
            action: "lock the entry",
            source,
        })
    }

    /// [`Cache::usage`], creating the directory first when the state file cannot be opened
    /// (the directory is missing), so that a store into a directory that exists (every store but the first)
    /// does not pay for a `mkdir` and a `stat`.
    fn usage_creating_dir(&self) -> Result<usage::Usage, CacheError> {
        match usage::Usage::open(&self.dir) {
            Ok(usage) => {
                self.work.files_opened.fetch_add(1, Ordering::Relaxed);
                Ok(usage)
            }
            // Missing, or not a directory at all: the errors are those of the long way.
            Err(_) => {
                self.create_dir()?;
                self.usage()
            }
        }
    }

    /// The state file, opened afresh (its locks belong to this open).
    fn usage(&self) -> Result<usage::Usage, CacheError> {
        self.work.files_opened.fetch_add(1, Ordering::Relaxed);
        usage::Usage::open(&self.dir).map_err(|source| CacheError {
            path: self.dir.join(usage::USAGE_FILE),
            action: "open the cache's state file",
            source,
        })
    }

    /// Writes `bytes` to a temporary file beside `path` and renames it over `path`.
    fn write_atomically(&self, path: &Path, bytes: &[u8]) -> Result<(), CacheError> {
        // Unique per writer, so that a writer never renames another's half-written file.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_extension(format!("{}-{n}.{PART_EXT}", std::process::id()));
        let err = |action, source| CacheError {
            path: tmp.clone(),
            action,
            source,
        };
        self.work.files_opened.fetch_add(1, Ordering::Relaxed);
        let result = (|| {
            let mut f = File::create(&tmp).map_err(|e| err("create", e))?;
            f.write_all(bytes).map_err(|e| err("write", e))?;
            fs::rename(&tmp, path).map_err(|e| err("rename into place", e))
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        // Not synced to disk: a cache entry lost or cut short by a crash is found by its
        // checksum and dropped, which costs one cold run; a sync would cost every run.
        result
    }
}
