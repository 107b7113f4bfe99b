//! One BAM record (its bytes after `block_size`) decoded and formatted as SAM against a header of
//! three references, with every accessor used on it.
#![no_main]

use bam::header::{Header, Reference};
use libfuzzer_sys::fuzz_target;

fn header() -> Header {
    let refs = ["chr1", "chr2", "chrM"]
        .iter()
        .map(|n| Reference {
            name: n.as_bytes().to_vec(),
            len: 1 << 20,
        })
        .collect();
    let text = b"@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:chr1\tLN:1048576\n".to_vec();
    match Header::from_parts(text, refs) {
        Ok(h) => h,
        Err(e) => panic!("the fixed header is valid: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let header = header();
    let Ok(record) = bam::Record::decode(data.to_vec(), header.targets().len()) else {
        return;
    };
    let _ = (
        record.ref_id(),
        record.pos(),
        record.mapq(),
        record.flags(),
        record.bin(),
    );
    let _ = (record.mate_ref_id(), record.mate_pos(), record.tlen());
    let _ = record.stored_coordinates();
    assert!(record.name().len() < 256, "l_read_name is one byte");
    let seq = record.seq();
    assert_eq!(seq.len(), record.seq_len());
    let _ = record.qual();
    let _ = record.end_pos();
    let _ = record.cigar().len();
    let aux_ok = record.check_aux().is_ok();
    for field in record.aux_fields().take(1000) {
        let _ = field;
    }
    let mut line = Vec::new();
    let written = bam::write_sam(&record, &header, &mut line);
    if aux_ok {
        assert!(written.is_ok(), "checked aux data formats: {written:?}");
    }
    if written.is_ok() {
        // Names and `Z` strings are printed as stored, newlines included, and a quality of 233
        // wraps to a newline, as in samtools: the line has no other newline than those and its
        // end.
        assert_eq!(line.last(), Some(&b'\n'));
        let inner = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
        let from_qual = record
            .qual()
            .iter()
            .filter(|&&q| q.wrapping_add(33) == b'\n')
            .count();
        assert!(inner(&line) <= 1 + inner(record.name()) + inner(record.aux()) + from_qual);
    }
});
