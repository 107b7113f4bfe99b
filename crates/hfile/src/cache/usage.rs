//! The cache's bookkeeping: one small state file, `.usage`, that holds the running total of the
//! entries' bytes and carries every lock the cache takes, as byte-range locks on it.
//!
//! Why: a store must know whether the directory is over its cap without reading the size of
//! every entry (that made a cohort of N samples pay N^2), and writers of different objects
//! must not wait for one another. So the total is kept as it goes (each store adds what its
//! entry grew or shrank by, under a lock held for one read and one write of 20 bytes), and the
//! entries are locked per shard of their key's hash (4096 shards: two writers of the same
//! object take turns, so merged ranges are never lost; writers of other objects almost never
//! meet). A sweep (eviction) holds a lock of its own and recounts the total from what it finds.
//!
//! The locks are Linux open file description locks (`F_OFD_SETLKW`): they belong to one open of
//! the file, so they exclude threads of one process as well as processes, and they are released
//! when the process dies. Each operation opens the state file afresh for that reason.
//!
//! File layout: `HTSUSAGE`, the total (u64, little-endian), a CRC32 of both. A missing or
//! damaged file means "unknown": the next store sweeps, which recounts.

use std::fs::File;
use std::io;
use std::path::Path;

const MAGIC: &[u8; 8] = b"HTSUSAGE";
const LEN: usize = 20;

/// The name of the state file in the cache directory.
pub(super) const USAGE_FILE: &str = ".usage";

/// Lock offsets, past the data (the locks are advisory: they guard nothing by themselves).
const SWEEP_LOCK: i64 = 1 << 20;
const TOTAL_LOCK: i64 = SWEEP_LOCK + 1;
const SHARD_BASE: i64 = 1 << 21;

/// Entries are locked in this many groups, by their key's hash.
pub(super) const SHARDS: u64 = 4096;

/// The state file, opened for one operation.
pub(super) struct Usage {
    file: File,
}

/// A held lock; dropping it releases it.
pub(super) struct Held<'a> {
    file: &'a File,
    at: i64,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let _ = range_lock(self.file, self.at, Lock::Release);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Lock {
    Wait,
    Try,
    Release,
}

impl Usage {
    /// Opens (creating) the state file of the cache in `dir`.
    pub(super) fn open(dir: &Path) -> io::Result<Usage> {
        let mut options = File::options();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        Ok(Usage {
            file: options.open(dir.join(USAGE_FILE))?,
        })
    }

