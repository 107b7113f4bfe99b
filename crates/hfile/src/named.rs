//! A backend shown under another name: an `s3://` or `gs://` object is fetched from an
//! `https://` URL, but every message names what the user gave.

use crate::{Backend, Error, Result};

/// The error for a location that cannot be opened as given (bad URL, bad settings).
pub(crate) fn open_error(location: &str, message: String) -> Error {
    Error::Open {
        name: location.to_string(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, message),
    }
}

/// `inner`, named `name` in its errors and in [`Backend::name`].
pub(crate) struct Named<B> {
    pub(crate) name: String,
    pub(crate) inner: B,
}

impl<B: Backend> Backend for Named<B> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.inner.read(buf).map_err(|e| e.renamed(&self.name))
    }

    fn seek(&mut self, pos: u64) -> Result<()> {
        self.inner.seek(pos).map_err(|e| e.renamed(&self.name))
    }

    fn position(&self) -> u64 {
        self.inner.position()
    }

    fn size(&mut self) -> Result<u64> {
        self.inner.size().map_err(|e| e.renamed(&self.name))
    }

    fn read_tail(&mut self, len: u64) -> Result<Vec<u8>> {
        self.inner.read_tail(len).map_err(|e| e.renamed(&self.name))
    }

    fn object_info(&mut self) -> crate::ObjectInfo {
        self.inner.object_info()
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl<B: Backend> crate::Hints for Named<B> {
    fn set_readahead_limit(&mut self, limit: Option<u64>) {
        self.inner.set_readahead_limit(limit);
    }

    fn advise(&mut self, ranges: &[std::ops::Range<u64>]) {
        self.inner.advise(ranges);
    }

    fn advise_tail(&mut self, len: u64) {
        self.inner.advise_tail(len);
    }

    fn abandon(&mut self) {
        self.inner.abandon();
    }
}
