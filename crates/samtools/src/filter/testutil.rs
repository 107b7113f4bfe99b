//! Records and headers built in memory for the filter tests: the fields as the tests like to
//! write them, encoded by `testkit::builders`.

use bam::header::{Header, Reference};
use bam::Record;

/// The fields of one record, to be encoded and decoded.
#[derive(Clone)]
pub(crate) struct Rec {
    pub ref_id: i32,
    pub pos: i32,
    pub mapq: u8,
    pub flag: u16,
    pub next_ref_id: i32,
    pub next_pos: i32,
    pub tlen: i32,
    pub name: Vec<u8>,
    pub cigar: Vec<(u32, u8)>,
    pub seq: Vec<u8>,
    pub qual: Vec<u8>,
    pub aux: Vec<u8>,
}

impl Default for Rec {
    fn default() -> Rec {
        Rec {
            ref_id: 0,
            pos: 99,
            mapq: 30,
            flag: 0,
            next_ref_id: -1,
            next_pos: -1,
            tlen: 0,
            name: b"read1".to_vec(),
            cigar: vec![(2, 4), (6, 0)],
            seq: b"ACGTACGT".to_vec(),
            qual: vec![30, 31, 32, 33, 34, 35, 36, 37],
            aux: Vec::new(),
        }
    }
}

impl Rec {
    /// The record's bytes after `block_size`, by the test kit's builder.
    pub fn bytes(&self) -> Vec<u8> {
        let cigar: String = self
            .cigar
            .iter()
            .map(|&(len, op)| format!("{len}{}", char::from(b"MIDNSHP=XB"[usize::from(op)])))
            .collect();
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).expect("ASCII test fields");
        let (name, seq) = (text(&self.name), text(&self.seq));
        let rec = testkit::builders::Rec {
            name: &name,
            flag: self.flag,
            ref_id: self.ref_id,
            pos: self.pos,
            mapq: self.mapq,
            cigar: &cigar,
            next_ref_id: self.next_ref_id,
            next_pos: self.next_pos,
            tlen: self.tlen,
            seq: &seq,
            qual: Some(self.qual.clone()),
            aux: self.aux.clone(),
        };
        testkit::builders::record_bytes(&rec)[4..].to_vec()
    }

    pub fn record(&self) -> Record {
        Record::decode(self.bytes(), 3).expect("test record")
    }

    pub fn tag_z(mut self, tag: &[u8; 2], value: &[u8]) -> Rec {
        self.aux.extend_from_slice(tag);
        self.aux.push(b'Z');
        self.aux.extend_from_slice(value);
        self.aux.push(0);
        self
    }

    pub fn tag_i(mut self, tag: &[u8; 2], ty: u8, value: i64) -> Rec {
        self.aux.extend_from_slice(tag);
        self.aux.push(ty);
        match ty {
            b'c' | b'C' | b'A' => self.aux.push(value as u8),
            b's' | b'S' => self.aux.extend_from_slice(&(value as u16).to_le_bytes()),
            _ => self.aux.extend_from_slice(&(value as u32).to_le_bytes()),
        }
        self
    }

    pub fn tag_f(mut self, tag: &[u8; 2], value: f32) -> Rec {
        self.aux.extend_from_slice(tag);
        self.aux.push(b'f');
        self.aux.extend_from_slice(&value.to_le_bytes());
        self
    }

    pub fn tag_b(mut self, tag: &[u8; 2], values: &[u8]) -> Rec {
        self.aux.extend_from_slice(tag);
        self.aux.extend_from_slice(b"BC");
        self.aux
            .extend_from_slice(&(values.len() as u32).to_le_bytes());
        self.aux.extend_from_slice(values);
        self
    }
}

/// Three references, two read groups with libraries.
pub(crate) fn header() -> Header {
    let text = b"@HD\tVN:1.6\n@SQ\tSN:chr1\tLN:1000\n@SQ\tSN:chr2\tLN:2000\n@SQ\tSN:chr3\tLN:500\n\
@RG\tID:grpA\tLB:libA\n@RG\tID:grpB\tLB:libB\n@RG\tID:grpC\n";
    let refs = [("chr1", 1000), ("chr2", 2000), ("chr3", 500)]
        .iter()
        .map(|&(n, len)| Reference {
            name: n.as_bytes().to_vec(),
            len,
        })
        .collect();
    Header::from_parts(text.to_vec(), refs).expect("test header")
}
