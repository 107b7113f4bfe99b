//! Test support: a minimal BAM walker (BGZF blocks inflated with flate2, records located by
//! virtual offset) and a simulation of htslib's `hts_itr_next`, so that the chunks an index
//! gives can be checked against what samtools prints.

#![allow(dead_code)]

use std::io::Read;
use std::path::PathBuf;

use index::{Chunk, Index};

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/conformance")
        .join(rel)
}

pub fn load_index(rel: &str) -> Index {
    match index::read(fixture(rel)) {
        Ok(i) => i,
        Err(e) => panic!("{rel}: {e}"),
    }
}

/// samtools' end for a region without one (`HTS_POS_MAX`).
pub const HTS_POS_MAX: u64 = 0x7FFF_FFFF_7FFF_FFFF;

#[derive(Clone, Copy, Debug)]
pub struct Rec {
    pub vo: u64,
    pub tid: i32,
    pub pos: i64,
    pub end: i64,
}

pub struct Bam {
    pub recs: Vec<Rec>,
    /// Virtual offset just past the last record.
    pub eof: u64,
    /// The compressed offset of every BGZF block.
    pub blocks: Vec<u64>,
    pub size: u64,
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

pub fn load_bam(rel: &str) -> Bam {
    let bytes = std::fs::read(fixture(rel)).unwrap();
    // (coffset, ustart, ulen) of each block
    let mut blocks = Vec::new();
    let mut data = Vec::new();
    let mut p = 0usize;
    while p < bytes.len() {
        assert_eq!(&bytes[p..p + 2], &[0x1f, 0x8b], "{rel}: gzip magic at {p}");
        let xlen = u16::from_le_bytes([bytes[p + 10], bytes[p + 11]]) as usize;
        let mut q = p + 12;
        let mut bsize = None;
        while q < p + 12 + xlen {
            let slen = u16::from_le_bytes([bytes[q + 2], bytes[q + 3]]) as usize;
            if bytes[q] == 66 && bytes[q + 1] == 67 {
                bsize = Some(u16::from_le_bytes([bytes[q + 4], bytes[q + 5]]) as usize);
            }
            q += 4 + slen;
        }
        let len = bsize.expect("BC subfield") + 1;
        let deflated = &bytes[p + 12 + xlen..p + len - 8];
        let mut out = Vec::new();
        flate2::read::DeflateDecoder::new(deflated)
            .read_to_end(&mut out)
            .unwrap();
        blocks.push((p as u64, data.len(), out.len()));
        data.extend_from_slice(&out);
        p += len;
    }
    let voffset = |u: usize| -> u64 {
        for &(c, s, l) in &blocks {
            if u >= s && u < s + l {
                return c << 16 | (u - s) as u64;
            }
        }
        let last = blocks.last().unwrap();
        assert!(u == last.1 + last.2);
        // Past the data: the EOF block (or the end of the file).
        last.0 << 16
    };
    assert_eq!(&data[..4], b"BAM\x01");
    let l_text = le32(&data, 4) as usize;
    let mut u = 8 + l_text;
    let n_ref = le32(&data, u) as usize;
    u += 4;
    for _ in 0..n_ref {
        let l_name = le32(&data, u) as usize;
        u += 8 + l_name;
    }
    let mut recs = Vec::new();
    while u < data.len() {
        let block_size = le32(&data, u) as usize;
        let r = &data[u + 4..u + 4 + block_size];
        let tid = le32(r, 0) as i32;
        let pos = i64::from(le32(r, 4) as i32);
        let l_read_name = r[8] as usize;
        let n_cigar = u16::from_le_bytes([r[12], r[13]]) as usize;
        let flag = u16::from_le_bytes([r[14], r[15]]);
        let mut rlen = 0i64;
        if flag & 4 == 0 {
            for k in 0..n_cigar {
                let op = le32(r, 32 + l_read_name + 4 * k);
                if matches!(op & 15, 0 | 2 | 3 | 7 | 8) {
                    rlen += i64::from(op >> 4);
                }
            }
        }
        if rlen == 0 {
            rlen = 1;
        }
        recs.push(Rec {
            vo: voffset(u),
            tid,
            pos,
            end: pos + rlen,
        });
        u += 4 + block_size;
    }
    Bam {
        recs,
        eof: voffset(data.len()),
        blocks: blocks.iter().map(|b| b.0).collect(),
        size: bytes.len() as u64,
    }
}

impl Bam {
    fn seek(&self, vo: u64) -> usize {
        if vo == self.eof {
            return self.recs.len();
        }
        let i = self.recs.partition_point(|r| r.vo < vo);
        assert!(
            i < self.recs.len() && self.recs[i].vo == vo,
            "seek to {}:{} which is not a record start",
            vo >> 16,
            vo & 0xffff
        );
        i
    }

    fn next_vo(&self, i: usize) -> u64 {
        self.recs.get(i + 1).map_or(self.eof, |r| r.vo)
    }

    /// The records htslib's `hts_itr_next` returns for a region iterator over `chunks`.
    pub fn iterate(&self, chunks: &[Chunk], tid: i32, beg: i64, end: i64) -> Vec<usize> {
        self.walk(chunks, tid, beg, end).0
    }

    /// Every record the iterator reads (returned or not, including the one that ends it).
    pub fn visited(&self, chunks: &[Chunk], tid: i32, beg: i64, end: i64) -> Vec<usize> {
        self.walk(chunks, tid, beg, end).1
    }

    /// The byte range a record occupies, its last block read whole (`blocks` and `size` give
    /// the block ends).
    pub fn record_bytes(&self, i: usize) -> (u64, u64) {
        let start = self.recs[i].vo >> 16;
        let next = self.next_vo(i);
        let (c, u) = (next >> 16, next & 0xffff);
        let end = if u == 0 {
            c
        } else {
            let j = self.blocks.partition_point(|&b| b <= c);
            self.blocks.get(j).copied().unwrap_or(self.size)
        };
        (start, end.max(start))
    }

    fn walk(&self, chunks: &[Chunk], tid: i32, beg: i64, end: i64) -> (Vec<usize>, Vec<usize>) {
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let mut i: isize = -1;
        let mut curr: u64 = 0;
        let mut at = 0usize;
        loop {
            if curr == 0 || curr >= chunks[i as usize].end.raw() {
                if i == chunks.len() as isize - 1 {
                    break;
                }
                let next = chunks[(i + 1) as usize];
                if i < 0 || chunks[i as usize].end != next.start {
                    at = self.seek(next.start.raw());
                }
                i += 1;
            }
            let Some(r) = self.recs.get(at) else { break };
            curr = self.next_vo(at);
            let idx = at;
            at += 1;
            seen.push(idx);
            if r.tid != tid || r.pos >= end {
                break;
            } else if r.end > beg && end > r.pos {
                out.push(idx);
            }
        }
        (out, seen)
    }

    /// The records read for the region `*`: everything from `start` on (from the first
    /// record when htslib's start offset is 0, since it then does not seek).
    pub fn iterate_rest(&self, start: u64) -> Vec<usize> {
        let from = if start == 0 { 0 } else { self.seek(start) };
        (from..self.recs.len()).collect()
    }
}
