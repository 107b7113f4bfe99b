//! A remote CRAM's opening and its `.crai`, fetched at once and kept in the persistent cache
//! (`bam::cached`, as a BAM's header and index are). A warm region query reads both from disk,
//! plans at once and asks for its containers; a one-byte request for each object, beside
//! them, shows that neither changed before anything is written (a change: the entry is dropped
//! and the run starts again without the cache: [`crate::Error::is_stale`]).

use std::path::Path;
use std::thread::JoinHandle;

use bam::cached::Cached;
use hfile::{self, cache::Cache, HFile, ObjectInfo};

use crate::Error;
use cram::input::{Input, Seen};

/// The most of a CRAM's start kept in memory (and cacheable) while it is opened: its
/// definition, its header container and the reader's first look past it.
const OPENING_CAP: usize = 4 << 20;

/// The largest `.crai` kept in the cache (a 30x genome's is about 1 MB).
const INDEX_CAP: usize = 32 << 20;

/// What a probe of an object answered.
type Probe = JoinHandle<hfile::Result<ObjectInfo>>;

/// A `.crai` on its way: read whole on a thread, with its cache state.
type Fetch = JoinHandle<Result<(Vec<u8>, Cached, ObjectInfo), String>>;

/// The cache's part in one `view` of a remote CRAM: entries used and the probes that show them
/// current, the index fetched early, the entries being written.
pub struct RemoteParts {
    cache: Option<Cache>,
    transport: hfile::OpenOptions,
    /// Each entry used, with its object's name and its probe.
    checks: Vec<(String, Cached, Probe)>,
    /// The index asked for at once: its name, and its bytes or their fetch.
    index: Option<(String, IndexFetch)>,
    /// Entries being written; waited for at the end.
    storing: Vec<hfile::cache::Queued>,
}

/// An index asked for before it is needed.
enum IndexFetch {
    /// From the cache (its probe is among the checks).
    Ready(Vec<u8>),
    /// Read whole from the server.
    Coming(Fetch),
}

impl RemoteParts {
    /// For a view of `file` that reads its index when `queries` (regions, or `-M`): the cache
    /// is used for a remote query unless `no_cache` (a whole file is read in order: its opening
    /// is not worth a probe). The index (`-X`'s, else the file's name with `.crai` added to its
    /// path) is asked for at once, on a thread of its own: the query then waits one round trip
    /// before its containers, not two.
    pub fn start(
        file: &str,
        index: Option<&str>,
        queries: bool,
        no_cache: bool,
        transport: &hfile::OpenOptions,
    ) -> RemoteParts {
        let remote = hfile::scheme_of(file).is_some();
        let cache = (remote && queries && !no_cache)
            .then(Cache::from_env)
            .flatten();
        let mut r = RemoteParts {
            cache,
            transport: transport.clone(),
            checks: Vec::new(),
            index: None,
            storing: Vec::new(),
        };
        if let Some(name) = index_name(file, index).filter(|_| remote && queries) {
            let early = r.ask_index(&name);
            r.index = Some((name, early));
        }
        r
    }

    /// The CRAM `file` to read. A URL's opening comes from the cache when an entry holds it
    /// (the entry's probe started), else from the server, kept once the reader has read it
    /// ([`RemoteParts::keep_opening`]); a local file or standard input as `cram::input::open`
    /// opens it.
    pub fn open(&mut self, file: &str) -> Result<(Input, Opening), String> {
        if hfile::scheme_of(file).is_none() {
            return cram::input::open(file, &self.transport).map(|i| (i, Opening(None)));
        }
        let (cached, f) = Cached::open(
            file,
            &self.transport,
            self.cache.clone(),
            self.cap(OPENING_CAP),
        )
        .map_err(|e| e.to_string())?;
        let size = cached.cached_size();
        let (input, seen) = Input::remote(f, size);
        if size.is_some() {
            self.check(cached, file);
            return Ok((input, Opening(None)));
        }
        Ok((input, Opening(Some((cached, seen)))))
    }

    /// Keeps what the reader read of a CRAM's start (its definition and header container) in
    /// the cache, with the validators of the response that brought it.
    pub fn keep_opening(&mut self, opening: Opening) {
        let Some((cached, seen)) = opening.0 else {
            return;
        };
        if let Some(info) = seen.get() {
            self.storing
                .extend(cached.store_as(info.clone(), OPENING_CAP as u64));
        }
    }

    /// The index `name`'s bytes: the early one's when it is the one asked for, else read now
    /// (a local file, or a URL).
    pub fn read_index(&mut self, name: &str) -> Result<Vec<u8>, String> {
        let early = match self.index.take() {
            Some((early_name, early)) if early_name == name => early,
            other => {
                self.index = other;
                if hfile::scheme_of(name).is_none() {
                    return std::fs::read(name).map_err(|e| e.to_string());
                }
                self.ask_index(name)
            }
        };
        match early {
            IndexFetch::Ready(bytes) => Ok(bytes),
            IndexFetch::Coming(fetch) => {
                let (bytes, cached, info) = fetch
                    .join()
                    .unwrap_or_else(|_| Err("the index fetch stopped".to_string()))?;
                // Kept only when whole: a cached index is used only when it is.
                if info.size == Some(bytes.len() as u64) && bytes.len() <= INDEX_CAP {
                    self.storing
                        .extend(cached.store_as(info, bytes.len() as u64));
                }
                Ok(bytes)
            }
        }
    }

