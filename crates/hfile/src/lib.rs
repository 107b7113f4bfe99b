//! Byte sources behind one trait, in the manner of htslib's `hFILE`.
//!
//! A [`Backend`] is a seekable source of bytes with a known size: a local file, a buffer in memory,
//! an HTTP(S) object, an `s3://` object (signed with AWS Signature Version 4, see [`s3`]) or a
//! `gs://` object. The layer above (BGZF) tells the backend how far it
//! expects to read with [`Hints::set_readahead_limit`]; a remote backend turns that hint into a
//! bounded `Range` request. The limit is only a hint: reading past it still works (it costs a new
//! request), and the end of file is always the object's real size.
//!
//! [`cache`] keeps byte ranges of remote objects (an index's prefix, a BAM's header) on disk
//! between runs, with the validators that show whether the object changed.
//!
//! [`HFile`] wraps a backend with a small buffer and implements [`std::io::Read`],
//! [`std::io::BufRead`] and [`std::io::Seek`], so other readers can sit on top of it.
//!
//! # Examples
//!
//! ```
//! use std::io::Read;
//! let mut f = hfile::HFile::from_bytes("demo", b"hello world".to_vec());
//! let mut s = String::new();
//! f.read_to_string(&mut s).unwrap();
//! assert_eq!(s, "hello world");
//! ```

#![warn(missing_docs)]

pub mod cache;
mod client;
mod deadline;
mod error;
mod file;
pub mod gcs;
mod handle;
mod hints;
pub mod hook;
mod http;
mod index_name;
mod memory;
mod named;
pub mod outlet;
mod prefix;
mod redact;
mod registry;
pub mod s3;
mod stats;
mod stream;

pub use client::{Client, ClientOptions};
pub use deadline::Deadline;
pub use error::Error;
pub use file::FileBackend;
pub use handle::HFile;
pub use hints::Hints;
pub use hook::RequestHook;
/// For the fuzz targets (`fuzz/`): a response replayed through the HTTP checks.
#[doc(hidden)]
pub use http::replay as http_replay;
pub use http::{shutdown, throttled, HttpBackend};
pub use index_name::{
    add_extension, derived_names, index_candidates, split_index, FileAndIndex, INDEX_DELIMITER,
};
pub use memory::MemoryBackend;
pub use prefix::{Prefix, PrefixBackend};
pub use redact::{is_presigned, redact_header, redact_text, redact_url};
pub use registry::{
    open, open_backend, register_scheme, scheme_of, OpenOptions, Opener, RangeMode,
};
pub use s3::{S3Backend, S3Options};
pub use stats::{reset_transfer_stats, settled_transfer_stats, transfer_stats, TransferStats};
pub use stream::StreamBackend;

/// The libcurl version in use (as libcurl reports it at run time).
pub fn curl_version() -> String {
    http::curl_version()
}

/// What identifies a version of an object: its size and, for remote objects, the validators the
/// server sent (`ETag`, `Last-Modified`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectInfo {
    /// The object's size in bytes, when known.
    pub size: Option<u64>,
    /// The `ETag` header of a remote object.
    pub etag: Option<String>,
    /// The `Last-Modified` header of a remote object.
    pub last_modified: Option<String>,
}

/// A shorthand for results whose error is [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// A seekable byte source with a known size, taking the reader's [`Hints`].
///
/// Implementations keep their own position. `read` returns `Ok(0)` only at the end of the object.
pub trait Backend: Hints + Send {
    /// Reads up to `buf.len()` bytes at the current position and advances it.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize>;

    /// Moves the position to `pos` (which may lie past the end; reads there return 0 bytes).
    fn seek(&mut self, pos: u64) -> Result<()>;

    /// The current position.
    fn position(&self) -> u64;

    /// The size of the object in bytes.
    fn size(&mut self) -> Result<u64>;

    /// The last `len` bytes of the object (all of it if smaller). The position is unchanged.
    fn read_tail(&mut self, len: u64) -> Result<Vec<u8>> {
        let saved = self.position();
        let size = self.size()?;
        let start = size.saturating_sub(len);
        self.seek(start)?;
        let mut out = vec![0u8; (size - start) as usize];
        let mut done = 0;
        while done < out.len() {
            let n = self.read(&mut out[done..])?;
            if n == 0 {
                break;
            }
            done += n;
        }
        out.truncate(done);
        self.seek(saved)?;
        Ok(out)
    }

    /// What is known about the object so far (a remote backend learns it from responses).
    fn object_info(&mut self) -> ObjectInfo {
        ObjectInfo {
            size: self.size().ok(),
            ..ObjectInfo::default()
        }
    }

    /// What the object is now, as its server tells it: a remote backend waits for a response
    /// already on its way, or asks for one byte, so that the answer is fresh (the validation of
    /// cached copies rides on it).
    fn probe(&mut self) -> Result<ObjectInfo> {
        let size = self.size()?;
        Ok(ObjectInfo {
            size: Some(size),
            ..self.object_info()
        })
    }

    /// The name the user gave (path or URL), for messages.
    fn name(&self) -> &str;
}
