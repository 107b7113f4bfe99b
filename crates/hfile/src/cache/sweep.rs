//! Eviction, off the query's path: a store that would take the running total past the cap
//! sweeps the directory once, evicting the least recently used entries down to 90% of the cap,
//! so the next sweep is at least a tenth of the cap of new entries away (a scan of N entries
//! paid once per cap/10 bytes stored, not on every store). Only one sweep runs at a time;
//! writers that find the cache over its cap while one runs wait for it, then find room.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use super::{Cache, CacheError, ENTRY_EXT, PART_EXT};

/// A temporary file this old was left by a writer that died (a live one renames its file
/// within moments of creating it).
const STALE_PART: Duration = Duration::from_secs(3600);

struct FileInfo {
    path: PathBuf,
    len: u64,
    used: SystemTime,
    temporary: bool,
}

impl Cache {
    /// Makes room for an entry of `need` bytes that replaces the file at `replacing` (if any;
    /// its bytes count as freed, and it is never evicted): unless the total shows room by now
    /// (another writer swept), evicts the least recently used entries, deletes temporary files
    /// left by dead writers, and recounts the total.
    pub(super) fn sweep(&self, need: u64, replacing: &Path) -> Result<(), CacheError> {
        let usage = self.usage()?;
        let err = |action, source| CacheError {
            path: self.dir.join(super::usage::USAGE_FILE),
            action,
            source,
        };
        let _one_at_a_time = usage
            .lock_sweep()
            .map_err(|e| err("lock the cache for eviction", e))?;
        let before = usage.total();
        let replaced = fs::metadata(replacing).map_or(0, |m| m.len());
        if before.is_some_and(|t| t.saturating_sub(replaced).saturating_add(need) <= self.max_bytes)
        {
            return Ok(());
        }
        self.work.sweeps.fetch_add(1, Ordering::Relaxed);
        let now = SystemTime::now();
        let mut files = self.scan();
        for f in files.iter().filter(|f| f.temporary) {
            if now.duration_since(f.used).unwrap_or_default() > STALE_PART {
                let _ = fs::remove_file(&f.path);
            }
        }
        files.retain(|f| !f.temporary);
        let mut counted: u64 = files.iter().map(|f| f.len).sum();
        let low = self.max_bytes - self.max_bytes / 10;
        let goal = if need <= low { low } else { self.max_bytes };
        let fits = |counted: u64| counted.saturating_sub(replaced).saturating_add(need) <= goal;
        files.sort_by_key(|f| f.used);
        for f in files {
            if fits(counted) {
                break;
            }
            if f.path == replacing {
                continue;
            }
            // An entry whose shard a writer holds is being written: it is in use, so not
            // the one to evict (and deleting it under the writer would spoil its count).
            let shard = f
                .path
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| u64::from_str_radix(s, 16).ok());
            let Some(shard) = shard else { continue };
            let Ok(Some(_held)) = usage.try_lock_shard(shard) else {
                continue;
            };
            match fs::remove_file(&f.path) {
                Ok(()) => counted -= f.len,
                Err(e) if e.kind() == io::ErrorKind::NotFound => counted -= f.len,
                Err(source) => {
                    return Err(CacheError {
                        path: f.path,
                        action: "evict entry",
                        source,
                    })
                }
            }
        }
        usage
            .recount(before, counted)
            .map_err(|e| err("record the cache's size", e))?;
        Ok(())
    }

    /// The entry and temporary files, with their sizes and last use: the only place the
    /// directory is listed.
    fn scan(&self) -> Vec<FileInfo> {
        let Ok(dir) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        dir.filter_map(|d| {
            let d = d.ok()?;
            self.work.dir_entries_read.fetch_add(1, Ordering::Relaxed);
            let path = d.path();
            let ext = path.extension()?.to_str()?.to_string();
            let temporary = ext == PART_EXT;
            if !temporary && ext != ENTRY_EXT {
                return None;
            }
            let meta = d.metadata().ok()?;
            Some(FileInfo {
                used: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                len: meta.len(),
                temporary,
                path,
            })
        })
        .collect()
    }

    /// The bytes the cache's entries take on disk, counted by listing the directory (the
    /// running total is only an estimate between sweeps).
    pub fn used_bytes(&self) -> u64 {
        self.scan()
            .iter()
            .filter(|f| !f.temporary)
            .map(|f| f.len)
            .sum()
    }
}