    /// The lock on the entries of `shard`, waiting for it.
    pub(super) fn lock_shard(&self, shard: u64) -> io::Result<Held<'_>> {
        self.wait(SHARD_BASE + (shard % SHARDS) as i64)
    }

    /// The lock on the entries of `shard` if no one holds it now.
    pub(super) fn try_lock_shard(&self, shard: u64) -> io::Result<Option<Held<'_>>> {
        self.try_hold(SHARD_BASE + (shard % SHARDS) as i64)
    }

    /// The lock a sweep holds, waiting for it: one sweep at a time.
    pub(super) fn lock_sweep(&self) -> io::Result<Held<'_>> {
        self.wait(SWEEP_LOCK)
    }

    fn wait(&self, at: i64) -> io::Result<Held<'_>> {
        range_lock(&self.file, at, Lock::Wait)?;
        Ok(Held {
            file: &self.file,
            at,
        })
    }

    fn try_hold(&self, at: i64) -> io::Result<Option<Held<'_>>> {
        Ok(range_lock(&self.file, at, Lock::Try)?.then_some(Held {
            file: &self.file,
            at,
        }))
    }

    /// The total as last written; `None` when unknown (no file yet, or a damaged one).
    pub(super) fn total(&self) -> Option<u64> {
        let mut buf = [0u8; LEN];
        read_at(&self.file, &mut buf).ok()?;
        if &buf[..8] != MAGIC {
            return None;
        }
        let stored = u32::from_le_bytes([buf[16], buf[17], buf[18], buf[19]]);
        if crc32fast::hash(&buf[..16]) != stored {
            return None;
        }
        let mut total = [0u8; 8];
        total.copy_from_slice(&buf[8..16]);
        Some(u64::from_le_bytes(total))
    }

    /// Adds `delta` to the total; the new total, or `None` when it is unknown (left so: the
    /// next sweep recounts).
    pub(super) fn add(&self, delta: i64) -> io::Result<Option<u64>> {
        let _held = self.wait(TOTAL_LOCK)?;
        let Some(total) = self.total() else {
            return Ok(None);
        };
        let total = total.saturating_add_signed(delta);
        self.write(total)?;
        Ok(Some(total))
    }

    /// After a sweep that found `counted` bytes when the total read `before`: the total becomes
    /// `counted` plus whatever other writers added since `before` (so their stores are not
    /// forgotten). Stores that ran during the sweep may leave it off by their own sizes until
    /// the next sweep; the cap's slack says so.
    pub(super) fn recount(&self, before: Option<u64>, counted: u64) -> io::Result<u64> {
        let _held = self.wait(TOTAL_LOCK)?;
        let since = match (before, self.total()) {
            (Some(b), Some(now)) => i128::from(now) - i128::from(b),
            _ => 0,
        };
        let total = u64::try_from((i128::from(counted) + since).max(0)).unwrap_or(u64::MAX);
        self.write(total)?;
        Ok(total)
    }

    fn write(&self, total: u64) -> io::Result<()> {
        let mut buf = [0u8; LEN];
        buf[..8].copy_from_slice(MAGIC);
        buf[8..16].copy_from_slice(&total.to_le_bytes());
        let crc = crc32fast::hash(&buf[..16]);
        buf[16..].copy_from_slice(&crc.to_le_bytes());
        write_at(&self.file, &buf)
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, 0)
}

#[cfg(unix)]
fn write_at(file: &File, buf: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, 0)
}

/// Takes, tries or releases the one-byte write lock at `at`; false when `Try` found it held.
#[cfg(target_os = "linux")]
fn range_lock(file: &File, at: i64, how: Lock) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: a zeroed `flock` is a valid value of this plain C struct.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = if how == Lock::Release {
        libc::F_UNLCK
    } else {
        libc::F_WRLCK
    } as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = at;
    fl.l_len = 1;
    // l_pid must be 0 for open file description locks.
    fl.l_pid = 0;
    let cmd = if how == Lock::Wait {
        libc::F_OFD_SETLKW
    } else {
        libc::F_OFD_SETLK
    };
    loop {
        // SAFETY: the descriptor is open for the life of `file`, and `fl` outlives the call.
        let r = unsafe { libc::fcntl(file.as_raw_fd(), cmd, &fl as *const libc::flock) };
        if r == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN | libc::EACCES) if how == Lock::Try => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// Elsewhere no lock is taken: the total stays a good estimate and sweeps recount it, but
/// concurrent writers of one object may lose each other's ranges.
#[cfg(not(target_os = "linux"))]
fn range_lock(_file: &File, _at: i64, _how: Lock) -> io::Result<bool> {
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_and_locks() {
        let dir = std::env::temp_dir().join(format!("hts-usage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = Usage::open(&dir).unwrap();
        assert_eq!(a.total(), None);
        assert_eq!(a.add(5).unwrap(), None, "unknown stays unknown");
        assert_eq!(a.recount(None, 100).unwrap(), 100);
        assert_eq!(a.add(-30).unwrap(), Some(70));
        assert_eq!(a.recount(Some(50), 10).unwrap(), 30, "20 added since");
        // Another open of the file is another holder: it cannot take a held shard.
        let b = Usage::open(&dir).unwrap();
        let held = a.lock_shard(7).unwrap();
        assert!(b.try_lock_shard(7).unwrap().is_none());
        assert!(b.try_lock_shard(8).unwrap().is_some());
        drop(held);
        assert!(b.try_lock_shard(7).unwrap().is_some());
        // A damaged file is unknown.
        std::fs::write(dir.join(USAGE_FILE), b"HTSUSAGE garbage here").unwrap();
        assert_eq!(b.total(), None);
        std::fs::remove_dir_all(&dir).ok();
    }
}
