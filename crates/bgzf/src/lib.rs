//! BGZF: blocked gzip as used by BAM, CSI and tabix files.
//!
//! A BGZF file is a series of gzip members ("blocks") of at most 64 KiB, each saying its own
//! compressed size, so a position in the uncompressed data can be named by a [`VirtualOffset`]:
//! the block's file offset and an offset inside its inflated data.
//!
//! - [`Reader`] reads the uncompressed data from any [`Source`] (a `Read + Seek`; by default an
//!   [`hfile::HFile`]), seeks by virtual offset, and with [`Reader::seek_limit`] tells the byte
//!   source how far a chunk's read will go (the byte end a planner computed, by the rule of
//!   [`byte_end`]). Blocks can be inflated on worker threads ([`Reader::set_threads`]) while all
//!   I/O stays on the calling thread.
//! - [`Blocks`] walks a file's raw blocks without inflating them.
//! - [`Writer`] writes BGZF with libdeflate as htslib does (block boundaries, levels), on worker
//!   threads if asked, ending with the EOF marker block.
//! - [`BlockStream`] decodes BGZF sequentially from any `std::io::Read` (a stream, no seeks),
//!   saying how many input bytes the data read so far needed.
//! - [`block`] holds the pure parsing and inflating of one block.
//! - [`gzi`] reads and writes `.gzi` indexes (block starts, for seeks by uncompressed offset).
//! - [`bgzip`] is bgzip 1.16's work on one file (compress, decompress, test, reindex).
//!
//! # Examples
//!
//! ```
//! use std::io::Write;
//! let mut w = bgzf::Writer::new(Vec::new());
//! w.write_all(b"first block").unwrap();
//! w.flush_block().unwrap();
//! let second = w.virtual_offset().unwrap();
//! w.write_all(b"second").unwrap();
//! let file = w.finish().unwrap();
//!
//! let mut r = bgzf::Reader::new(hfile::HFile::from_bytes("mem.bgz", file)).unwrap();
//! r.seek(second).unwrap();
//! let mut buf = [0u8; 6];
//! r.read_exact_data(&mut buf).unwrap();
//! assert_eq!(&buf, b"second");
//! ```

#![warn(missing_docs)]

pub mod bgzip;
mod bgzip_error;
pub mod block;
mod block_stream;
mod blocked;
mod deflate_pool;
mod error;
pub mod gzi;
mod gzip_tail;
mod input;
mod limit;
mod raw_block;
mod reader;
pub mod sniff;
mod source;
mod virtual_offset;
mod workers;
pub mod writer;

pub use block_stream::BlockStream;
pub use error::Error;
pub use limit::{byte_end, BlockStarts};
pub use raw_block::{Blocks, RawBlock};
pub use reader::{Format, Reader};
pub use source::Source;
pub use virtual_offset::VirtualOffset;
pub use writer::{BlockPosition, Writer};

/// The version of libdeflate compiled in (the one `libdeflater`'s `libdeflate-sys` bundles; a
/// test checks it against Cargo.lock).
pub const LIBDEFLATE_VERSION: &str = "1.26";

/// A shorthand for results whose error is [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod version_tests {
    /// The bundled libdeflate is `libdeflate-sys`' version without its patch number.
    #[test]
    fn libdeflate_version_matches_the_lock_file() {
        let lock = include_str!("../../../Cargo.lock");
        let at = lock
            .find("name = \"libdeflate-sys\"")
            .expect("libdeflate-sys in Cargo.lock");
        let version = lock[at..].lines().nth(1).unwrap_or_default();
        let wanted = format!("version = \"{}.", super::LIBDEFLATE_VERSION);
        assert!(version.starts_with(&wanted), "{version} vs {wanted}");
    }
}
