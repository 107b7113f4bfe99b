//! Reader behaviour on synthetic BGZF files: virtual offsets, seeks, EOF handling, threads.

mod common;

use bgzf::{Error, Format, Reader, VirtualOffset};
use common::{blocks_file, offsets_and_data, read_all, read_n};
use hfile::HFile;

fn reader(file: &[u8]) -> Reader {
    Reader::new(HFile::from_bytes("synthetic.bgz", file.to_vec())).unwrap()
}

#[test]
fn virtual_offsets_cross_block_boundaries_like_htslib() {
    let (file, data, starts) = blocks_file(&[100, 50, 0, 70]);
    let mut r = reader(&file);
    assert_eq!(r.format(), Format::Bgzf);
    assert_eq!(r.virtual_offset(), VirtualOffset::new(0, 0));
    let mut buf = vec![0u8; 100];
    r.read_exact_data(&mut buf).unwrap();
    assert_eq!(buf, data[..100]);
    // After the last byte of a block: the next block's start, in-block offset 0.
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[1], 0));
    let mut one = [0u8; 1];
    r.read_exact_data(&mut one).unwrap();
    assert_eq!(one[0], data[100]);
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[1], 1));
    let mut rest = vec![0u8; 49];
    r.read_exact_data(&mut rest).unwrap();
    // The next block is empty; the offset names it, and reading continues past it.
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[2], 0));
    r.read_exact_data(&mut one).unwrap();
    assert_eq!(one[0], data[150]);
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[3], 1));
    let mut tail = vec![0u8; 69];
    r.read_exact_data(&mut tail).unwrap();
    assert_eq!(tail, data[151..]);
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[4], 0));
    assert!(!r.read_exact_or_eof(&mut one).unwrap());
    assert_eq!(r.read_data(&mut one).unwrap(), 0);
}

#[test]
fn read_stops_at_block_end() {
    let (file, data, _) = blocks_file(&[100, 50]);
    let mut r = reader(&file);
    let mut buf = vec![0u8; 1000];
    assert_eq!(r.read_data(&mut buf).unwrap(), 100);
    assert_eq!(r.read_data(&mut buf).unwrap(), 50);
    assert_eq!(buf[..50], data[100..]);
    assert_eq!(r.read_data(&mut buf).unwrap(), 0);
}

#[test]
fn seeks_inside_across_and_to_block_ends() {
    let (file, data, starts) = blocks_file(&[100, 50, 70]);
    let mut r = reader(&file);
    let mut b = [0u8; 3];
    // Forward to another block.
    r.seek(VirtualOffset::new(starts[1], 10)).unwrap();
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[1], 10));
    r.read_exact_data(&mut b).unwrap();
    assert_eq!(b, data[110..113]);
    // Inside the current block (backwards).
    r.seek(VirtualOffset::new(starts[1], 2)).unwrap();
    r.read_exact_data(&mut b).unwrap();
    assert_eq!(b, data[102..105]);
    // Back to an earlier block.
    r.seek(VirtualOffset::new(0, 98)).unwrap();
    r.read_exact_data(&mut b).unwrap();
    assert_eq!(b, data[98..101], "a read spanning blocks");
    // uoffset == block length: the next read starts at the following block.
    // (The current block already is that block, so the position is reported as the next block's
    // start; both name the same byte.)
    r.seek(VirtualOffset::new(starts[1], 50)).unwrap();
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[2], 0));
    r.read_exact_data(&mut b).unwrap();
    assert_eq!(b, data[150..153]);
    // The same from another block (the block is loaded on the next read).
    r.seek(VirtualOffset::new(0, 0)).unwrap();
    r.seek(VirtualOffset::new(starts[1], 50)).unwrap();
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[1], 50));
    r.read_exact_data(&mut b).unwrap();
    assert_eq!(b, data[150..153]);
    // At the end of the last data block: the end of the data.
    r.seek(VirtualOffset::new(starts[2], 70)).unwrap();
    assert_eq!(r.read_data(&mut b).unwrap(), 0);
    // Past the block's data: an error when read, naming the target.
    r.seek(VirtualOffset::new(starts[1], 51)).unwrap();
    match r.read_data(&mut b).unwrap_err() {
        Error::SeekPastBlock {
            target, block_len, ..
        } => {
            assert_eq!(target, VirtualOffset::new(starts[1], 51));
            assert_eq!(block_len, 50);
        }
        e => panic!("{e}"),
    }
    // To the EOF marker and past the end of the file.
    r.seek(VirtualOffset::new(starts[3], 0)).unwrap();
    assert_eq!(r.read_data(&mut b).unwrap(), 0);
    r.seek(VirtualOffset::new(file.len() as u64 + 1000, 0))
        .unwrap();
    assert_eq!(r.read_data(&mut b).unwrap(), 0);
    // And back to the start.
    r.seek(VirtualOffset::new(0, 0)).unwrap();
    assert_eq!(read_all(&mut r), data);
}

