//! A slice whose values are coded in no bits (one-symbol Huffman codes) makes records for
//! nothing: its records must be refused once they pass what its few bytes could code, not
//! allocated until memory runs out.

use std::collections::BTreeMap;

use cram::num::Cursor;
use cram::record::read_slice;
use cram::series::{Bits, Streams};
use cram::{CompressionHeader, Encoding, SliceHeader};

/// A code of no bits that always gives `value`.
fn constant(value: i32) -> Encoding {
    Encoding::Huffman {
        symbols: vec![value],
        lengths: vec![0],
    }
}

fn header(read_length: i32, quality_array: bool) -> CompressionHeader {
    let mut series = BTreeMap::new();
    // Unmapped, no bases stored; qualities stored as an array if asked.
    series.insert(*b"BF", constant(0x4));
    series.insert(
        *b"CF",
        constant(if quality_array { 0x1 | 0x8 } else { 0x8 }),
    );
    series.insert(*b"RL", constant(read_length));
    series.insert(*b"AP", constant(0));
    series.insert(*b"RG", constant(-1));
    series.insert(*b"TL", constant(0));
    series.insert(*b"QS", constant(30));
    CompressionHeader {
        read_names: false,
        ap_delta: true,
        reference_required: false,
        substitution: [[0; 4]; 5],
        tag_lines: vec![Vec::new()],
        series,
        tags: BTreeMap::new(),
    }
}

fn slice(records: i32) -> SliceHeader {
    SliceHeader {
        reference_id: -1,
        start: 0,
        span: 0,
        records,
        record_counter: 0,
        blocks: 1,
        content_ids: Vec::new(),
        embedded_reference: -1,
        reference_md5: [0; 16],
        tags: Vec::new(),
    }
}

fn read(ch: &CompressionHeader, sh: &SliceHeader) -> Result<usize, cram::Error> {
    let core = [0u8; 16];
    let mut s = Streams::new(
        Bits::new(&core, 1000),
        std::iter::empty::<(i32, Cursor<'_>)>(),
    );
    read_slice(ch, sh, &mut s).map(|stored| stored.records.len())
}

#[test]
fn qualities_coded_in_no_bits_past_the_slice_s_budget_are_refused() {
    // 10,000 reads of 200 Mbases, each with its qualities: 2 TB asked of a 16-byte slice.
    let err = read(&header(200_000_000, true), &slice(10_000)).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("more than its data can code"), "{text}");
    assert!(text.contains("1000"), "names the slice's offset: {text}");
}

#[test]
fn records_coded_in_no_bits_past_the_slice_s_budget_are_refused() {
    // A billion empty records: each one costs memory even with no bases or qualities.
    let err = read(&header(0, false), &slice(1_000_000_000)).unwrap_err();
    assert!(
        err.to_string().contains("more than its data can code"),
        "{err}"
    );
}

#[test]
fn a_modest_slice_coded_in_no_bits_is_read() {
    // What a real file might do (all reads alike, qualities constant) stays within the bound.
    assert_eq!(read(&header(150, true), &slice(10_000)), Ok(10_000));
}
