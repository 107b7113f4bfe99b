//! What a user names as a BAM location: a path or URL, optionally followed by `##idx##` and the
//! location of its index (htslib's syntax for an index whose name cannot be derived, as with
//! pre-signed URLs; [`hfile::split_index`]).

use std::sync::Arc;

use hfile::cache::Cache;
use hfile::split_index;
use index::{Index, Wanted};

use crate::header::Header;
use crate::index_source::{first_request, IndexSource, Pending};
use crate::reader::OpenOptions;
use crate::{IndexHint, Result};

/// The index to use: one named with `##idx##` takes the place of a derived one; one given on
/// its own (`-X`) wins over both; a read that needs none stays without.
pub(crate) fn index_hint(hint: &IndexHint, from_location: Option<&str>) -> IndexHint {
    match (hint, from_location) {
        (IndexHint::Auto, Some(at)) => IndexHint::At(at.to_string()),
        _ => hint.clone(),
    }
}

/// The index locator: which index a reader uses (one named with `-X`, with `##idx##`, or found
/// by samtools' search order, [`crate::index_source::INDEX_EXTENSIONS`]), the candidates' first
/// requests started at the open, and the index as far as it is loaded.
pub(crate) struct Locator {
    /// The BAM's location as given (before any `##idx##`), for deriving index names.
    source: String,
    /// The index named with `##idx##`, used verbatim.
    named: Option<String>,
    /// The index of [`OpenOptions::index`], being fetched since the open.
    pending: Option<Pending>,
    /// The index file queries read from, as far as it has been loaded.
    loaded: Option<IndexSource>,
    /// Every block start the index knows, for the span planner of a remote file (empty for a
    /// local one: see [`Locator::update_block_starts`]).
    block_starts: Arc<bgzf::BlockStarts>,
}

impl Locator {
    /// The locator of `location` (`FILE` or `FILE##idx##INDEX`); nothing is fetched yet.
    pub(crate) fn new(location: &str) -> Locator {
        let split = split_index(location);
        Locator {
            source: split.file.to_string(),
            named: split.index.map(str::to_string),
            pending: None,
            loaded: None,
            block_starts: Arc::default(),
        }
    }

    /// The BAM's location, without the `##idx##` part.
    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    /// True for a remote file.
    pub(crate) fn is_remote(&self) -> bool {
        hfile::scheme_of(&self.source).is_some()
    }

    /// Starts fetching the first bytes of the index `options` asks for (with the one named
    /// with `##idx##` in place of a derived one), beside the header's requests.
    pub(crate) fn start(&mut self, options: &OpenOptions, cache: Option<&Cache>) {
        self.pending = match index_hint(&options.index, self.named.as_deref()) {
            IndexHint::None => None,
            ref hint => Some(Pending::start(
                &self.source,
                hint,
                &options.transport,
                cache,
                first_request(options.query_refs),
            )),
        };
    }

    /// Finds the index: `explicit` (`-X`) if given, else the one named with `##idx##`, else the
    /// names samtools looks for, reusing the requests started at the open when they were for
    /// the same. No reference is loaded yet. `name`: the BAM's name for messages.
    pub(crate) fn select(
        &mut self,
        explicit: Option<&str>,
        name: &str,
        header: &Header,
        options: &OpenOptions,
        cache: Option<&Cache>,
    ) -> Result<()> {
        let explicit = explicit.map(str::to_string).or_else(|| self.named.clone());
        let pending = match self.pending.take() {
            Some(p) if p.matches(explicit.as_deref()) => p,
            _ => {
                let hint = explicit.map_or(IndexHint::Auto, IndexHint::At);
                Pending::start(
                    &self.source,
                    &hint,
                    &options.transport,
                    cache,
                    first_request(options.query_refs),
                )
            }
        };
        self.loaded = Some(pending.open(name, &Wanted::none(), header)?);
        self.update_block_starts();
        Ok(())
    }

    /// The index as far as it is loaded.
    pub(crate) fn index(&self) -> Option<&Index> {
        self.loaded.as_ref().map(IndexSource::index)
    }

    /// The index file, to load more of it or to confirm it.
    pub(crate) fn loaded_mut(&mut self) -> Option<&mut IndexSource> {
        self.loaded.as_mut()
    }

    /// Block starts make a remote plan's requests end where the last needed block ends rather
    /// than up to 64 KiB later. Locally those bytes cost nothing, while collecting and sorting
    /// every start of a whole index costs more than a small query: they are not computed.
    pub(crate) fn update_block_starts(&mut self) {
        self.block_starts = match (self.is_remote(), self.index()) {
            (true, Some(index)) => Arc::new(bgzf::BlockStarts::new(index.block_starts())),
            _ => Arc::default(),
        };
    }

    /// See [`Locator::update_block_starts`].
    pub(crate) fn block_starts(&self) -> &[u64] {
        self.block_starts.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_index_replaces_a_derived_one_only() {
        let at = |s: &str| IndexHint::At(s.to_string());
        assert_eq!(index_hint(&IndexHint::Auto, Some("i.bai")), at("i.bai"));
        assert_eq!(index_hint(&at("x.bai"), Some("i.bai")), at("x.bai"));
        assert_eq!(index_hint(&IndexHint::None, Some("i.bai")), IndexHint::None);
        assert_eq!(index_hint(&IndexHint::Auto, None), IndexHint::Auto);
    }
}