#[test]
fn read_exact_reports_where_data_ended() {
    let (file, _, starts) = blocks_file(&[10, 5]);
    let mut r = reader(&file);
    let mut buf = [0u8; 12];
    r.read_exact_data(&mut buf).unwrap();
    let mut more = [0u8; 4];
    match r.read_exact_data(&mut more).unwrap_err() {
        Error::UnexpectedEof {
            name,
            at,
            wanted,
            got,
        } => {
            assert_eq!(name, "synthetic.bgz");
            assert_eq!(at, VirtualOffset::new(starts[1], 2));
            assert_eq!((wanted, got), (4, 3));
        }
        e => panic!("{e}"),
    }
    // read_exact_or_eof: a partial read is still an error, a clean end is Ok(false).
    r.seek(VirtualOffset::new(starts[1], 2)).unwrap();
    assert!(matches!(
        r.read_exact_or_eof(&mut more),
        Err(Error::UnexpectedEof { got: 3, .. })
    ));
    assert!(!r.read_exact_or_eof(&mut more).unwrap());
    assert!(
        r.read_exact_or_eof(&mut []).unwrap(),
        "an empty read is complete"
    );
}

#[test]
fn empty_file_is_a_clean_end() {
    let mut r = reader(&[]);
    assert_eq!(r.format(), Format::Raw);
    let mut buf = [0u8; 4];
    assert!(!r.read_exact_or_eof(&mut buf).unwrap());
    assert!(!r.check_eof_marker().unwrap());
}

#[test]
fn eof_marker_check_keeps_the_position() {
    let (file, data, _) = blocks_file(&[1000, 2000, 3000]);
    for threads in [1, 3] {
        let mut r = reader(&file);
        r.set_threads(threads);
        let mut head = vec![0u8; 1500];
        r.read_exact_data(&mut head).unwrap();
        assert!(r.check_eof_marker().unwrap());
        let rest = read_all(&mut r);
        assert_eq!(rest, data[1500..], "threads {threads}");
    }
    let cut = &file[..file.len() - 28];
    let mut r = reader(cut);
    assert!(!r.check_eof_marker().unwrap());
    assert_eq!(read_all(&mut r), data);
}

#[test]
fn seeking_is_refused_for_streams() {
    let mut r = reader(b"plain bytes, no gzip at all");
    assert_eq!(r.format(), Format::Raw);
    assert!(matches!(
        r.seek(VirtualOffset::new(0, 0)),
        Err(Error::SeekUnsupported {
            format: Format::Raw,
            ..
        })
    ));
    assert!(r.seek_limit(VirtualOffset::new(0, 0), 1).is_err());
    assert_eq!(read_all(&mut r), b"plain bytes, no gzip at all");
}