    /// Waits for the probes of the entries used: an object changed since it was cached is
    /// an error that [`Error::is_stale`] (its entry dropped), and nothing may have been
    /// written yet.
    pub fn confirm(&mut self) -> Result<(), Error> {
        // Nothing read after this comes from the cache: it would not be checked.
        self.cache = None;
        // Every entry judged, so that each stale one is dropped; a stale one is told before
        // any other failure (the run is then made again).
        let mut failure = None;
        for (name, cached, probe) in self.checks.drain(..) {
            let judged = match probe.join() {
                Ok(probed) => cached.judge(probed).map_err(Error::from),
                Err(_) => Err(Error::cram(&name, "a cache check stopped")),
            };
            match (judged, &failure) {
                (Ok(()), _) => {}
                (Err(_), Some(f)) if Error::is_stale(f) => {}
                (Err(f), _) => failure = Some(f),
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// Whether a failure before [`RemoteParts::confirm`] came from a stale entry: a cached index
    /// naming containers a changed file no longer has fails in its own way first.
    /// The stale entry's error, if that is what it was (`None`: the failure stands).
    pub fn stale(&mut self) -> Option<Error> {
        self.confirm().err().filter(Error::is_stale)
    }

    /// The index `name` from the cache, whole (its probe started), else its fetch (kept when
    /// read whole, [`RemoteParts::read_index`]).
    fn ask_index(&mut self, name: &str) -> IndexFetch {
        let cap = self.cap(INDEX_CAP);
        let mut opened = Cached::open(name, &self.transport, self.cache.clone(), cap);
        if let Ok((cached, file)) = opened {
            // Taken, not copied: a whole index is only probed after this, and a partial or
            // absent entry has nothing worth keeping.
            let bytes = cached.take_prefix();
            match cached.cached_size() {
                Some(size) if size == bytes.len() as u64 => {
                    self.check_with(name, cached, file);
                    return IndexFetch::Ready(bytes);
                }
                // Part of an index only (no run of this command keeps one): read it whole.
                Some(_) => {
                    if let Some(cache) = &self.cache {
                        let _ = cache.remove(name);
                    }
                    opened = Cached::open(name, &self.transport, self.cache.clone(), cap);
                }
                None => opened = Ok((cached, file)),
            }
        }
        IndexFetch::Coming(std::thread::spawn(move || {
            let (cached, mut file) = opened.map_err(|e| e.to_string())?;
            let bytes = file.read_to_end_vec().map_err(|e| e.to_string())?;
            let info = file.object_info();
            Ok((bytes, cached, info))
        }))
    }

    /// How much of an object's start to keep in memory: `cap` when it may be cached, else
    /// nothing.
    fn cap(&self, cap: usize) -> usize {
        if self.cache.is_some() {
            cap
        } else {
            0
        }
    }

    /// Starts the probe that shows `cached` (an entry for `name`) current, on a handle of its own.
    fn check(&mut self, cached: Cached, name: &str) {
        let (shown, transport) = (name.to_string(), self.transport.clone());
        let probe = std::thread::spawn(move || hfile::open(&shown, &transport)?.probe());
        self.checks.push((name.to_string(), cached, probe));
    }

    /// [`RemoteParts::check`] on the handle the entry was opened with.
    fn check_with(&mut self, name: &str, cached: Cached, mut file: HFile) {
        let probe = std::thread::spawn(move || file.probe());
        self.checks.push((name.to_string(), cached, probe));
    }
}

impl Drop for RemoteParts {
    fn drop(&mut self) {
        for store in self.storing.drain(..) {
            store.wait();
        }
    }
}

/// A CRAM opened from the server (none for one from the cache, a local file or standard
/// input): what [`RemoteParts::keep_opening`] keeps of it.
pub struct Opening(Option<(Cached, Seen)>);

/// The index a region query reads: `-X`'s, else the first name htslib derives
/// ([`hfile::index_candidates`]: the file's name with `.crai` added to its path, before a
/// URL's query string and fragment); for a local file, the first of those names that exists
/// (`x.crai` beside `x.cram`, as htslib's `hts_idx_check_local` looks for it). `None` for a
/// pre-signed URL without `-X`: no name is derived from one.
pub fn index_name(file: &str, index: Option<&str>) -> Option<String> {
    if let Some(index) = index {
        return Some(index.to_string());
    }
    let candidates = hfile::index_candidates(file, &[".crai"]);
    if hfile::scheme_of(file).is_none() {
        if let Some(found) = candidates.iter().find(|c| Path::new(c.as_str()).exists()) {
            return Some(found.clone());
        }
    }
    candidates.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::index_name;

    #[test]
    fn crai_names_follow_htslib() {
        let name = |f| index_name(f, None);
        assert_eq!(name("x.cram").as_deref(), Some("x.cram.crai"));
        assert_eq!(
            name("https://h/x.cram?v=1#f").as_deref(),
            Some("https://h/x.cram.crai?v=1#f")
        );
        // A signed URL is never altered: -X names its index.
        assert_eq!(name("https://h/x.cram?X-Amz-Signature=s"), None);
        let given = index_name("https://h/x.cram?X-Amz-Signature=s", Some("i.crai"));
        assert_eq!(given.as_deref(), Some("i.crai"));
    }
}
