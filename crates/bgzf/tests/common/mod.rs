// Shared helpers for the integration tests (each test file includes this with `mod common;`).
#![allow(dead_code)]

use std::path::PathBuf;

use bgzf::{Reader, VirtualOffset};
use hfile::HFile;

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/conformance")
        .join(rel)
}

pub fn fixture_bytes(rel: &str) -> Vec<u8> {
    let path = fixture(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn open_fixture(rel: &str) -> Reader {
    Reader::new(HFile::from_bytes(rel, fixture_bytes(rel))).unwrap()
}

/// Deterministic, poorly compressible bytes.
pub fn noise(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

/// A BGZF file whose blocks hold exactly `sizes` bytes each (0 gives an empty block in the
/// middle, as some writers emit), then the EOF marker. Returns the file, the data, and each
/// block's start offset (the EOF marker's included).
pub fn blocks_file(sizes: &[usize]) -> (Vec<u8>, Vec<u8>, Vec<u64>) {
    let total: usize = sizes.iter().sum();
    let data = noise(total, 7);
    let mut compressor = libdeflater::Compressor::default();
    let mut file = Vec::new();
    let mut starts = Vec::new();
    let mut at = 0;
    for &n in sizes {
        starts.push(file.len() as u64);
        assert!(bgzf::block::deflate(
            &data[at..at + n],
            &mut compressor,
            &mut file
        ));
        at += n;
    }
    starts.push(file.len() as u64);
    file.extend_from_slice(&bgzf::block::EOF_MARKER);
    assert_eq!(walk_blocks(&file), starts);
    (file, data, starts)
}

/// The start offset of every block, by BSIZE.
pub fn walk_blocks(file: &[u8]) -> Vec<u64> {
    let mut off = 0usize;
    let mut starts = Vec::new();
    while off < file.len() {
        starts.push(off as u64);
        off += u16::from_le_bytes([file[off + 16], file[off + 17]]) as usize + 1;
    }
    starts
}

pub fn read_all(r: &mut Reader) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 10_000];
    loop {
        let n = r.read_data(&mut buf).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Reads everything in reads of at most `step` bytes, recording the virtual offset before each
/// read and the position in the data it corresponds to.
pub fn offsets_and_data(r: &mut Reader, step: usize) -> (Vec<(VirtualOffset, usize)>, Vec<u8>) {
    let mut offsets = Vec::new();
    let mut out = Vec::new();
    let mut buf = vec![0u8; step];
    loop {
        offsets.push((r.virtual_offset(), out.len()));
        let n = r.read_data(&mut buf).unwrap();
        if n == 0 {
            return (offsets, out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

pub fn gzip_dc(rel: &str) -> Vec<u8> {
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(fixture(rel))
        .output()
        .expect("gzip must be installed to run this test");
    assert!(out.status.success(), "gzip -dc {rel} failed");
    out.stdout
}

/// Reads until `buf` is full or the stream ends; returns how many bytes were read.
pub fn read_n(r: &mut Reader, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        let n = r.read_data(&mut buf[got..]).unwrap();
        if n == 0 {
            break;
        }
        got += n;
    }
    got
}
