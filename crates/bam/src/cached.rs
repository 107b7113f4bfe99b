//! Remote objects read through the persistent cache (`hfile::cache`): a BAM's header blocks and
//! an index's prefix come from disk when an earlier run kept them, and a response the query
//! makes anyway (the EOF probe, an index request) shows the object unchanged before any output
//! (docs/ARCHITECTURE.md, "The index cache"). Public for the readers beside this crate: a
//! remote CRAM's opening and `.crai` go through it the same way.

use hfile::cache::{Cache, Queued, Validators};
use std::sync::Arc;

use hfile::{HFile, Prefix, PrefixBackend};

use crate::{Error, Result};

/// One remote object opened through the cache (its [`HFile`] is held by whoever reads it).
pub struct Cached {
    pub(crate) name: String,
    /// The object's first bytes: from the cache, grown by what is read after them.
    pub(crate) prefix: Prefix,
    /// The validators of the entry used, if one was.
    pub(crate) entry: Option<Validators>,
    /// Bytes the entry held.
    pub(crate) from_cache: u64,
    cache: Option<Cache>,
    verbosity: u8,
}

impl Cached {
    /// For an object the cache never holds (a pipe, bytes in memory).
    pub(crate) fn detached(name: &str) -> Cached {
        Cached {
            name: name.to_string(),
            prefix: Prefix::default(),
            entry: None,
            from_cache: 0,
            cache: None,
            verbosity: 0,
        }
    }

    /// Opens `name` with `cap` bytes of its start kept in memory (and cacheable). A local file
    /// never goes through the cache.
    pub fn open(
        name: &str,
        transport: &hfile::OpenOptions,
        cache: Option<Cache>,
        cap: usize,
    ) -> Result<(Cached, HFile)> {
        Cached::open_with(name, None, transport, cache, cap)
    }

    /// [`Cached::open`] of `name` through `backend` when the caller opened it already.
    pub(crate) fn open_with(
        name: &str,
        backend: Option<Box<dyn hfile::Backend>>,
        transport: &hfile::OpenOptions,
        cache: Option<Cache>,
        cap: usize,
    ) -> Result<(Cached, HFile)> {
        let backend = match backend {
            Some(backend) => backend,
            None => hfile::open_backend(name, transport)?,
        };
        let remote = hfile::scheme_of(name).is_some();
        let cache = cache.filter(|_| remote);
        let entry = cache.as_ref().and_then(|c| c.lookup(name));
        let (prefix, validators) = match entry.map(hfile::cache::Entry::into_prefix) {
            Some(c) => (c.prefix, Some(c.validators)),
            None => (Vec::new(), None),
        };
        let from_cache = prefix.len() as u64;
        // A local file is read again as cheaply as memory: keeping a copy of what was read
        // (all of a local index) is only cost.
        let cap = if remote { cap } else { 0 };
        let backend = PrefixBackend::new(prefix, backend, cap);
        let prefix = backend.shared_prefix();
        if transport.verbosity >= 1 && from_cache > 0 {
            eprintln!(
                "[hts] {}: {from_cache} bytes from the cache",
                hfile::redact_url(name)
            );
        }
        let cached = Cached {
            name: name.to_string(),
            prefix,
            entry: validators,
            from_cache,
            cache,
            verbosity: transport.verbosity,
        };
        Ok((cached, HFile::new(Box::new(backend))))
    }

    /// The object's size: the cached one when an entry was used (checked later), else from a
    /// response.
    pub(crate) fn size(&self, file: &mut HFile) -> Result<u64> {
        match self.cached_size() {
            Some(size) => Ok(size),
            None => Ok(file.size()?),
        }
    }

    /// The size the entry recorded, when one was used (shown current only by
    /// [`Cached::judge`]).
    pub fn cached_size(&self) -> Option<u64> {
        self.entry.as_ref().map(|v| v.size)
    }

