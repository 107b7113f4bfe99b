//! The raw-block iterator, and the reader on sources other than `HFile`.

mod common;

use std::io::{Cursor, Write};

use bgzf::{block, Blocks, Error, Reader, VirtualOffset};
use common::{fixture, fixture_bytes, open_fixture, walk_blocks};

#[test]
fn splits_writer_output_into_its_blocks() {
    let mut w = bgzf::Writer::new(Vec::new());
    w.write_all(b"first").unwrap();
    w.flush_block().unwrap();
    w.write_all(b"second block").unwrap();
    let file = w.finish().unwrap();

    let blocks: Vec<_> = Blocks::new(Cursor::new(&file), "mem", 0)
        .collect::<Result<_, _>>()
        .unwrap();
    let sizes: Vec<u32> = blocks.iter().map(|b| b.isize()).collect();
    assert_eq!(sizes, [5, 12, 0]);
    assert_eq!(blocks[0].coffset(), 0);
    assert_eq!(blocks[1].coffset(), blocks[0].bytes().len() as u64);
    assert_eq!(blocks[2].bytes(), block::EOF_MARKER);
    let mut d = libdeflater::Decompressor::new();
    assert_eq!(blocks[1].inflate(&mut d, "mem").unwrap(), b"second block");

    // Starting at a later block.
    let from_second: Vec<_> = Blocks::new(Cursor::new(&file), "mem", blocks[1].coffset())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(from_second, blocks[1..]);
}

#[test]
fn block_offsets_match_an_independent_walk() {
    let bytes = fixture_bytes("data/rand.bam");
    let offsets: Vec<u64> = Blocks::new(Cursor::new(&bytes), "rand.bam", 0)
        .map(|b| b.unwrap().coffset())
        .collect();
    assert_eq!(offsets, walk_blocks(&bytes));
}

#[test]
fn truncated_block_is_an_error_with_its_offset() {
    let mut file = block::EOF_MARKER.to_vec();
    file.extend_from_slice(&block::EOF_MARKER[..20]);
    let mut it = Blocks::new(Cursor::new(file), "cut.bgz", 0);
    assert!(it.next().unwrap().is_ok());
    match it.next() {
        Some(Err(Error::TruncatedBlock {
            name,
            offset,
            needed,
            available,
        })) => {
            assert_eq!((name.as_str(), offset), ("cut.bgz", 28));
            assert_eq!((needed, available), (28, 20));
        }
        other => panic!("expected a truncated block, got {other:?}"),
    }
    assert!(it.next().is_none(), "the iterator stops after an error");
}

#[test]
fn reader_over_a_plain_file_reads_what_hfile_reads() {
    let path = fixture("data/rand.bam");
    let file = std::fs::File::open(&path).unwrap();
    let mut plain = Reader::with_name(std::io::BufReader::new(file), "rand.bam").unwrap();
    let mut via_hfile = open_fixture("data/rand.bam");
    let starts = walk_blocks(&fixture_bytes("data/rand.bam"));
    for &(block, u) in &[(3usize, 17u16), (1, 0), (7, 400)] {
        let at = VirtualOffset::new(starts[block], u);
        plain.seek(at).unwrap();
        via_hfile.seek(at).unwrap();
        let mut a = vec![0u8; 150_000];
        let mut b = vec![0u8; 150_000];
        plain.read_exact_data(&mut a).unwrap();
        via_hfile.read_exact_data(&mut b).unwrap();
        assert!(a == b, "different bytes from {at}");
    }
    assert!(plain.check_eof_marker().unwrap());
    assert_eq!(
        plain.size().unwrap(),
        fixture_bytes("data/rand.bam").len() as u64
    );
}

#[test]
fn io_errors_of_a_plain_source_name_the_file() {
    struct Failing;
    impl std::io::Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    impl std::io::Seek for Failing {
        fn seek(&mut self, _: std::io::SeekFrom) -> std::io::Result<u64> {
            Ok(0)
        }
    }
    impl hfile::Hints for Failing {}
    impl bgzf::Source for Failing {}
    let e = Reader::with_name(Failing, "burning.bam").unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("burning.bam") && text.contains("disk on fire"),
        "{text}"
    );
}
