//! Test support: where each part of a BAI or CSI ends, found by walking the format directly (a
//! few lines, independent of the crate's parser), and the BGZF blocks of a compressed index.

#![allow(dead_code)]

use std::io::{Read, Write};

use index::Wanted;

pub struct Layout {
    /// The index stream (decompressed).
    pub data: Vec<u8>,
    /// Offset just past `n_ref`.
    pub header_end: u64,
    /// Offset just past each reference.
    pub ref_ends: Vec<u64>,
    /// Offset just past `n_no_coor`, when all 8 bytes are there.
    pub tail_end: Option<u64>,
    /// For a BGZF index: (compressed end, decompressed end) of each block.
    pub blocks: Option<Vec<(u64, u64)>>,
}

fn le32(d: &[u8], at: u64) -> u64 {
    let at = at as usize;
    u64::from(u32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]))
}

/// Splits a BGZF file into its blocks by their BSIZE fields and inflates them.
fn bgzf_blocks(bytes: &[u8]) -> (Vec<u8>, Vec<(u64, u64)>) {
    let mut data = Vec::new();
    let mut blocks = Vec::new();
    let mut p = 0usize;
    while p < bytes.len() {
        assert_eq!(&bytes[p..p + 4], &[0x1f, 0x8b, 8, 4], "BGZF header at {p}");
        let xlen = usize::from(u16::from_le_bytes([bytes[p + 10], bytes[p + 11]]));
        assert_eq!(xlen, 6, "only the BC subfield");
        let bsize = usize::from(u16::from_le_bytes([bytes[p + 16], bytes[p + 17]])) + 1;
        let mut out = Vec::new();
        flate2::read::DeflateDecoder::new(&bytes[p + 18..p + bsize - 8])
            .read_to_end(&mut out)
            .unwrap();
        data.extend_from_slice(&out);
        p += bsize;
        blocks.push((p as u64, data.len() as u64));
    }
    (data, blocks)
}

pub fn layout(bytes: &[u8]) -> Layout {
    let (data, blocks) = if bytes.starts_with(&[0x1f, 0x8b]) {
        let (d, b) = bgzf_blocks(bytes);
        (d, Some(b))
    } else {
        (bytes.to_vec(), None)
    };
    let d = &data;
    let bai = &d[..4] == b"BAI\x01";
    let mut p = if bai { 4 } else { 16 + le32(d, 12) };
    let n_ref = le32(d, p);
    p += 4;
    let header_end = p;
    let mut ref_ends = Vec::new();
    for _ in 0..n_ref {
        let n_bin = le32(d, p);
        p += 4;
        for _ in 0..n_bin {
            p += if bai { 4 } else { 12 };
            let n_chunk = le32(d, p);
            p += 4 + 16 * n_chunk;
        }
        if bai {
            let n_intv = le32(d, p);
            p += 4 + 8 * n_intv;
        }
        ref_ends.push(p);
    }
    let tail_end = (d.len() as u64 >= p + 8).then_some(p + 8);
    Layout {
        data,
        header_end,
        ref_ends,
        tail_end,
        blocks,
    }
}

impl Layout {
    pub fn n_ref(&self) -> usize {
        self.ref_ends.len()
    }

    /// Where a load of `wanted` must stop in the index stream.
    pub fn end_for(&self, wanted: &Wanted) -> u64 {
        match wanted.tids() {
            None => self
                .tail_end
                .unwrap_or(self.data.len() as u64)
                .min(self.data.len() as u64),
            Some(tids) => match tids.iter().rev().find(|&&t| t < self.n_ref()) {
                Some(&t) => self.ref_ends[t],
                None => self.header_end,
            },
        }
    }

    /// The stored bytes holding the first `consumed` bytes of the stream: the end of the BGZF
    /// block holding byte `consumed - 1`.
    pub fn input_for(&self, consumed: u64) -> u64 {
        match &self.blocks {
            None => consumed,
            Some(blocks) => blocks
                .iter()
                .find(|&&(_, uend)| uend >= consumed)
                .map(|&(cend, _)| cend)
                .unwrap(),
        }
    }
}

/// Re-compresses an index stream as BGZF with blocks of `block` bytes, so that tests see many
/// block boundaries.
pub fn rebgzf(data: &[u8], block: usize) -> Vec<u8> {
    let mut w = bgzf::Writer::new(Vec::new());
    for piece in data.chunks(block) {
        w.write_all(piece).unwrap();
        w.flush_block().unwrap();
    }
    w.finish().unwrap()
}
