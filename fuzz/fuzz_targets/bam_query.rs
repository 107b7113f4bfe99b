//! Region queries of a real BAM (the corpus's `rand.bam`) through an arbitrary index: the
//! chunks a damaged BAI or CSI names are sought and read with their limits, and every record a
//! query returns lies on the reference asked for and overlaps the region.
#![no_main]

use bam::{OpenOptions, Reader};
use libfuzzer_sys::fuzz_target;
use region::{Position, RefId, Region};

const BAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../fixtures/conformance/data/rand.bam"
);

/// Regions on rand.bam's references: small, large, and at the start of each.
const REGIONS: [(usize, u64, u64); 4] = [
    (0, 10_000, 10_500),
    (0, 0, 1 << 29),
    (1, 5000, 5400),
    (3, 100, 300),
];

fuzz_target!(|data: &[u8]| {
    // One index file per process, rewritten for each input.
    let index = std::env::temp_dir().join(format!("hts-fuzz-{}.idx", std::process::id()));
    if std::fs::write(&index, data).is_err() {
        return;
    }
    let location = format!("{BAM}##idx##{}", index.display());
    let options = OpenOptions {
        no_cache: true,
        ..Default::default()
    };
    let Ok(mut reader) = Reader::open(&location, &options) else {
        return;
    };
    if reader.select_index(None).is_err() {
        return;
    }
    for (tid, beg, end) in REGIONS {
        if tid >= reader.header().refs().len() {
            continue;
        }
        let (tid, beg, end) = (RefId::new(tid), Position::new(beg), Position::new(end));
        let Ok(mut query) = reader.query(Region::Ref { tid, beg, end }) else {
            continue;
        };
        for _ in 0..3000 {
            match query.next_record() {
                Ok(Some(r)) => {
                    assert_eq!(r.ref_id(), Some(tid), "a record of another reference");
                    assert!(
                        r.end_pos() > beg && r.pos().is_none_or(|pos| pos < end),
                        "a record outside {beg}-{end}: {:?}-{}",
                        r.pos(),
                        r.end_pos()
                    );
                }
                Ok(None) | Err(_) => break,
            }
        }
    }
});
