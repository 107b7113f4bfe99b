//! The conformance corpus's BGZF-level files: containers, EOF markers, and each kind of damage.

mod common;

use bgzf::{Error, Format, Reader, VirtualOffset};
use common::{fixture_bytes, gzip_dc, open_fixture, read_all, read_n, walk_blocks};

/// Reads until an error, returning the bytes delivered before it.
fn read_until_error(r: &mut Reader) -> (Vec<u8>, Error) {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 4096];
    loop {
        match r.read_data(&mut buf) {
            Ok(0) => panic!("{}: read to the end without an error", r.name()),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => return (out, e),
        }
    }
}

/// The uncompressed bytes of ce1000.bam's first two blocks (all that precedes the damaged third
/// block in the malformed files derived from it).
fn ce1000_before_block_2() -> Vec<u8> {
    let all = gzip_dc("data/ce1000.bam");
    all[..293 + 65213].to_vec()
}

const CE1000_BLOCK_2: u64 = 12205;

#[test]
fn ce1000_layout_is_what_the_tests_assume() {
    let starts = walk_blocks(&fixture_bytes("data/ce1000.bam"));
    assert_eq!(starts, vec![0, 144, 12205, 23695, 35310, 46488]);
}

#[test]
fn eof_marker_present_and_absent() {
    let mut r = open_fixture("data/ce1000.bam");
    assert!(r.check_eof_marker().unwrap());
    let mut r = open_fixture("malformed/no_eof.bam");
    assert!(!r.check_eof_marker().unwrap());
    // Missing marker: the data is still all there.
    assert_eq!(read_all(&mut r), gzip_dc("data/ce1000.bam"));
    let mut r = open_fixture("malformed/trunc_block_boundary.bam");
    assert!(!r.check_eof_marker().unwrap());
    assert_eq!(read_all(&mut r), ce1000_before_block_2());
}

#[test]
fn damaged_blocks_give_their_error_after_the_good_data() {
    let expect_before = ce1000_before_block_2();
    for threads in [1, 3] {
        for (file, check) in [
            ("malformed/bad_crc.bam", "crc"),
            ("malformed/bad_deflate.bam", "inflate"),
            ("malformed/bad_gzip_magic_mid.bam", "magic"),
            ("malformed/bsize_big.bam", "crc"),
            ("malformed/trunc_mid_block.bam", "truncated"),
        ] {
            let mut r = open_fixture(file);
            assert_eq!(r.format(), Format::Bgzf);
            r.set_threads(threads);
            let (before, err) = read_until_error(&mut r);
            assert_eq!(before, expect_before, "{file}, {threads} threads");
            let ok = match (check, &err) {
                ("crc", Error::CrcMismatch { offset, .. }) => *offset == CE1000_BLOCK_2,
                ("inflate", Error::Inflate { offset, .. }) => *offset == CE1000_BLOCK_2,
                ("magic", Error::BadMagic { offset, .. }) => *offset == CE1000_BLOCK_2,
                (
                    "truncated",
                    Error::TruncatedBlock {
                        offset,
                        needed,
                        available,
                        ..
                    },
                ) => (*offset, *needed, *available) == (CE1000_BLOCK_2, 11490, 17950 - 12205),
                _ => false,
            };
            assert!(ok, "{file}: unexpected error {err:?}");
            assert_eq!(err.name(), file);
            let msg = err.to_string();
            assert!(msg.contains(file) && msg.contains("12205"), "{msg}");
            assert!(err.is_format_error());
        }
    }
}

#[test]
fn a_seek_past_the_damage_still_reads() {
    // samtools answers a region that does not touch the bad block (mf_bad_crc_region_untouched).
    let mut r = open_fixture("malformed/bad_crc.bam");
    r.seek(VirtualOffset::new(23695, 0)).unwrap();
    let all = gzip_dc("data/ce1000.bam");
    assert_eq!(read_all(&mut r), all[293 + 65213 + 65271..]);
}

#[test]
fn bad_gzip_magic_first_is_not_compressed() {
    // htslib treats it as uncompressed data; the BAM layer then rejects its magic.
    let mut r = open_fixture("malformed/bad_gzip_magic_first.bam");
    assert_eq!(r.format(), Format::Raw);
    assert_eq!(
        read_all(&mut r),
        fixture_bytes("malformed/bad_gzip_magic_first.bam")
    );
}

