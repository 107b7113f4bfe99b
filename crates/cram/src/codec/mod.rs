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
        Method::Lzma => xz(data, raw_size),
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

/// An xz block as htslib's `lzma_mem_inflate` reads it: one `.xz` stream (not the older
/// `.lzma` format, whose header may ask for a 4 GiB dictionary), within the memory the
/// decoder of xz's strongest preset needs (`lzma_easy_decoder_memusage(9)`, 64 MiB and a
/// little, asked of the linked liblzma as the figure differs between its versions), so a
/// hostile header cannot make the decoder allocate more. Like htslib, a stream cut short after
/// its data (no index or footer) gives what it decoded; the block's size is checked after.
fn xz(data: &[u8], raw_size: usize) -> Result<Vec<u8>, String> {
    // SAFETY: a pure function of its argument, with no pointers.
    let memlimit = unsafe { liblzma_sys::lzma_easy_decoder_memusage(9) };
    let stream = liblzma::stream::Stream::new_stream_decoder(memlimit, 0)
        .map_err(|e| format!("xz stream: {e}"))?;
    let decoder = liblzma::read::XzDecoder::new_stream(data, stream);
    read_all(CutIsEnd(decoder), raw_size, "xz")
}

/// A reader whose "unexpected end of input" is its end: what htslib's one `LZMA_FINISH` makes of
/// an xz stream cut short (whatever came out is kept, and the block's size judges it).
struct CutIsEnd<R>(R);

impl<R: Read> Read for CutIsEnd<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.0.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(0),
            other => other,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::decode;
    use crate::block::Method;

    #[test]
    fn xz_as_htslib_reads_it() {
        // `lzma.compress(b"hello, cram", format=FORMAT_XZ, check=CHECK_CRC32)`.
        let xz = [
            253, 55, 122, 88, 90, 0, 0, 1, 105, 34, 222, 54, 2, 0, 33, 1, 22, 0, 0, 0, 116, 47,
            229, 163, 1, 0, 10, 104, 101, 108, 108, 111, 44, 32, 99, 114, 97, 109, 0, 0, 116, 187,
            31, 118, 0, 1, 31, 11, 61, 98, 14, 122, 144, 66, 153, 13, 1, 0, 0, 0, 0, 1, 89, 90,
        ];
        assert_eq!(decode(Method::Lzma, &xz, 11).unwrap(), b"hello, cram");
        assert!(decode(Method::Lzma, &xz, 10).is_err(), "more than declared");
        // Cut short after its data (no index, no footer): what it decoded, as in htslib.
        assert_eq!(decode(Method::Lzma, &xz[..40], 11).unwrap(), b"hello, cram");
        // The same as an old `.lzma` file: htslib's stream decoder refuses the format.
        let alone = [
            93, 0, 0, 128, 0, 255, 255, 255, 255, 255, 255, 255, 255, 0, 52, 25, 73, 238, 141, 239,
            140, 105, 38, 185, 84, 110, 84, 2, 156, 255, 253, 156, 48, 0,
        ];
        assert!(decode(Method::Lzma, &alone, 11).is_err());
        // The fuzzer's find: an `.lzma` header asking for a dictionary of 4 GiB, which the
        // automatic decoder allocated. Now an error, allocating nothing of the kind.
        let mut hostile = vec![161, 49];
        hostile.resize(100, 255);
        assert!(decode(Method::Lzma, &hostile, 11).is_err());
        // The `.xz` above with its block header (and that header's CRC) rewritten to ask for a
        // 4 GiB dictionary: past htslib's memory limit, so refused before allocating it.
        let mut big = xz;
        big[16] = 40;
        big[20..24].copy_from_slice(&[230, 160, 17, 179]);
        let e = decode(Method::Lzma, &big, 11).unwrap_err();
        assert!(e.contains("limit"), "{e}");
    }
}
