//! CRAM records made whole: every container's slices read and rebuilt (without a reference,
//! so bases come from the read features alone; embedded references are used), mates linked and
//! names made. Seeded with the fixtures; a 2.x version byte skips the CRC32s, so mutations
//! reach the record decoder.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = cram::Reader::open(std::io::Cursor::new(data.to_vec()), "fuzz", None)
    else {
        return;
    };
    reader.without_bases();
    // Each container moves the reader forward, so the loop ends with the input.
    while let Ok(Some(records)) = reader.next_container() {
        for a in &records {
            assert!(a.qual.is_empty() || a.qual.len() == a.seq.len());
        }
    }
});
