//! Every CRAM block codec on arbitrary bytes: the input is a method byte (0-8: raw, gzip,
//! bzip2, xz, rANS 4x8, rANS Nx16, the arithmetic coder, fqzcomp, the name tokeniser), a raw
//! size (u32 LE, capped at 1 MiB to keep each run short) and the stored bytes. The seeds are
//! the blocks of fixtures/cram, which hold each method.
#![no_main]

use cram::{Block, ContentType, Method};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&m, rest)) = data.split_first() else {
        return;
    };
    let Ok(method) = Method::from_byte(m, 0) else {
        return;
    };
    let Some((size, bytes)) = rest.split_first_chunk::<4>() else {
        return;
    };
    let raw_size = (u32::from_le_bytes(*size) as usize) & ((1 << 20) - 1);
    let b = Block {
        method,
        content_type: ContentType::External,
        content_id: 1,
        raw_size,
        data: bytes,
        offset: 0,
    };
    if let Ok(out) = b.decode() {
        assert_eq!(out.len(), raw_size, "decoded size as declared");
    }
});
