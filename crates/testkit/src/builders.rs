//! BGZF and BAM builders for tests, written from the SAM/BAM specification with flate2 and no
//! code of the crates under test, so a fixture never shares a bug with the reader it checks.
//! They also write what no good writer would (hostile lengths, odd block boundaries).
//!
//! ```
//! use testkit::builders::{bgzf, BamBuilder, Rec};
//! let bam = BamBuilder::new(b"@HD\tVN:1.6\n", &[("chr1", 1000)])
//!     .record(&Rec { name: "r1", pos: 99, cigar: "10M", seq: "ACGTACGTAC", ..Rec::default() })
//!     .bytes();
//! let file = bgzf(&bam, 65280);
//! assert_eq!(&file[file.len() - 28..], &testkit::builders::EOF_MARKER);
//! ```

use std::io::Write;

use flate2::write::DeflateEncoder;
use flate2::{Compression, Crc};

/// The 28-byte empty block that ends a BGZF file.
pub const EOF_MARKER: [u8; 28] = [
    0x1f, 0x8b, 0x08, 0x04, 0, 0, 0, 0, 0, 0xff, 0x06, 0, b'B', b'C', 0x02, 0, 0x1b, 0, 0x03, 0, 0,
    0, 0, 0, 0, 0, 0, 0,
];

/// One BGZF block holding `data` (at most 65280 bytes, so that it always fits).
pub fn bgzf_block(data: &[u8]) -> Vec<u8> {
    assert!(
        data.len() <= 0xff00,
        "a BGZF block holds at most 65280 bytes"
    );
    let mut enc = DeflateEncoder::new(Vec::new(), Compression::default());
    // Writing to a Vec cannot fail.
    let _ = enc.write_all(data);
    let deflated = enc.finish().unwrap_or_default();
    let mut crc = Crc::new();
    crc.update(data);
    let total = 18 + deflated.len() + 8;
    let mut block = Vec::with_capacity(total);
    block.extend_from_slice(&[
        0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0,
    ]);
    block.extend_from_slice(&((total - 1) as u16).to_le_bytes());
    block.extend_from_slice(&deflated);
    block.extend_from_slice(&crc.sum().to_le_bytes());
    block.extend_from_slice(&(data.len() as u32).to_le_bytes());
    block
}

/// `data` as BGZF blocks of at most `block_data` bytes each, then the EOF marker.
pub fn bgzf(data: &[u8], block_data: usize) -> Vec<u8> {
    bgzf_split(data, &chunk_ends(data.len(), block_data.clamp(1, 0xff00)))
}

/// `data` as BGZF blocks ending at the given offsets (ascending; the last block runs to the end
/// of the data), then the EOF marker: for block boundaries in awkward places.
pub fn bgzf_split(data: &[u8], ends: &[usize]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut start = 0;
    for &end in ends.iter().chain(std::iter::once(&data.len())) {
        let end = end.min(data.len());
        if end > start {
            out.extend_from_slice(&bgzf_block(&data[start..end]));
            start = end;
        }
    }
    out.extend_from_slice(&EOF_MARKER);
    out
}

fn chunk_ends(len: usize, step: usize) -> Vec<usize> {
    (1..).map(|i| i * step).take_while(|&e| e < len).collect()
}

/// One alignment record, in SAM terms (0-based `pos`).
#[derive(Debug, Clone)]
pub struct Rec<'a> {
    pub name: &'a str,
    pub flag: u16,
    /// -1: unmapped, no reference.
    pub ref_id: i32,
    pub pos: i32,
    pub mapq: u8,
    /// SAM CIGAR text (`*` or empty for none; `B`, a backward skip, as operation 9).
    pub cigar: &'a str,
    pub next_ref_id: i32,
    pub next_pos: i32,
    pub tlen: i32,
    /// SAM SEQ text (`*` or empty for none).
    pub seq: &'a str,
    /// Phred qualities; `None`: missing (0xff bytes).
    pub qual: Option<Vec<u8>>,
    /// Aux data, already in BAM binary form.
    pub aux: Vec<u8>,
}

