//! A gzip member that is not a BGZF block inside a BGZF file: htslib 1.16 reads on from it as
//! plain gzip (the BGZF members after it included) and refuses to seek from then on. Before
//! issue 9 the reader failed there with "no extra field".

mod common;

use std::io::Write;

use bgzf::{Error, Reader, VirtualOffset};
use common::{blocks_file, noise, read_all};
use flate2::write::GzEncoder;
use flate2::{Compression, GzBuilder};
use hfile::HFile;

fn reader(file: &[u8]) -> Reader {
    Reader::new(HFile::from_bytes("mixed.bgz", file.to_vec())).unwrap()
}

/// Reads `file` until an error, which it must meet before the end: what came, and the error.
fn read_to_error(file: &[u8]) -> (Vec<u8>, Error) {
    let mut r = reader(file);
    let mut all = Vec::new();
    loop {
        let mut buf = [0u8; 4096];
        match r.read_data(&mut buf) {
            Ok(0) => panic!("read to the end without an error"),
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) => return (all, e),
        }
    }
}

fn gzip_member(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// BGZF blocks of `before`, a plain gzip member of `plain`, BGZF blocks of `after`, EOF marker.
fn mixed(before: &[usize], plain: &[u8], after: &[usize]) -> (Vec<u8>, Vec<u8>, u64) {
    let (mut file, mut data, _) = blocks_file(before);
    file.truncate(file.len() - bgzf::block::EOF_MARKER.len());
    let member_at = file.len() as u64;
    file.extend(gzip_member(plain));
    data.extend_from_slice(plain);
    let (tail, tail_data, _) = blocks_file(after);
    file.extend(tail);
    data.extend(tail_data);
    (file, data, member_at)
}

#[test]
fn reading_goes_on_as_plain_gzip_after_such_a_member() {
    let plain = noise(200_000, 3);
    let (file, data, member_at) = mixed(&[1000, 500], &plain, &[700, 0, 300]);
    for threads in [0, 3] {
        let mut r = reader(&file);
        r.set_threads(threads);
        assert_eq!(read_all(&mut r), data, "threads {threads}");
        // From then on no seek: the message names the target and where the gzip data began.
        let e = r.seek(VirtualOffset::new(0, 10)).unwrap_err();
        assert!(
            matches!(e, Error::SeekUnsupported { since, .. } if since == member_at),
            "{e}"
        );
        let text = e.to_string();
        assert!(
            text.contains("0:10") && text.contains(&member_at.to_string()),
            "{text}"
        );
    }
}

#[test]
fn a_seek_into_the_member_reads_from_there() {
    let plain = noise(1000, 5);
    let (file, data, member_at) = mixed(&[100], &plain, &[50]);
    let mut r = reader(&file);
    r.seek(VirtualOffset::new(member_at, 10)).unwrap();
    assert_eq!(read_all(&mut r), data[110..]);
}

#[test]
fn members_with_name_comment_and_extra_without_bc_are_plain_gzip() {
    let plain = noise(5000, 9);
    let mut e = GzBuilder::new()
        .filename("x.bam")
        .comment("a comment")
        .extra(b"XY\x02\x00ab".to_vec())
        .write(Vec::new(), Compression::fast());
    e.write_all(&plain).unwrap();
    let member = e.finish().unwrap();
    let (mut file, mut data, _) = blocks_file(&[100]);
    let eof = file.split_off(file.len() - 28);
    file.extend(&member);
    file.extend(&eof);
    data.extend(&plain);
    assert_eq!(read_all(&mut reader(&file)), data);
}

#[test]
fn damage_after_the_switch_is_reported_where_it_is() {
    let plain = noise(3000, 11);
    let (file, _, member_at) = mixed(&[100], &plain, &[]);
    let member_len = gzip_member(&plain).len();
    // A flipped CRC byte.
    let mut bad = file.clone();
    let crc_at = member_at as usize + member_len - 8;
    bad[crc_at] ^= 1;
    let (_, e) = read_to_error(&bad);
    assert!(
        matches!(e, Error::CrcMismatch { offset, .. } if offset == member_at),
        "{e}"
    );
    // Cut inside the member.
    let cut = &file[..member_at as usize + member_len / 2];
    let mut r = reader(cut);
    let mut buf = vec![0u8; 10_000];
    let e = r.read_exact_data(&mut buf).unwrap_err();
    assert!(
        matches!(e, Error::TruncatedBlock { offset, .. } if offset == member_at),
        "{e}"
    );
    // Garbage after the member: not gzip, an error naming its offset.
    let mut junk = file[..member_at as usize + member_len].to_vec();
    junk.extend_from_slice(b"this is not gzip");
    let (_, e) = read_to_error(&junk);
    let at = member_at + member_len as u64;
    assert!(
        matches!(e, Error::BadMagic { offset, .. } if offset == at),
        "{e}"
    );
}

#[test]
fn the_raw_block_walk_still_refuses_such_a_member() {
    let (file, _, member_at) = mixed(&[100], b"plain", &[]);
    let walked: Vec<_> = bgzf::Blocks::new(std::io::Cursor::new(file), "mixed.bgz", 0).collect();
    assert_eq!(walked.len(), 2);
    match &walked[1] {
        Err(Error::BadHeader { offset, .. }) => assert_eq!(*offset, member_at),
        other => panic!("{other:?}"),
    }
}
