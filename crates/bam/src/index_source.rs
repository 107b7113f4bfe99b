//! Finding a BAM's index and reading only the part a query needs: the names samtools looks for;
//! for a remote file, the first bytes of each candidate requested when the BAM is opened,
//! beside its header and EOF marker; the references a query names parsed as they arrive,
//! stopping after the last one; and the prefix read kept in the persistent cache.

use hfile::cache::Cache;
use hfile::Hints;
use index::{Index, Loader, Outcome, Wanted};

use crate::cached::Cached;
use crate::header::Header;
use crate::{Error, Result};

/// The first request for an index asks for this much: the references at the start of a BAI
/// of a large BAM (chr1 of a whole genome takes about 0.21 MB: the benchmark BAM's), or all of a
/// small one. 240 KiB keeps a 1-region query on chr1 under 0.25 MB of index.
const FIRST_PIECE: u64 = 240 * 1024;

/// [`FIRST_PIECE`], or `HTS_INDEX_FIRST_PIECE` bytes (at least 1 KiB) when set: a tuning knob,
/// and how the tests make a small index behave like a large one.
fn first_piece() -> u64 {
    std::env::var("HTS_INDEX_FIRST_PIECE")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(FIRST_PIECE, |n| n.max(1024))
}

/// The most the first request for an index asks for, however many references the query names.
const FIRST_REQUEST_CAP: u64 = 4 << 20;

/// The first request for an index of a query over `query_refs` distinct references (0: not
/// known): a piece for each. An index is laid out reference by reference, so a query over
/// several needs at least that many references' worth; asking for it at once saves the round
/// trip in which the header would show it (the rest, if any, is asked for then).
pub(crate) fn first_request(query_refs: usize) -> u64 {
    let n = u64::try_from(query_refs.max(1)).unwrap_or(u64::MAX);
    first_piece()
        .saturating_mul(n)
        .min(FIRST_REQUEST_CAP.max(first_piece()))
}

/// The most of an index kept in memory (and in the cache) as its raw prefix.
const PREFIX_CAP: usize = 256 << 20;

/// Which index a reader will use. `Debug` shows a URL without its query string (a signature).
#[derive(Clone, Default, PartialEq, Eq)]
pub enum IndexHint {
    /// None is needed (a whole-file read): nothing is fetched ahead.
    #[default]
    None,
    /// Found next to the BAM, as samtools looks for it.
    Auto,
    /// This path or URL.
    At(String),
}

impl std::fmt::Debug for IndexHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IndexHint::None => f.write_str("None"),
            IndexHint::Auto => f.write_str("Auto"),
            IndexHint::At(at) => f.debug_tuple("At").field(&hfile::redact_url(at)).finish(),
        }
    }
}

/// A BAM's index extensions in the order htslib 1.16 tries them (`hts_idx_check_local`,
/// `idx_filename`): each appended, then in place of the last extension: `x.bam.csi`, `x.csi`,
/// `x.bam.bai`, `x.bai` (the last is how Picard and htsjdk name indexes).
pub(crate) const INDEX_EXTENSIONS: [&str; 2] = [".csi", ".bai"];

/// The names an index of `location` may have, in the order samtools tries them
/// ([`hfile::index_candidates`]). None for a pre-signed URL: its signature covers the path, so
/// no other name can be made from it, and a signed URL is never altered.
pub(crate) fn candidates(location: &str) -> Vec<String> {
    hfile::index_candidates(location, &INDEX_EXTENSIONS)
}

/// Index files opened (and, if remote, their first bytes requested) ahead of use.
pub(crate) struct Pending {
    /// `(location, opened)`, in the order they are tried; an open failure is kept for when the
    /// candidate's turn comes.
    tried: Vec<(String, Result<(Cached, hfile::HFile)>)>,
    explicit: bool,
    /// The bytes the first request of each asks for ([`first_request`]).
    piece: u64,
}

