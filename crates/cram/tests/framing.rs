//! Framing against samtools 1.16.1's CRAMs (fixtures/cram/make.sh).

use cram::{ContainerHeader, FileDefinition};

fn fixture(name: &str) -> Vec<u8> {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/cram/");
    std::fs::read(format!("{p}{name}")).unwrap()
}

/// Walks every container to the EOF container; returns their headers.
fn containers(data: &[u8]) -> Vec<ContainerHeader> {
    let def = FileDefinition::parse(data).unwrap();
    let mut at = FileDefinition::LEN;
    let mut out = Vec::new();
    while at < data.len() {
        let h = ContainerHeader::parse(&data[at..], at as u64, def.version).unwrap();
        at += h.header_len + h.length;
        out.push(h);
    }
    assert_eq!(at, data.len());
    out
}

#[test]
fn every_container_of_samtools_crams_parses_to_the_eof_container() {
    for (name, major, minor) in [("aux-3.0.cram", 3, 0), ("aux-3.1.cram", 3, 1)] {
        let data = fixture(name);
        let def = FileDefinition::parse(&data).unwrap();
        assert_eq!((def.version.major, def.version.minor), (major, minor));
        assert_eq!(&def.file_id[..name.len()], name.as_bytes());
        let hs = containers(&data);
        // Header container, at least one data container, the EOF container.
        assert!(hs.len() >= 3, "{name}: {} containers", hs.len());
        let eof = hs.last().unwrap();
        assert_eq!((eof.reference_id, eof.start, eof.records), (-1, 4542278, 0));
        assert!(hs[1..hs.len() - 1]
            .iter()
            .all(|h| h.records > 0 && !h.landmarks.is_empty()));
    }
}

#[test]
fn truncations_and_bit_flips_of_a_header_are_errors_never_panics() {
    let data = fixture("aux-3.0.cram");
    let def = FileDefinition::parse(&data).unwrap();
    let at = FileDefinition::LEN;
    let h = ContainerHeader::parse(&data[at..], at as u64, def.version).unwrap();
    let end = at + h.header_len + h.length;
    for cut in 0..end - at {
        assert!(ContainerHeader::parse(&data[at..at + cut], at as u64, def.version).is_err());
    }
    for byte in at..at + h.header_len {
        for bit in 0..8 {
            let mut d = data[..end].to_vec();
            d[byte] ^= 1 << bit;
            // The CRC32 covers every header byte, so each single flip is caught.
            let e = ContainerHeader::parse(&d[at..], at as u64, def.version).unwrap_err();
            assert!(e.offset >= at as u64, "{e}");
        }
    }
    assert!(FileDefinition::parse(b"BAM\x01").is_err());
    let mut bad = data[..26].to_vec();
    bad[4] = 4;
    assert_eq!(FileDefinition::parse(&bad).unwrap_err().offset, 4);
}
