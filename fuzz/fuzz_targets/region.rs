//! Region strings resolved against a header: the first line of the input is the region, the
//! other lines are more reference names (with names holding `:`, `-`, `,` and braces already
//! there). A resolved region names a reference of the header with `beg <= end`; the messages of
//! a refused one are one line each; a braced `{name}:beg-end` of a known name (without `}`) resolves to it.
#![no_main]

use bam::header::{Header, Reference};
use libfuzzer_sys::fuzz_target;
use region::{parse_region, Region};

const NAMES: [&str; 8] = [
    "chr1",
    "chr1:100",
    "chr1:100-200",
    "chr2",
    "HLA-A*01:01",
    "{weird}",
    "chr,3",
    "chrM",
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.split('\n');
    let region = lines.next().unwrap_or_default();
    let mut refs: Vec<Reference> = NAMES
        .iter()
        .map(|n| Reference {
            name: n.as_bytes().to_vec(),
            len: 1 << 20,
        })
        .collect();
    refs.extend(
        lines
            .take(16)
            .filter(|n| !n.is_empty() && !n.contains('\0'))
            .map(|n| Reference {
                name: n.as_bytes().to_vec(),
                len: 5000,
            }),
    );
    let n_refs = refs.len();
    let Ok(header) = Header::from_parts(Vec::new(), refs) else {
        return;
    };
    match parse_region(region, &header) {
        Ok(Region::Ref { tid, beg, end }) => {
            assert!(tid.get() < n_refs, "{region}: tid {tid} of {n_refs}");
            assert!(beg <= end, "{region}: {beg} > {end}");
        }
        Ok(Region::Unplaced | Region::All) => {}
        Err(e) => {
            assert_eq!(e.region(), region);
            for message in [
                Some(e.to_string()),
                e.htslib_message(),
                Some(e.samtools_warning()),
            ]
            .into_iter()
            .flatten()
            {
                assert!(!message.contains('\n'), "a one-line message: {message:?}");
            }
        }
    }
    // Coordinates taken from the input, on a name the header surely holds.
    let a = u64::from(data.first().copied().unwrap_or(1)) * 977 + 1;
    let b = a + u64::from(data.last().copied().unwrap_or(0)) * 31;
    // Only when htslib could parse the header's names (a duplicate name fails it, and then
    // no region resolves); a name holding `}` cannot be braced (the brace ends at the first).
    if header.text_error().is_some() {
        return;
    }
    for (tid, name) in NAMES.iter().enumerate().filter(|(_, n)| !n.contains('}')) {
        let braced = format!("{{{name}}}:{a}-{b}");
        // A name given twice (a line of the input repeating it) resolves to its first entry.
        assert_eq!(
            parse_region(&braced, &header),
            Ok(Region::Ref {
                tid: region::RefId::new(tid),
                beg: region::Position::new(a - 1),
                end: region::Position::new(b)
            }),
            "{braced}"
        );
    }
});
