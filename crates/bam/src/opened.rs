//! The opened source of a BAM file: its transport (a pipe, bytes in memory, or a path or URL
//! opened through the persistent cache), and whether the parts that came from the cache have
//! been shown current. Nothing else in the reader knows about the cache.

use hfile::cache::{Cache, Queued};
use hfile::HFile;
use hfile::Hints;

use crate::cached::Cached;
use crate::index_source::IndexSource;
use crate::reader::OpenOptions;
use crate::Result;

/// The 28-byte BGZF EOF marker, fetched ahead so its check costs no round trip of its own.
const EOF_MARKER_LEN: u64 = 28;

/// The most of a BAM's start kept in memory while its header is read (and cached).
const HEADER_CAP: usize = 16 << 20;

/// A BAM file's source and its cache state.
pub(crate) struct Opened {
    /// The BAM's cache entry (its header may have come from it).
    cached: Cached,
    cache: Option<Cache>,
    /// Set once cached parts are shown current ([`Opened::confirm`]).
    confirmed: bool,
    /// Cache entries being written; waited for when the source is dropped.
    storing: Vec<Queued>,
    /// Read from a pipe: no seeking, no size, no index.
    stream: bool,
}

impl Opened {
    /// Standard input: read in order; nothing comes from the cache.
    pub(crate) fn stdin() -> (Opened, HFile) {
        let file = HFile::new(Box::new(hfile::StreamBackend::stdin()));
        (Opened::detached("-", true), file)
    }

    /// A local path that is not a regular file (a named pipe, `<(cat x.bam)`'s `/dev/fd/N`, a
    /// character device): read in order as standard input is, since it cannot seek; `None`
    /// for anything else (a regular file, a URL, a path that does not exist).
    pub(crate) fn pipe(location: &str) -> Option<Result<(Opened, HFile)>> {
        if hfile::scheme_of(location).is_some() {
            return None;
        }
        let meta = std::fs::metadata(location).ok()?;
        if meta.is_file() || meta.is_dir() {
            return None;
        }
        let opened = std::fs::File::open(location).map_err(|source| {
            crate::Error::Transport(hfile::Error::Io {
                name: location.to_string(),
                offset: 0,
                source,
            })
        });
        Some(opened.map(|f| {
            let stream = hfile::StreamBackend::new(location, Box::new(f));
            (
                Opened::detached(location, true),
                HFile::new(Box::new(stream)),
            )
        }))
    }

    /// Bytes in memory.
    pub(crate) fn memory(name: &str, bytes: Vec<u8>) -> (Opened, HFile) {
        (
            Opened::detached(name, false),
            HFile::from_bytes(name, bytes),
        )
    }

    fn detached(name: &str, stream: bool) -> Opened {
        Opened {
            cached: Cached::detached(name),
            cache: None,
            // Nothing came from the cache for a pipe.
            confirmed: stream,
            storing: Vec::new(),
            stream,
        }
    }

    /// A path or URL (through `backend` when the caller opened it already), through the
    /// persistent cache for a remote one (unless `no_cache`). The EOF marker is asked for at
    /// once: with the header's request (unless cached) and the index's, three requests at once,
    /// and its answer shows a cached header current.
    pub(crate) fn open(
        source: &str,
        backend: Option<Box<dyn hfile::Backend>>,
        options: &OpenOptions,
    ) -> Result<(Opened, HFile)> {
        let cache = if options.no_cache || hfile::scheme_of(source).is_none() {
            None
        } else {
            Cache::from_env()
        };
        let (cached, mut file) = Cached::open_with(
            source,
            backend,
            &options.transport,
            cache.clone(),
            HEADER_CAP,
        )?;
        file.advise_tail(EOF_MARKER_LEN);
        let opened = Opened {
            cached,
            cache,
            confirmed: false,
            storing: Vec::new(),
            stream: false,
        };
        Ok((opened, file))
    }

    /// True for a pipe.
    pub(crate) fn is_stream(&self) -> bool {
        self.stream
    }

    /// True once cached parts are shown current (always for a pipe).
    pub(crate) fn is_confirmed(&self) -> bool {
        self.confirmed
    }

    /// The persistent cache, if in use.
    pub(crate) fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref()
    }

    /// The size the cache entry recorded, when the header came from one (shown current by
    /// [`Opened::confirm`]): asking the file would wait for a response.
    pub(crate) fn cached_size(&self) -> Option<u64> {
        self.cached.cached_size()
    }

    /// An index found after the cached parts were shown current: what its choice rests on is
    /// shown now, and what was read of it kept.
    pub(crate) fn confirm_index(&mut self, index: &mut IndexSource) -> Result<()> {
        self.storing.extend(index.confirm_and_store()?);
        Ok(())
    }

    /// Shows that the parts that came from the cache (of `file`, and of `index`) still
    /// describe them, from responses already on their way, and keeps the file's first
    /// `header_end` bytes (its header's blocks) and what was read of the index in the cache.
    pub(crate) fn confirm(
        &mut self,
        file: &mut HFile,
        index: Option<&mut IndexSource>,
        header_end: u64,
    ) -> Result<()> {
        if self.confirmed {
            return Ok(());
        }
        self.cached.confirm(file)?;
        if let Some(index) = index {
            self.confirm_index(index)?;
        }
        self.storing.extend(self.cached.store(file, header_end));
        self.confirmed = true;
        Ok(())
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        for store in self.storing.drain(..) {
            store.wait();
        }
    }
}