impl Pending {
    /// Opens the candidates of `hint` and starts fetching their first `piece` bytes (or, for
    /// one the cache holds, the one-byte request that will show it unchanged).
    pub(crate) fn start(
        location: &str,
        hint: &IndexHint,
        transport: &hfile::OpenOptions,
        cache: Option<&Cache>,
        piece: u64,
    ) -> Pending {
        let (names, explicit) = match hint {
            IndexHint::None => (Vec::new(), false),
            IndexHint::Auto => (candidates(location), false),
            IndexHint::At(at) => (vec![at.clone()], true),
        };
        // A local open answers at once whether the file exists: as samtools does, the names
        // after the first that does are not opened. Remote names are all asked at once, so
        // that the answers for those before the index arrive beside its first bytes.
        let mut tried = Vec::new();
        for name in names {
            let opened =
                Cached::open(&name, transport, cache.cloned(), PREFIX_CAP).map(|(c, mut file)| {
                    if c.from_cache > 0 {
                        // The request that will show the cached prefix still current.
                        file.advise_tail(1);
                    } else {
                        file.advise(std::slice::from_ref(&(0..piece)));
                    }
                    (c, file)
                });
            let found = !matches!(&opened, Err(e) if e.is_not_found());
            let local = hfile::scheme_of(&name).is_none();
            tried.push((name, opened));
            if local && found {
                break;
            }
        }
        Pending {
            tried,
            explicit,
            piece,
        }
    }

    /// True when this is the index `explicit` names (or, for `None`, the automatic search).
    pub(crate) fn matches(&self, explicit: Option<&str>) -> bool {
        match explicit {
            Some(at) => self.explicit && self.tried.first().is_some_and(|(n, _)| n == at),
            None => !self.explicit && !self.tried.is_empty(),
        }
    }

    /// The first candidate that exists, with the references in `wanted` loaded.
    ///
    /// When a later candidate came from the cache, it is used at once, while the answers for
    /// the names before it (usually 404s) are still on their way: the query's spans then go
    /// out beside those requests instead of a round trip after them. Those names are checked
    /// absent before any output ([`IndexSource::confirm_and_store`]); one that exists after
    /// all makes the query start again without the cache.
    pub(crate) fn open(
        self,
        location: &str,
        wanted: &Wanted,
        header: &Header,
    ) -> Result<IndexSource> {
        let (explicit, piece) = (self.explicit, self.piece);
        if !explicit && self.tried.is_empty() {
            return Err(Error::IndexNotGiven {
                name: location.to_string(),
            });
        }
        let mut tried = self.tried;
        let cached_at = tried
            .iter()
            .position(|(_, opened)| matches!(opened, Ok((c, _)) if c.from_cache > 0))
            .filter(|&k| !explicit && k > 0 && tried[..k].iter().all(|(_, o)| o.is_ok()));
        if let Some(k) = cached_at {
            let mut rest = tried.split_off(k).into_iter();
            if let Some((_, Ok((c, f)))) = rest.next() {
                match IndexSource::load(c, f, wanted, header, piece) {
                    Ok(mut source) => {
                        abandon(rest);
                        source.unverified = tried
                            .into_iter()
                            .filter_map(|(name, o)| o.ok().map(|(_, f)| (name, f)))
                            .collect();
                        return Ok(source);
                    }
                    // The names before it decide whether this error is the answer.
                    Err(e) => {
                        if let Some(source) =
                            first_existing(tried, false, true, wanted, header, piece)?
                        {
                            abandon(rest);
                            return Ok(source);
                        }
                        if !e.is_not_found() {
                            return Err(e);
                        }
                        tried = rest.collect();
                    }
                }
            }
        }
        first_existing(tried, explicit, false, wanted, header, piece)?.ok_or_else(|| {
            Error::NoIndex {
                name: location.to_string(),
            }
        })
    }
}

