//! What the facade's tests share: the fixtures' goldens, and records printed as samtools
//! prints them.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use region::Region;

/// A folder of `fixtures/`.
pub fn fixtures(sub: &str) -> PathBuf {
    testkit::workspace_root().join("fixtures").join(sub)
}

/// A golden's text (`.gz` inflated).
pub fn golden(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
        return text;
    }
    String::from_utf8(bytes).unwrap()
}

/// The lines of a case file, split on tabs, comments aside.
pub fn cases(path: &Path) -> Vec<Vec<String>> {
    golden(path)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// The regions samtools would read: those the header resolves (samtools warns about the rest
/// and goes on).
pub fn regions(header: &bam::Header, given: &[&str]) -> Vec<Region> {
    given
        .iter()
        .filter_map(|r| region::parse_region(r, header).ok())
        .collect()
}

/// What `samtools view` prints for the reader's query of `regions` (every record for none).
pub fn view(reader: &mut hts::alignment::Reader, regions: Option<&[Region]>) -> String {
    let header = reader.header().clone();
    let mut records = match regions {
        Some(r) => reader.query(r),
        None => reader.records(),
    }
    .unwrap_or_else(|e| panic!("query: {e}"));
    let mut out = Vec::new();
    while let Some(record) = records
        .next_record()
        .unwrap_or_else(|e| panic!("read: {e}"))
    {
        bam::write_sam(&record, &header, &mut out).unwrap();
    }
    String::from_utf8(out).unwrap()
}

/// The region set `samtools view -M` makes of `given`: the header's names resolved, `.` and
/// `*` the special regions, unknown names left out.
pub fn region_set(header: &bam::Header, given: &[&str]) -> region::RegionSet {
    let mut set = region::RegionSet::default();
    for r in regions(header, given) {
        match r {
            Region::Ref { tid, beg, end } => set.add(tid, region::Interval::new(beg, end)),
            Region::Unplaced => set.unplaced = true,
            Region::All => set.all = true,
        }
    }
    set
}

/// What `samtools view -M` prints for `set`.
pub fn view_set(reader: &mut hts::alignment::Reader, set: &region::RegionSet) -> String {
    let header = reader.header().clone();
    let mut records = reader
        .query_set(set)
        .unwrap_or_else(|e| panic!("query: {e}"));
    let mut out = Vec::new();
    for record in &mut records {
        let record = record.unwrap_or_else(|e| panic!("read: {e}"));
        bam::write_sam(&record, &header, &mut out).unwrap();
    }
    String::from_utf8(out).unwrap()
}
