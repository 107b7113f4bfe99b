//! A whole BAM file (BGZF or uncompressed): the header (text, reference list, the `@SQ` lines
//! htslib would parse), every record with its aux data checked, formatted as SAM, the header as
//! `samtools view -h` prints it, and each record's region looked up again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = bam::format::describe(data);
    let Ok(mut reader) = bam::Reader::from_bytes("fuzz", data.to_vec()) else {
        return;
    };
    let header = reader.header().clone();
    let _ = header.text_for_output();
    let _ = header.text_error();
    let n_targets = header.targets().len();
    let mut line = Vec::new();
    let Ok(mut records) = reader.records() else {
        return;
    };
    for _ in 0..2000 {
        let record = match records.next_record() {
            Ok(Some(r)) => r,
            Ok(None) | Err(_) => break,
        };
        let _ = record.check_aux();
        let _ = record.end_pos();
        let _ = record.seq();
        line.clear();
        if bam::write_sam(&record, &header, &mut line).is_ok() {
            assert_eq!(line.last(), Some(&b'\n'), "a SAM line ends with a newline");
            // Read and reference names and `Z` strings are printed as stored (newlines and tabs
            // too), and qualities wrap (233 + 33 is a newline), as in samtools; no other field
            // adds any.
            let count = |b: &[u8], c: u8| b.iter().filter(|&&x| x == c).count();
            let ref_name = |tid: Option<region::RefId>| {
                tid.and_then(|t| header.ref_name(t)).unwrap_or_default()
            };
            let own = |c: u8| {
                let qual = record
                    .qual()
                    .iter()
                    .filter(|&&q| q.wrapping_add(33) == c)
                    .count();
                count(record.name(), c)
                    + count(record.aux(), c)
                    + qual
                    + count(ref_name(record.ref_id()), c)
                    + count(ref_name(record.mate_ref_id()), c)
            };
            assert!(
                count(&line, b'\n') <= 1 + own(b'\n'),
                "one record, one line"
            );
            assert!(
                count(&line, b'\t') + 1 >= 11,
                "a SAM line has 11 mandatory fields"
            );
        }
        if let Some(tid) = record.ref_id().filter(|t| t.get() < n_targets) {
            assert!(header.ref_name(tid).is_some());
        }
    }
    let _ = records.has_eof_marker();
});