/// The first of `tried` that loads; `None` when every one is absent. Absent: a 404, or (for
/// any but the last name, unless `names_after` says more follow) an object store's 403 that may
/// hide a missing key. With `explicit` (one name the user gave) every failure is an error.
///
/// The names after one shown to exist are abandoned as soon as its response says so, not once
/// it is loaded: their first requests (a `.bai` beside a `.csi`) would otherwise share the link
/// with it for as long as it takes to arrive.
fn first_existing(
    tried: Vec<(String, Result<(Cached, hfile::HFile)>)>,
    explicit: bool,
    names_after: bool,
    wanted: &Wanted,
    header: &Header,
    piece: u64,
) -> Result<Option<IndexSource>> {
    let last = tried.len().saturating_sub(1);
    let mut rest = std::collections::VecDeque::from(tried);
    let mut i = 0;
    while let Some((name, opened)) = rest.pop_front() {
        let mut exists = false;
        let loaded = opened.and_then(|(c, mut f)| {
            match c.size(&mut f) {
                Err(e) if !e.is_size_unknown() => return Err(e),
                _ => exists = true,
            }
            abandon(rest.drain(..));
            IndexSource::load(c, f, wanted, header, piece)
        });
        match loaded {
            Ok(source) => return Ok(Some(source)),
            Err(e) if exists || explicit => return Err(e),
            Err(e) if e.is_not_found() => {}
            // An object store that hides absence answers 403 for a missing key (S3
            // without list permission): the next name may still be there.
            Err(e) if (i < last || names_after) && hidden_absence(&name, &e) => {}
            Err(e) => return Err(e),
        }
        i += 1;
    }
    Ok(None)
}

/// Stops the requests of index names that lost to an earlier one (their first requests can
/// be megabytes, and would share the link with the one that won).
fn abandon(names: impl IntoIterator<Item = (String, Result<(Cached, hfile::HFile)>)>) {
    for (_, opened) in names {
        if let Ok((_, mut f)) = opened {
            f.abandon();
        }
    }
}

/// An index file and what has been loaded of it.
pub(crate) struct IndexSource {
    cached: Cached,
    file: hfile::HFile,
    index: Index,
    wanted: Wanted,
    /// Stored bytes the loaded references took (what to cache).
    consumed_input: Option<u64>,
    /// Names samtools would try before this one, whose absence is still to be shown.
    unverified: Vec<(String, hfile::HFile)>,
    /// What the first request asked for.
    piece: u64,
    /// Set once a cached prefix was shown current ([`IndexSource::confirm_and_store`]).
    confirmed: bool,
}

impl IndexSource {
    fn load(
        cached: Cached,
        mut file: hfile::HFile,
        wanted: &Wanted,
        header: &Header,
        piece: u64,
    ) -> Result<IndexSource> {
        let loaded = read(&cached, &mut file, wanted, header, piece, &mut |_, _| {});
        let (index, consumed_input) = unless_stale(&cached, &mut file, false, loaded)?;
        Ok(IndexSource {
            cached,
            file,
            index,
            wanted: wanted.clone(),
            consumed_input,
            unverified: Vec::new(),
            piece,
            confirmed: false,
        })
    }

    pub(crate) fn index(&self) -> &Index {
        &self.index
    }

    /// Makes sure the references in `more` are loaded, from the bytes held in memory when they
    /// hold them, else reading further into the file (the prefix already read is parsed again
    /// from memory). `each` sees the index so far after each wanted reference read from the
    /// file is loaded.
    pub(crate) fn extend(
        &mut self,
        more: &Wanted,
        header: &Header,
        each: &mut dyn FnMut(usize, &Index),
    ) -> Result<()> {
        if self.index.require(more).is_ok() {
            return Ok(());
        }
        let wanted = self.wanted.union(more);
        let loaded = read(
            &self.cached,
            &mut self.file,
            &wanted,
            header,
            self.piece,
            each,
        );
        let confirmed = self.confirmed;
        let (index, consumed_input) =
            unless_stale(&self.cached, &mut self.file, confirmed, loaded)?;
        self.index = index;
        self.wanted = wanted;
        self.consumed_input = consumed_input;
        Ok(())
    }