impl Default for Rec<'_> {
    fn default() -> Self {
        Rec {
            name: "r",
            flag: 0,
            ref_id: 0,
            pos: 0,
            mapq: 60,
            cigar: "",
            next_ref_id: -1,
            next_pos: -1,
            tlen: 0,
            seq: "",
            qual: None,
            aux: Vec::new(),
        }
    }
}

fn cigar_ops(cigar: &str) -> Vec<u32> {
    let mut ops = Vec::new();
    let mut n = 0u32;
    for c in cigar.bytes() {
        if c.is_ascii_digit() {
            n = n * 10 + u32::from(c - b'0');
        } else if let Some(op) = b"MIDNSHP=XB".iter().position(|&o| o == c) {
            ops.push(n << 4 | op as u32);
            n = 0;
        }
    }
    ops
}

/// The end (exclusive) of a record on the reference: pos + the M/D/N/=/X lengths (at least 1).
fn ref_end(pos: i32, ops: &[u32]) -> i64 {
    let len: i64 = ops
        .iter()
        .filter(|o| matches!(*o & 0xf, 0 | 2 | 3 | 7 | 8))
        .map(|o| i64::from(o >> 4))
        .sum();
    i64::from(pos) + len.max(1)
}

/// The BAI/CSI bin of `[beg, end)` with 14-bit minimum bins and 5 levels (SAM spec 5.3).
///
/// The one copy outside `index::binning`: the test kit depends on no crate under test (so a bug
/// there cannot hide behind the same bug in its fixtures), and index's tests check the two agree
/// (`crates/index/tests/binning.rs`).
pub fn reg2bin(beg: i64, end: i64) -> u32 {
    let end = end - 1;
    for (shift, offset) in [(14, 4681), (17, 585), (20, 73), (23, 9), (26, 1)] {
        if beg >> shift == end >> shift {
            return (offset + (beg >> shift)) as u32;
        }
    }
    0
}

/// The bytes of one record, `block_size` included.
pub fn record_bytes(r: &Rec) -> Vec<u8> {
    let ops = if r.cigar == "*" {
        Vec::new()
    } else {
        cigar_ops(r.cigar)
    };
    let seq = if r.seq == "*" { "" } else { r.seq };
    let mut d = Vec::new();
    let bin = if r.pos >= 0 {
        reg2bin(i64::from(r.pos), ref_end(r.pos, &ops))
    } else {
        4680
    };
    d.extend_from_slice(&r.ref_id.to_le_bytes());
    d.extend_from_slice(&r.pos.to_le_bytes());
    d.push((r.name.len() + 1) as u8);
    d.push(r.mapq);
    d.extend_from_slice(&(bin as u16).to_le_bytes());
    d.extend_from_slice(&(ops.len() as u16).to_le_bytes());
    d.extend_from_slice(&r.flag.to_le_bytes());
    d.extend_from_slice(&(seq.len() as u32).to_le_bytes());
    d.extend_from_slice(&r.next_ref_id.to_le_bytes());
    d.extend_from_slice(&r.next_pos.to_le_bytes());
    d.extend_from_slice(&r.tlen.to_le_bytes());
    d.extend_from_slice(r.name.as_bytes());
    d.push(0);
    for op in &ops {
        d.extend_from_slice(&op.to_le_bytes());
    }
    let code = |c: u8| {
        b"=ACMGRSVTWYHKDBN"
            .iter()
            .position(|&b| b == c.to_ascii_uppercase())
            .unwrap_or(15) as u8
    };
    for pair in seq.as_bytes().chunks(2) {
        let hi = code(pair[0]) << 4;
        let lo = pair.get(1).map_or(0, |&c| code(c));
        d.push(hi | lo);
    }
    match &r.qual {
        Some(q) => d.extend_from_slice(q),
        None => d.extend(std::iter::repeat_n(0xff, seq.len())),
    }
    d.extend_from_slice(&r.aux);
    let mut out = (d.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&d);
    out
}