#[test]
fn corrupt_blocks_fail_only_when_reached_and_in_order() {
    let sizes = [30_000, 30_000, 30_000, 30_000, 30_000, 30_000];
    let (mut file, data, starts) = blocks_file(&sizes);
    // Damage the CRC of block 3.
    let crc_at = starts[4] as usize - 8;
    file[crc_at] ^= 0xff;
    for threads in [1, 2, 4] {
        let mut r = reader(&file);
        r.set_threads(threads);
        let mut got = Vec::new();
        let mut buf = vec![0u8; 7000];
        let err = loop {
            match r.read_data(&mut buf) {
                Ok(0) => panic!("no error with {threads} threads"),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) => break e,
            }
        };
        assert_eq!(got, data[..90_000], "threads {threads}");
        match &err {
            Error::CrcMismatch { name, offset, .. } => {
                assert_eq!(name, "synthetic.bgz");
                assert_eq!(*offset, starts[3]);
            }
            e => panic!("{e}"),
        }
        // The error stays until the reader is moved.
        assert!(matches!(
            r.read_data(&mut buf),
            Err(Error::CrcMismatch { .. })
        ));
        // Blocks after the damage can still be reached by seeking.
        r.seek(VirtualOffset::new(starts[4], 0)).unwrap();
        assert_eq!(read_all(&mut r), data[120_000..]);
    }
}

#[test]
fn threaded_matches_single_threaded_including_seeks() {
    let sizes: Vec<usize> = (0..40).map(|i| 1000 + (i * 7919) % 60_000).collect();
    let (file, data, _) = blocks_file(&sizes);
    let mut single = reader(&file);
    let (offsets, all) = offsets_and_data(&mut single, 3333);
    assert_eq!(all, data);
    for threads in [2, 3, 8] {
        let mut r = reader(&file);
        r.set_threads(threads);
        let (t_offsets, t_all) = offsets_and_data(&mut r, 3333);
        assert_eq!(t_offsets, offsets);
        assert_eq!(t_all, data);
        // Jump around: forwards, backwards, within a block, to block ends.
        let picks = [17usize, 3, 60, 60, 61, 1, 90, 45, 0, offsets.len() - 1];
        for &i in &picks {
            let (target, _) = offsets[i % offsets.len()];
            single.seek(target).unwrap();
            r.seek(target).unwrap();
            let mut a = vec![0u8; 50_000];
            let mut b = vec![0u8; 50_000];
            let na = read_n(&mut single, &mut a);
            let nb = read_n(&mut r, &mut b);
            assert_eq!(na, nb);
            assert!(a[..na] == b[..nb], "after seeking to {target}");
            assert_eq!(single.virtual_offset(), r.virtual_offset());
        }
        // Switching thread counts mid-stream keeps the position.
        let (mid, _) = offsets[20];
        r.seek(mid).unwrap();
        let mut a = vec![0u8; 10_000];
        read_n(&mut r, &mut a);
        r.set_threads(1);
        let rest1 = read_all(&mut r);
        r.seek(mid).unwrap();
        read_n(&mut r, &mut a);
        r.set_threads(threads);
        assert_eq!(read_all(&mut r), rest1);
    }
}

#[test]
fn std_read_impl_and_writer_round_trip() {
    use std::io::{Read, Write};
    let data = common::noise(300_000, 3);
    for level in [0, 1, 6, 12] {
        let mut w = bgzf::Writer::with_level(Vec::new(), level).unwrap();
        w.write_all(&data[..1234]).unwrap();
        w.flush_block().unwrap();
        let second = w.virtual_offset().unwrap();
        w.write_all(&data[1234..]).unwrap();
        let file = w.finish().unwrap();
        assert!(file.ends_with(&bgzf::block::EOF_MARKER));
        let mut r = reader(&file);
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, data, "level {level}");
        r.seek(second).unwrap();
        let mut b = [0u8; 10];
        r.read_exact(&mut b).unwrap();
        assert_eq!(b, data[1234..1244]);
    }
}

#[test]
fn reader_can_move_to_another_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<Reader>();
    assert_send::<bgzf::Writer<Vec<u8>>>();
    assert_send::<Error>();
}
