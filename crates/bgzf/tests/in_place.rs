//! Reading in place: `fill_block` hands out the current block's data, `advance` and
//! `take_buffered` advance through it, and together they deliver exactly what `read` does, with
//! the same virtual offsets, for BGZF (with and without worker threads), plain gzip and
//! uncompressed data.

mod common;

use std::io::{BufRead, Write};

use bgzf::{Reader, VirtualOffset};
use common::{blocks_file, noise, read_all};
use hfile::HFile;

fn reader(file: &[u8]) -> Reader {
    Reader::new(HFile::from_bytes("mem", file.to_vec())).unwrap()
}

/// Everything, through fill_block/advance in steps of at most `step`, with the virtual offset
/// seen before each step.
fn in_place(r: &mut Reader, step: usize) -> (Vec<u8>, Vec<VirtualOffset>) {
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    loop {
        offsets.push(r.virtual_offset());
        let buf = r.fill_block().unwrap();
        if buf.is_empty() {
            return (out, offsets);
        }
        let n = buf.len().min(step);
        out.extend_from_slice(&buf[..n]);
        r.advance(n);
    }
}

#[test]
fn fill_block_is_one_block_at_a_time_with_read_offsets() {
    let sizes = [1000, 0, 65280, 7, 30000, 0, 0, 12];
    let (file, data, starts) = blocks_file(&sizes);
    for threads in [0, 2, 5] {
        let mut r = reader(&file);
        r.set_threads(threads);
        let mut seen = Vec::new();
        loop {
            let at = r.virtual_offset();
            let block = r.fill_block().unwrap().to_vec();
            if block.is_empty() {
                break;
            }
            // A fresh block starts at in-block offset 0 of a block boundary and holds it whole;
            // empty blocks are passed over.
            assert_eq!(at.uoffset(), 0);
            let first = starts.iter().position(|&s| s == at.coffset()).unwrap();
            let i = (first..sizes.len()).find(|&i| sizes[i] > 0).unwrap();
            assert_eq!(block.len(), sizes[i], "block {i} ({threads} threads)");
            assert_eq!(r.buffer(), &block[..]);
            seen.extend_from_slice(&block);
            r.advance(block.len());
            assert!(r.buffer().is_empty());
        }
        assert!(seen == data, "{threads} threads");
    }
}

#[test]
fn steps_match_read_exactly() {
    let (file, data, _) = blocks_file(&[5000, 65280, 1, 0, 4096, 20000]);
    for threads in [0, 3] {
        for step in [1, 7, 4096, 70000] {
            let mut a = reader(&file);
            a.set_threads(threads);
            let (got, offsets) = in_place(&mut a, step);
            assert!(got == data, "step {step}, {threads} threads");
            // The same offsets as read() of the same step sizes.
            let mut b = reader(&file);
            let mut expect = Vec::new();
            let mut buf = vec![0u8; step];
            loop {
                expect.push(b.virtual_offset());
                if b.read_data(&mut buf).unwrap() == 0 {
                    break;
                }
            }
            assert_eq!(offsets, expect, "step {step}, {threads} threads");
        }
    }
}

#[test]
fn take_buffered_stays_in_the_block_and_mixes_with_read() {
    let (file, data, starts) = blocks_file(&[100, 200]);
    let mut r = reader(&file);
    assert_eq!(r.fill_block().unwrap().len(), 100);
    assert_eq!(r.take_buffered(40), &data[..40]);
    assert_eq!(r.taken(40), &data[..40], "handed out again");
    assert_eq!(r.taken(1000), &data[..40], "never more than was consumed");
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[0], 40));
    // More than the block holds: only the rest of the block, and the offset moves to the next.
    assert_eq!(r.take_buffered(1000), &data[40..100]);
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[1], 0));
    assert_eq!(
        r.taken(60),
        &data[40..100],
        "still there at the end of its block"
    );
    assert!(
        r.take_buffered(5).is_empty(),
        "nothing is loaded by take_buffered"
    );
    let mut two = [0u8; 2];
    r.read_exact_data(&mut two).unwrap();
    assert_eq!(two, data[100..102]);
    assert_eq!(r.take_buffered(3), &data[102..105]);
    r.advance(usize::MAX);
    assert_eq!(r.virtual_offset(), VirtualOffset::new(starts[2], 0));
    assert!(r.fill_block().unwrap().is_empty());
}

#[test]
fn seeks_between_in_place_reads() {
    let (file, data, starts) = blocks_file(&[3000, 3000, 3000]);
    for threads in [0, 2] {
        let mut r = reader(&file);
        r.set_threads(threads);
        r.seek(VirtualOffset::new(starts[1], 10)).unwrap();
        assert!(
            r.buffer().is_empty(),
            "a seek to another block loads nothing"
        );
        assert_eq!(r.fill_block().unwrap(), &data[3010..6000]);
        r.seek(VirtualOffset::new(starts[1], 2999)).unwrap();
        assert_eq!(r.fill_block().unwrap(), &data[5999..6000]);
        r.seek(VirtualOffset::new(starts[0], 0)).unwrap();
        let (all, _) = in_place(&mut r, 999);
        assert!(all == data);
    }
}

#[test]
fn streams_without_blocks_read_in_place_too() {
    let data = noise(300_000, 3);
    // Plain gzip (not BGZF).
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&data).unwrap();
    let gz = gz.finish().unwrap();
    // Uncompressed.
    let raw = data.clone();
    for (file, format) in [(gz, bgzf::Format::Gzip), (raw, bgzf::Format::Raw)] {
        let mut r = reader(&file);
        assert_eq!(r.format(), format);
        let (got, offsets) = in_place(&mut r, 50_000);
        assert!(got == data, "{format}");
        // Offsets are the uncompressed position in 64 KiB pages, as htslib reports them.
        let len = data.len() as u64;
        assert_eq!(
            offsets.last(),
            Some(&VirtualOffset::new(len & !0xffff, (len & 0xffff) as u16)),
            "{format}"
        );
        assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{format}");
        let mut r = reader(&file);
        assert_eq!(r.take_buffered(10), &[] as &[u8], "{format}");
        r.fill_block().unwrap();
        assert_eq!(r.take_buffered(10), &data[..10], "{format}");
        assert_eq!(r.virtual_offset(), VirtualOffset::new(0, 10));
        assert!(read_all(&mut r) == data[10..], "{format}");
    }
}

#[test]
fn std_bufread_lines() {
    let mut w = bgzf::Writer::new(Vec::new());
    for i in 0..5000 {
        writeln!(w, "line {i}").unwrap();
        if i % 777 == 0 {
            w.flush_block().unwrap();
        }
    }
    let file = w.finish().unwrap();
    let r = reader(&file);
    let lines: Vec<String> = r.lines().map(Result::unwrap).collect();
    assert_eq!(lines.len(), 5000);
    assert_eq!(lines[4321], "line 4321");
}