    /// The first bytes kept so far (the entry's, grown by the reads that continued them), moved
    /// out and leaving none: for an entry only checked from now on, so they need no copy.
    pub fn take_prefix(&self) -> Vec<u8> {
        std::mem::take(&mut *self.prefix.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Checks that the object is the one the entry described, from a response on its way or a
    /// one-byte request. A changed object's entry is dropped and the error says why.
    pub(crate) fn confirm(&self, file: &mut HFile) -> Result<()> {
        if self.entry.is_none() {
            return Ok(());
        }
        self.judge(file.probe())
    }

    /// Checks that the object is the one the entry described, from what a probe of it answered
    /// (`probed`: made on another handle, or on another thread, while the reads go on). A
    /// changed object's entry is dropped and the error ([`Error::Changed`]) says why.
    pub fn judge(&self, probed: hfile::Result<hfile::ObjectInfo>) -> Result<()> {
        let Some(cached) = self.entry.clone() else {
            return Ok(());
        };
        // An object gone since it was cached (an index deleted, perhaps with another name
        // left) is a change like any other: the run starts again without the entry, instead of
        // failing on it until the cache is cleared.
        let change = match probed {
            Ok(info) => {
                let now = Validators {
                    size: info.size.unwrap_or(0),
                    etag: info.etag,
                    last_modified: info.last_modified,
                };
                // Compared with the entry as it was read (another process may have replaced
                // the file since; the bytes used are those read).
                cached.check(&now).err().map(|c| c.to_string())
            }
            Err(e) if e.is_not_found() || hidden_absence(&self.name, &e) => {
                Some("it is no longer there".to_string())
            }
            Err(e) => return Err(e.into()),
        };
        if let Some(reason) = change {
            if let Some(cache) = &self.cache {
                let _ = cache.remove(&self.name);
            }
            if self.verbosity >= 1 {
                eprintln!(
                    "[hts] {}: cache entry dropped: {reason}",
                    hfile::redact_url(&self.name)
                );
            }
            return Err(Error::Changed {
                name: hfile::redact_url(&self.name),
                reason,
            });
        }
        Ok(())
    }

    /// [`Cached::store_as`] with the validators `file`'s responses gave.
    pub(crate) fn store(&self, file: &mut HFile, len: u64) -> Option<Queued> {
        self.store_as(file.object_info(), len)
    }

    /// Stores the first `len` bytes (when more than the entry held), with the validators `info`
    /// a response gave (read from the object's handle by whoever holds it), on the cache's
    /// writer thread (waited for by the caller). A refusal (no validators, over the cap) only
    /// means the next run is cold.
    pub fn store_as(&self, info: hfile::ObjectInfo, len: u64) -> Option<Queued> {
        let cache = self.cache.clone()?;
        let len = {
            let prefix = self.prefix.lock().unwrap_or_else(|p| p.into_inner());
            len.min(prefix.len() as u64)
        };
        if len <= self.from_cache {
            return None;
        }
        let v = Validators {
            size: info.size?,
            etag: info.etag,
            last_modified: info.last_modified,
        };
        // Written beside the query, not before its output; the reader waits for it when done.
        let (name, prefix, verbosity) =
            (self.name.clone(), Arc::clone(&self.prefix), self.verbosity);
        Some(hfile::cache::in_background(move || {
            // Copied out first: the reads that grow the prefix take its lock, and must not
            // wait for the disk.
            let bytes = {
                let prefix = prefix.lock().unwrap_or_else(|p| p.into_inner());
                prefix[..len as usize].to_vec()
            };
            let stored = cache.store(&name, &v, &[(0, &bytes[..])]);
            if verbosity >= 1 {
                match stored {
                    Ok(s) => eprintln!("[hts] {}: cache: {s:?}", hfile::redact_url(&name)),
                    Err(e) => eprintln!("[hts] {}: cache: {e}", hfile::redact_url(&name)),
                }
            }
        }))
    }
}

/// An object store without list permission answers 403 for a key that does not exist: for a
/// cached object, as good as a 404 (a 403 for a lost permission fails again without the cache).
pub(crate) fn hidden_absence(name: &str, e: &hfile::Error) -> bool {
    let object_store = matches!(
        hfile::scheme_of(name).as_deref(),
        Some("s3" | "s3+http" | "s3+https" | "gs" | "gs+http" | "gs+https")
    );
    object_store && matches!(e, hfile::Error::Status { status: 403, .. })
}
