//! The structure of samtools 1.16.1's CRAMs read back: each data container is a compression
//! header and slices at its landmarks, each slice names the blocks that follow it, and the
//! record counts and counters agree from container to slice.

use cram::num::Cursor;
use cram::{Block, CompressionHeader, ContainerHeader, ContentType, FileDefinition, SliceHeader};

fn fixture(name: &str) -> Vec<u8> {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/cram/");
    std::fs::read(format!("{p}{name}")).unwrap()
}

struct Seen {
    slices: usize,
    records: i64,
    series: usize,
}

fn walk(data: &[u8]) -> Result<Seen, cram::Error> {
    let def = FileDefinition::parse(data)?;
    let mut at = FileDefinition::LEN;
    let mut seen = Seen {
        slices: 0,
        records: 0,
        series: 0,
    };
    let mut counter = 0i64;
    let mut first = true;
    while at < data.len() {
        let h = ContainerHeader::parse(&data[at..], at as u64, def.version)?;
        let body_at = at + h.header_len;
        let body = &data[body_at..body_at + h.length];
        at = body_at + h.length;
        if std::mem::take(&mut first) || h.records == 0 {
            continue; // the SAM header container, and the EOF container
        }
        let mut c = Cursor::new(body, body_at as u64);
        let b = Block::read(&mut c, def.version)?;
        assert_eq!(b.content_type, ContentType::CompressionHeader);
        let ch = CompressionHeader::parse(&b.decode()?, b.offset)?;
        assert!(ch.series.contains_key(b"BF") && ch.series.contains_key(b"RL"));
        assert!(!ch.tag_lines.is_empty());
        seen.series += ch.series.len();
        let mut records = 0;
        assert_eq!(h.record_counter, counter);
        for &landmark in &h.landmarks {
            assert_eq!(c.position(), landmark as usize, "slice at its landmark");
            let b = Block::read(&mut c, def.version)?;
            assert_eq!(b.content_type, ContentType::SliceHeader);
            let s = SliceHeader::parse(&b.decode()?, b.offset, def.version)?;
            assert_eq!(s.record_counter, counter + i64::from(records));
            let mut ids = Vec::new();
            for _ in 0..s.blocks {
                let b = Block::read(&mut c, def.version)?;
                match b.content_type {
                    ContentType::External => ids.push(b.content_id),
                    ContentType::Core => {}
                    t => panic!("{t:?} block inside a slice"),
                }
            }
            assert_eq!(ids, s.content_ids);
            records += s.records;
            seen.slices += 1;
        }
        assert_eq!(c.remaining(), 0);
        assert_eq!(records, h.records);
        counter += i64::from(records);
        seen.records += i64::from(records);
    }
    Ok(seen)
}

#[test]
fn containers_slices_and_blocks_agree_in_every_fixture() {
    for (name, records) in [
        ("rand-3.0-rans.cram", 3091),
        ("rand-3.0-gzip.cram", 3091),
        ("aux-3.0.cram", 0),
        ("aux-3.1.cram", 0),
    ] {
        let s = walk(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(s.slices >= 1 && s.series >= 10, "{name}");
        if records > 0 {
            assert_eq!(s.records, records, "{name}");
        }
    }
}

#[test]
fn hostile_compression_headers_are_errors_never_panics() {
    let data = fixture("rand-3.0-gzip.cram");
    let def = FileDefinition::parse(&data).unwrap();
    let mut at = FileDefinition::LEN;
    let h = ContainerHeader::parse(&data[at..], at as u64, def.version).unwrap();
    at += h.header_len + h.length;
    let h = ContainerHeader::parse(&data[at..], at as u64, def.version).unwrap();
    let mut c = Cursor::new(&data[at + h.header_len..], 0);
    let raw = Block::read(&mut c, def.version)
        .unwrap()
        .decode()
        .unwrap()
        .into_owned();
    assert!(CompressionHeader::parse(&raw, 0).is_ok());
    for cut in 0..raw.len() {
        assert!(
            CompressionHeader::parse(&raw[..cut], 0).is_err(),
            "cut at {cut}"
        );
    }
    for i in 0..raw.len() {
        for v in [0x00, 0x7f, 0xff] {
            let mut d = raw.clone();
            d[i] = v;
            let _ = CompressionHeader::parse(&d, 0);
        }
    }
}