/// An uncompressed BAM stream: magic, header text, references, records.
#[derive(Debug, Clone, Default)]
pub struct BamBuilder {
    text: Vec<u8>,
    refs: Vec<(String, u32)>,
    body: Vec<u8>,
}

impl BamBuilder {
    /// A header with `text` and the references `(name, length)`.
    pub fn new(text: &[u8], refs: &[(&str, u32)]) -> BamBuilder {
        BamBuilder {
            text: text.to_vec(),
            refs: refs.iter().map(|(n, l)| (n.to_string(), *l)).collect(),
            body: Vec::new(),
        }
    }

    /// Appends a record.
    pub fn record(mut self, r: &Rec) -> BamBuilder {
        self.body.extend_from_slice(&record_bytes(r));
        self
    }

    /// Appends raw bytes after the records so far (a hostile record, say).
    pub fn raw(mut self, bytes: &[u8]) -> BamBuilder {
        self.body.extend_from_slice(bytes);
        self
    }

    /// The header part alone: magic, `l_text`, text, `n_ref`, references.
    pub fn header_bytes(&self) -> Vec<u8> {
        let mut h = b"BAM\x01".to_vec();
        h.extend_from_slice(&(self.text.len() as u32).to_le_bytes());
        h.extend_from_slice(&self.text);
        h.extend_from_slice(&(self.refs.len() as u32).to_le_bytes());
        for (name, len) in &self.refs {
            h.extend_from_slice(&(name.len() as u32 + 1).to_le_bytes());
            h.extend_from_slice(name.as_bytes());
            h.push(0);
            h.extend_from_slice(&len.to_le_bytes());
        }
        h
    }

    /// The whole uncompressed stream.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = self.header_bytes();
        out.extend_from_slice(&self.body);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::MultiGzDecoder;
    use std::io::Read;

    #[test]
    fn blocks_inflate_back_with_an_independent_decoder() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let file = bgzf(&data, 65280);
        let mut back = Vec::new();
        MultiGzDecoder::new(&file[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, data);
        // BSIZE walks the blocks exactly to the end.
        let (mut at, mut blocks) = (0usize, 0);
        while at < file.len() {
            at += usize::from(u16::from_le_bytes([file[at + 16], file[at + 17]])) + 1;
            blocks += 1;
        }
        assert_eq!((at, blocks), (file.len(), 5));
    }

    #[test]
    fn split_points_are_kept() {
        let file = bgzf_split(b"abcdefgh", &[1, 3, 3, 7]);
        let mut sizes = Vec::new();
        let mut at = 0usize;
        while at < file.len() {
            let next = at + usize::from(u16::from_le_bytes([file[at + 16], file[at + 17]])) + 1;
            sizes.push(u32::from_le_bytes([
                file[next - 4],
                file[next - 3],
                file[next - 2],
                file[next - 1],
            ]));
            at = next;
        }
        assert_eq!(sizes, vec![1, 2, 4, 1, 0]);
    }

    #[test]
    fn record_layout_follows_the_spec() {
        let r = Rec {
            name: "q",
            pos: 16383,
            cigar: "2M1I1M",
            seq: "ACGTN",
            qual: Some(vec![30; 5]),
            ..Rec::default()
        };
        let b = record_bytes(&r);
        let block_size = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
        assert_eq!(block_size, b.len() - 4);
        assert_eq!(block_size, 32 + 2 + 3 * 4 + 3 + 5);
        // bin of [16383, 16386): spans two 16 kbp bins, so the 128 kbp level.
        assert_eq!(u16::from_le_bytes([b[14], b[15]]), 585);
        assert_eq!(&b[36..38], b"q\0");
        assert_eq!(&b[50..53], &[0x12, 0x48, 0xf0]);
    }
}