    /// Shows a cached prefix still describes the file (see [`Cached::confirm`]), then keeps
    /// what was read in the cache (on the cache's writer thread: the store returned).
    pub(crate) fn confirm_and_store(&mut self) -> Result<Option<hfile::cache::Queued>> {
        for (name, mut file) in std::mem::take(&mut self.unverified) {
            let error = match file.size() {
                // A server that answers without telling the size has the object.
                Err(e) if !e.is_size_unknown() => Error::Transport(e),
                _ => {
                    return Err(Error::Changed {
                        name: hfile::redact_url(&self.cached.name),
                        reason: format!(
                            "{} exists now, and samtools would use it",
                            hfile::redact_url(&name)
                        ),
                    })
                }
            };
            if !(error.is_not_found() || hidden_absence(&name, &error)) {
                return Err(error);
            }
        }
        self.cached.confirm(&mut self.file)?;
        self.confirmed = true;
        Ok(self
            .consumed_input
            .and_then(|n| self.cached.store(&mut self.file, n)))
    }
}

/// `result` of reading an index whose prefix came from the cache, or the stale entry an error
/// may stand for: read past the prefix, an index deleted or replaced since fails (a 404, bytes
/// that do not parse); [`Cached::confirm`] then says so ([`Error::Changed`]), the entry is
/// dropped and the run starts again without it, rather than failing every run until the cache
/// is cleared.
///
/// Only before the entry was shown current: after that (output may have begun) an error is
/// the file's own.
fn unless_stale<T>(
    cached: &Cached,
    file: &mut hfile::HFile,
    confirmed: bool,
    result: Result<T>,
) -> Result<T> {
    if result.is_err() && cached.from_cache > 0 && !confirmed {
        // A failed check says nothing of the index: the first error is the answer then.
        if let Err(e) = cached.confirm(file) {
            if e.is_changed() {
                return Err(e);
            }
        }
    }
    result
}

/// Loads `wanted` from the start of `file`, asking the server for about as much as those
/// references take (estimated from the reference lengths: an index stores references one after
/// another, each roughly in proportion to its length), and reading on if that was short.
/// `piece`: what the first request asked for; `each` sees the index so far after each wanted
/// reference read from the file is loaded.
fn read(
    cached: &Cached,
    file: &mut hfile::HFile,
    wanted: &Wanted,
    header: &Header,
    piece: u64,
    each: &mut dyn FnMut(usize, &Index),
) -> Result<(Index, Option<u64>)> {
    // An index whose server does not tell its size is read whole, to its end.
    let total = match cached.size(file) {
        Err(e) if e.is_size_unknown() => None,
        other => Some(other?),
    };
    let name = hfile::redact_url(&cached.name);
    // A local index, or one whose first request holds it all, is read whole, as htslib reads
    // it: damage anywhere in it is then an error, as in samtools. Only a remote index larger
    // than that is read as far as the query needs, also when the cache holds all of it (the
    // same bytes give the same answer, warm or cold).
    let remote = hfile::scheme_of(&cached.name).is_some();
    let wanted = match total {
        Some(total) if remote && total > piece => wanted.clone(),
        _ => Wanted::all(),
    };
    if remote {
        if let Some(loaded) = from_memory(cached, &wanted, total, &name)? {
            return Ok(loaded);
        }
    }
    file.seek_to(0)?;
    let end = total.map(|t| estimate_end(t, &wanted, header, piece));
    file.set_readahead_limit(end);
    let to_the_end = |e: u64| total == Some(e) && e > piece;
    if let Some(end) = end.filter(|&e| remote && (e > piece + piece / 4 || to_the_end(e))) {
        // The rest is asked for now, beside the first piece still arriving, rather than once
        // the first piece has been read: that saves a round trip's wait. Not for an estimate
        // less than a quarter past the first piece: that is mostly the estimate's margin,
        // rarely needed; but an estimate that reaches the end of the file (the last
        // references, or all) is no margin.
        file.advise(&[0..piece, piece..end]);
    }
    let mut loader = Loader::new(name.clone()).wanted(wanted);
    if let Some(total) = total.filter(|&t| t > 0) {
        loader = loader.file_len(total);
    }
    let loaded = loader
        .read_with(&mut *file, each)
        .map_err(|source| Error::Index { name, source })?;
    file.set_readahead_limit(None);
    Ok((loaded.index, loaded.consumed_input))
}