#[test]
fn plain_gzip_is_decompressed_as_a_stream() {
    let mut r = open_fixture("data/gz_plain.bam");
    assert_eq!(r.format(), Format::Gzip);
    assert!(!r.check_eof_marker().unwrap());
    r.set_threads(4);
    let expect = gzip_dc("data/gz_plain.bam");
    assert_eq!(expect.len(), 2544);
    assert_eq!(read_all(&mut r), expect);
    assert!(matches!(
        r.seek(VirtualOffset::new(0, 0)),
        Err(Error::SeekUnsupported {
            format: Format::Gzip,
            ..
        })
    ));
}

#[test]
fn truncated_plain_gzip_is_an_error() {
    let bytes = fixture_bytes("data/gz_plain.bam");
    let cut = bytes[..bytes.len() / 2].to_vec();
    let mut r = Reader::new(hfile::HFile::from_bytes("cut.gz", cut)).unwrap();
    let mut buf = vec![0u8; 4096];
    let err = loop {
        match r.read_data(&mut buf) {
            Ok(0) => panic!("truncated gzip read to a clean end"),
            Ok(_) => {}
            Err(e) => break e,
        }
    };
    assert!(matches!(err, Error::Gzip { .. }), "{err:?}");
    assert!(err.to_string().contains("cut.gz"));
}

#[test]
fn raw_bam_passes_through() {
    let mut r = open_fixture("data/raw_uncompressed.bam");
    assert_eq!(r.format(), Format::Raw);
    assert!(!r.check_eof_marker().unwrap());
    let expect = fixture_bytes("data/raw_uncompressed.bam");
    assert_eq!(&expect[..4], b"BAM\x01");
    let mut head = [0u8; 4];
    r.read_exact_data(&mut head).unwrap();
    assert_eq!(r.virtual_offset(), VirtualOffset::new(0, 4));
    let mut rest = read_all(&mut r);
    rest.splice(0..0, head);
    assert_eq!(rest, expect);
    // Same data as the gzip and BGZF versions of the file.
    assert_eq!(expect, gzip_dc("data/gz_plain.bam"));
}

#[test]
fn bc_subfield_anywhere_in_the_extra_field() {
    let expect = gzip_dc("data/gz_plain.bam");
    for file in ["data/bgzf_extra_after.bam", "data/bgzf_extra_before.bam"] {
        let mut r = open_fixture(file);
        assert_eq!(r.format(), Format::Bgzf, "{file}");
        assert!(r.check_eof_marker().unwrap());
        assert_eq!(read_all(&mut r), expect, "{file}");
        assert_eq!(r.virtual_offset(), VirtualOffset::new(1065 + 28, 0));
    }
}

#[test]
fn multi_block_files_match_gzip_with_and_without_threads() {
    for file in [
        "data/rand.bam",
        "data/long.bam",
        "data/rand_blocks.bam",
        "data/ce1000.bam",
    ] {
        let expect = gzip_dc(file);
        for threads in [1, 2, 5] {
            let mut r = open_fixture(file);
            r.set_threads(threads);
            assert_eq!(read_all(&mut r), expect, "{file}, {threads} threads");
        }
    }
}

#[test]
fn threaded_seeks_on_rand_bam_match_single_threaded() {
    let file = "data/rand.bam";
    let mut single = open_fixture(file);
    let (offsets, all) = common::offsets_and_data(&mut single, 1777);
    assert_eq!(all, gzip_dc(file));
    let mut threaded = open_fixture(file);
    threaded.set_threads(3);
    assert!(offsets.len() > 200);
    for k in [100usize, 5, 150, 150, 151, 2, 0, 190, 77, offsets.len() - 1] {
        let (target, start) = offsets[k];
        for r in [&mut single, &mut threaded] {
            r.seek(target).unwrap();
            let mut buf = vec![0u8; 70_000];
            let got = read_n(r, &mut buf);
            let end = (start + buf.len()).min(all.len());
            assert!(buf[..got] == all[start..end], "seek to {target}");
        }
    }
}
