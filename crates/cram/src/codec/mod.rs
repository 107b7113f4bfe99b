//! Block codecs: the general-purpose compressors through well-kept crates (flate2, bzip2,
//! liblzma) and CRAM's own entropy coders written here from the CRAMcodecs specification.

mod arith;
mod bytes;
mod fqzcomp;
mod range;
mod rans4x8;
mod rans_nx16;
mod slots;
mod table12;
mod tokeniser;
mod transform;

use std::io::Read;

use crate::block::Method;

/// Decodes `data` compressed with `method` into exactly `raw_size` bytes (more is an error,
/// so a hostile stream cannot grow past what its block declares).
pub fn decode(method: Method, data: &[u8], raw_size: usize) -> Result<Vec<u8>, String> {
    match method {
        Method::Raw => Ok(data.to_vec()),
        Method::Gzip => gzip(data, raw_size),
        Method::Bzip2 => read_all(bzip2::read::MultiBzDecoder::new(data), raw_size, "bzip2"),
        Method::Lzma => read_all(
            liblzma::read::XzDecoder::new_multi_decoder(data),
            raw_size,
            "xz",
        ),
        Method::Rans4x8 => rans4x8::decode(data, raw_size),
        Method::RansNx16 => rans_nx16::decode(data, raw_size),
        Method::Arith => arith::decode(data, raw_size),
        Method::Fqzcomp => fqzcomp::decode(data, raw_size),
        Method::NameTokeniser => tokeniser::decode(data, raw_size),
    }
}

/// A gzip block: libdeflate (what Debian's htslib inflates with) into exactly `raw_size` bytes
/// for the one-member stream samtools writes, else flate2 read to the end (several members, or
/// a damaged stream, whose error it names).
fn gzip(data: &[u8], raw_size: usize) -> Result<Vec<u8>, String> {
    thread_local! {
        static INFLATE: std::cell::RefCell<libdeflater::Decompressor> =
            std::cell::RefCell::new(libdeflater::Decompressor::new());
    }
    let mut out = vec![0u8; raw_size];
    let whole = INFLATE.with(|d| d.borrow_mut().gzip_decompress(data, &mut out));
    if matches!(whole, Ok(n) if n == raw_size) {
        return Ok(out);
    }
    read_all(flate2::read::MultiGzDecoder::new(data), raw_size, "gzip")
}

/// Reads a decoder to its end, refusing output beyond `raw_size`.
fn read_all(r: impl Read, raw_size: usize, what: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(raw_size);
    let limit = raw_size as u64 + 1;
    r.take(limit)
        .read_to_end(&mut out)
        .map_err(|e| format!("{what} stream: {e}"))?;
    if out.len() > raw_size {
        return Err(format!(
            "{what} stream holds more than the declared {raw_size} bytes"
        ));
    }
    Ok(out)
}
