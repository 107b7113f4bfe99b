//! The BGZF block parser: the fixed header and extra subfields of every block, the raw block
//! walk ([`bgzf::Blocks`]) and inflating each block with its CRC32 and ISIZE checks.
#![no_main]

use std::io::Cursor;

use bgzf::block::{self, FIXED_HEADER_LEN, MAX_BLOCK_SIZE};
use libfuzzer_sys::fuzz_target;

/// `Cursor` as a BGZF source (the trait's hints are optional).
struct Bytes(Cursor<Vec<u8>>);

impl std::io::Read for Bytes {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(b)
    }
}

impl std::io::Seek for Bytes {
    fn seek(&mut self, p: std::io::SeekFrom) -> std::io::Result<u64> {
        self.0.seek(p)
    }
}

impl hfile::Hints for Bytes {}
impl bgzf::Source for Bytes {}

fuzz_target!(|data: &[u8]| {
    // The pure header checks on the first bytes.
    let _ = block::is_bgzf_header(data);
    let _ = block::is_plain_gzip(data, data.get(FIXED_HEADER_LEN..));
    if let Some(fixed) = data
        .get(..FIXED_HEADER_LEN)
        .and_then(|b| <&[u8; FIXED_HEADER_LEN]>::try_from(b).ok())
    {
        if let Ok(xlen) = block::parse_fixed_header(fixed, "fuzz", 0) {
            if let Some(extra) = data.get(FIXED_HEADER_LEN..FIXED_HEADER_LEN + xlen) {
                if let Ok(size) = block::block_size(extra, "fuzz", 0) {
                    assert!(size <= MAX_BLOCK_SIZE, "block size {size} past the maximum");
                }
            }
        }
    }
    // Every block the walk finds, inflated.
    let mut decompressor = libdeflater::Decompressor::new();
    let mut out = Vec::new();
    let mut last = None;
    for raw in bgzf::Blocks::new(Bytes(Cursor::new(data.to_vec())), "fuzz", 0).take(4096) {
        let Ok(raw) = raw else { break };
        assert!(raw.bytes().len() <= MAX_BLOCK_SIZE);
        assert!(last.is_none_or(|l| raw.coffset() > l), "blocks go forward");
        last = Some(raw.coffset());
        let _ = raw.payload();
        let _ = raw.isize();
        if raw
            .inflate_into(&mut decompressor, &mut out, "fuzz")
            .is_ok()
        {
            assert_eq!(out.len(), raw.isize() as usize, "ISIZE checked");
            assert!(out.len() <= MAX_BLOCK_SIZE);
        }
    }
});
