//! The BGZF reader on any bytes: container detection (BGZF, plain gzip, uncompressed), a whole
//! sequential read, seeks back to virtual offsets met on the way (which must give the same bytes
//! again, with and without a readahead limit), a seek to an arbitrary virtual offset, the EOF
//! marker check, and the sequential [`bgzf::BlockStream`].
#![no_main]

use std::io::Read;

use bgzf::{Format, VirtualOffset};
use libfuzzer_sys::fuzz_target;

/// Uncompressed bytes read at most (a 64 KiB input holds no more than about 150 MiB of
/// deflate data; this keeps each run fast).
const CAP: usize = 8 << 20;

fn reader(data: &[u8]) -> Option<bgzf::Reader> {
    bgzf::Reader::new(hfile::HFile::from_bytes("fuzz", data.to_vec())).ok()
}

fuzz_target!(|data: &[u8]| {
    if let Some(mut r) = reader(data) {
        // The whole data, in uneven reads, noting where each read began.
        let mut all = Vec::new();
        let mut marks: Vec<(VirtualOffset, usize)> = Vec::new();
        let mut buf = vec![0u8; 1000];
        while all.len() < CAP {
            let at = r.virtual_offset();
            match r.read_data(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    assert!(n <= buf.len());
                    marks.push((at, all.len()));
                    all.extend_from_slice(&buf[..n]);
                }
            }
        }
        if r.format() == Format::Bgzf {
            for (i, &(at, pos)) in marks.iter().enumerate().step_by(7).take(8) {
                let want = &all[pos..all.len().min(pos + 3000)];
                let mut again = vec![0u8; want.len()];
                let limited = i % 2 == 1;
                let seeked = if limited {
                    r.seek_limit(at, bgzf::byte_end(at, &[], data.len() as u64))
                } else {
                    r.seek(at)
                };
                match seeked {
                    Ok(()) => {}
                    // A gzip member that is not BGZF ends seeking, as in htslib.
                    Err(bgzf::Error::SeekUnsupported { .. }) => break,
                    Err(e) => panic!("seek to {at:?}, met while reading, failed: {e}"),
                }
                match r.read_exact_data(&mut again) {
                    Ok(()) => assert_eq!(again, want, "bytes at {at:?} differ after a seek"),
                    Err(e) => panic!("reading again from {at:?} failed: {e}"),
                }
            }
            // Anywhere at all: an error or data, never a panic.
            let raw = data
                .iter()
                .rev()
                .take(8)
                .fold(0u64, |v, &b| v << 8 | u64::from(b));
            if r.seek(VirtualOffset::from_raw(raw)).is_ok() {
                let _ = r.read_data(&mut buf);
            }
            let _ = r.check_eof_marker();
        }
    }
    let mut stream = bgzf::BlockStream::new("fuzz", data);
    let mut buf = vec![0u8; 4096];
    let mut total = 0usize;
    while total < CAP {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
        assert!(stream.input_read() <= data.len() as u64);
    }
});