/// The references in `wanted` from the bytes held in memory (a cache entry, or what was read
/// before), when those hold them: the file is then not read, since a read through it fills a
/// buffer past the held bytes and would wait for a response it does not need.
fn from_memory(
    cached: &Cached,
    wanted: &Wanted,
    total: Option<u64>,
    name: &str,
) -> Result<Option<(Index, Option<u64>)>> {
    let prefix = cached.prefix.lock().unwrap_or_else(|p| p.into_inner());
    if prefix.is_empty() {
        return Ok(None);
    }
    let mut loader = Loader::new(name).wanted(wanted.clone());
    if let Some(total) = total.filter(|&t| t > 0) {
        loader = loader.file_len(total);
    }
    match loader.read_prefix(&prefix[..]) {
        Ok(Outcome::Loaded(loaded)) => Ok(Some((loaded.index, loaded.consumed_input))),
        Ok(Outcome::NeedMore(_)) => Ok(None),
        Err(source) => Err(Error::Index {
            name: name.to_string(),
            source,
        }),
    }
}

fn hidden_absence(location: &str, error: &Error) -> bool {
    match error {
        Error::Transport(e) | Error::Bgzf(bgzf::Error::Io(e)) => {
            crate::cached::hidden_absence(location, e)
        }
        _ => false,
    }
}

/// Where the data of the last wanted reference probably ends in an index of `total` bytes.
fn estimate_end(total: u64, wanted: &Wanted, header: &Header, piece: u64) -> u64 {
    let Some(tids) = wanted.tids() else {
        return total;
    };
    let Some(&last) = tids.last() else {
        return piece.min(total);
    };
    let lens: Vec<u64> = header
        .refs()
        .iter()
        .map(|r| u64::from(r.len).max(1))
        .collect();
    let all: u64 = lens.iter().sum();
    if all == 0 || last >= lens.len() {
        return total;
    }
    let through: u64 = lens[..=last].iter().sum();
    let share = through as f64 / all as f64;
    // The float cast saturates at 2^64-1 for a server's absurd size; so must the sum.
    let guess = ((total as f64 * share * 1.1) as u64).saturating_add(16 * 1024);
    guess.max(piece).min(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::Reference;

    #[test]
    fn estimates_grow_with_the_references_before() {
        let refs = (0..10)
            .map(|i| Reference {
                name: format!("c{i}").into_bytes(),
                len: 100_000_000,
            })
            .collect();
        let header = Header::from_parts(Vec::new(), refs).unwrap();
        let total = 10_000_000;
        let piece = FIRST_PIECE;
        let e0 = estimate_end(total, &Wanted::refs([0]), &header, piece);
        let e4 = estimate_end(total, &Wanted::refs([4, 1]), &header, piece);
        assert_eq!(e0, 1_100_000 + 16_384);
        assert_eq!(e4, 5_500_000 + 16_384);
        let e9 = estimate_end(total, &Wanted::refs([9]), &header, piece);
        assert_eq!(e9, total);
        let all = estimate_end(total, &Wanted::all(), &header, piece);
        assert_eq!(all, total);
        assert_eq!(estimate_end(100, &Wanted::refs([0]), &header, piece), 100);
        // Never less than the first request asked for.
        let big = estimate_end(total, &Wanted::refs([0]), &header, 2_000_000);
        assert_eq!(big, 2_000_000);
    }

    #[test]
    fn the_first_request_grows_with_the_references_named() {
        assert_eq!(first_request(0), first_request(1));
        assert_eq!(first_request(5), 5 * first_request(1));
        assert_eq!(first_request(1000), FIRST_REQUEST_CAP);
    }
}
