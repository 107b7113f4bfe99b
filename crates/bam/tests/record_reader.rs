//! The generic record reader ([`bam::RecordReader`]) over bytes in memory, with an index the
//! test loads itself, gives what the facade ([`bam::Reader`], opening the path and finding the
//! same index) gives: the same SAM text (or the same error) for the whole file, for targets one
//! after another, for htslib's multi-region iterator and for every record overlapping a region
//! set, on every BAM of the corpus that has an index (BAI, and CSI where there is one).

use std::io::Cursor;
use std::path::{Path, PathBuf};

use bam::{Header, Query, Reader, RecordReader, Regions};
use region::NamedIntervals;
use region::{parse_region, Interval, Position, RegionSet};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance/data")
}

/// Every record of `query` as SAM text, one line each, then the error that ended it, if any.
fn text<S: bgzf::Source>(query: bam::Result<Query<'_, S>>, header: &Header) -> String {
    let mut query = match query {
        Ok(q) => q,
        Err(e) => return format!("query failed: {e}\n"),
    };
    let mut out = Vec::new();
    loop {
        match query.next_record_ref() {
            Ok(Some(record)) => {
                if let Err(e) = bam::write_sam(&record, header, &mut out) {
                    out.extend_from_slice(format!("unwritable: {e}\n").as_bytes());
                }
            }
            Ok(None) => break,
            Err(e) => {
                out.extend_from_slice(format!("error: {e}\n").as_bytes());
                break;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The queries compared: each reference whole and its first half, `*`, `.`; all of those
/// together as htslib's multi-region iterator and as an overlap query.
fn queries(header: &Header) -> Vec<Regions> {
    let mut targets = Vec::new();
    let mut list = Vec::new();
    for reference in header.refs() {
        let name = String::from_utf8_lossy(&reference.name);
        let half = (reference.len / 2).max(1);
        for region in [format!("{{{name}}}"), format!("{{{name}}}:1-{half}")] {
            if let Ok(target) = parse_region(&region, header) {
                targets.push(target);
            }
        }
        list.push(NamedIntervals {
            name: reference.name.clone(),
            intervals: vec![Interval {
                beg: Position::ZERO,
                end: Position::new(u64::from(half)),
            }],
        });
    }
    for special in ["*", "."] {
        targets.push(parse_region(special, header).expect("a special region"));
    }
    list.push(NamedIntervals {
        name: b"*".to_vec(),
        intervals: Vec::new(),
    });
    let set = RegionSet::resolve(&list, header, |_| {});
    vec![
        Regions::File,
        Regions::Targets(targets),
        Regions::Multi(set.clone()),
        Regions::Overlapping(set),
    ]
}

/// The generic reader's output and the facade's for every query of `queries`, with the index
/// at `index` (loaded by the test for the one, named with `-X`'s option for the other).
fn compare(bam: &Path, index: &Path) -> usize {
    let name = bam.display().to_string();
    let bytes = std::fs::read(bam).expect("the fixture");
    let loaded = index::read(index).expect("a valid index");
    let Ok(mut generic) = RecordReader::with_name(Cursor::new(bytes), &name) else {
        return 0;
    };
    let mut facade = Reader::open(&name, &bam::OpenOptions::default()).expect("opens as the other");
    facade
        .load_index(Some(&index.display().to_string()))
        .expect("the same index loads");
    let header = generic.header().clone();
    assert_eq!(
        header.refs(),
        facade.header().refs(),
        "{name}: the same header"
    );
    let mut lines = 0;
    for regions in queries(&header) {
        let ours = text(generic.query(&loaded, regions.clone()), &header);
        let theirs = text(facade.query(regions.clone()), &header);
        assert_eq!(ours, theirs, "{name} with {}: {regions:?}", index.display());
        lines += ours.lines().count();
        // Each query starts over: the whole file reads from where the last one stopped.
        generic = RecordReader::with_name(Cursor::new(std::fs::read(bam).unwrap()), &name).unwrap();
        facade = Reader::open(&name, &bam::OpenOptions::default()).unwrap();
        facade
            .load_index(Some(&index.display().to_string()))
            .unwrap();
    }
    lines
}

#[test]
fn the_generic_reader_reads_what_the_facade_reads() {
    let mut pairs = 0;
    let mut lines = 0;
    for entry in std::fs::read_dir(data()).expect("the corpus") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|e| e != "bam") {
            continue;
        }
        let stem = path.with_extension("");
        let indexes = [
            PathBuf::from(format!("{}.bai", path.display())),
            stem.with_extension("idx.csi"),
        ];
        for index in indexes.iter().filter(|i| i.exists()) {
            lines += compare(&path, index);
            pairs += 1;
        }
    }
    assert!(pairs >= 20, "only {pairs} BAM and index pairs compared");
    assert!(lines > 1000, "only {lines} lines compared");
}

#[test]
fn a_plain_file_reads_in_file_order_without_an_index() {
    let path = data().join("ce1000.bam");
    let file = std::fs::File::open(&path).expect("the fixture");
    let mut generic = RecordReader::new(file).expect("a BAM");
    let header = generic.header().clone();
    let ours = text(Ok(generic.records()), &header);
    let mut facade = Reader::open(&path.display().to_string(), &Default::default()).unwrap();
    let theirs = text(facade.records(), &header);
    assert_eq!(ours.lines().count(), 1000);
    assert_eq!(ours, theirs);
    assert!(generic.has_eof_marker().expect("a readable end"));
}

/// ce1000.bam and a query on its reference 1 (`CHROMOSOME_II`).
fn ce1000_at_ref_1() -> (RecordReader<Cursor<Vec<u8>>>, region::Region) {
    let bytes = std::fs::read(data().join("ce1000.bam")).expect("the fixture");
    let reader = RecordReader::with_name(Cursor::new(bytes), "ce1000.bam").expect("a BAM");
    let target = parse_region("CHROMOSOME_II", reader.header()).expect("a reference");
    (reader, target)
}

#[test]
fn an_index_without_the_reference_loaded_is_refused() {
    let (mut reader, target) = ce1000_at_ref_1();
    // Reference 0 alone loaded: a query on reference 1 cannot be answered.
    let bytes = std::fs::read(data().join("ce1000.bam.bai")).unwrap();
    let partial = index::Loader::new("ce1000.bam.bai")
        .wanted(index::Wanted::refs([0]))
        .read(&bytes[..])
        .expect("a valid index")
        .index;
    let error = reader.query(&partial, target).err().expect("refused");
    assert!(matches!(error, bam::Error::Index { .. }), "{error:?}");
    assert!(error.to_string().contains("ce1000.bam"), "{error}");
}

#[test]
fn a_reference_beyond_the_index_is_an_invalid_target() {
    let (mut reader, target) = ce1000_at_ref_1();
    // hdronly.bam's index knows two references; ce1000's third is beyond it.
    let other = index::read(data().join("hdronly.bam.bai")).unwrap();
    let third = parse_region("CHROMOSOME_III", reader.header()).unwrap();
    let mut query = reader.query(&other, vec![target, third]).expect("a query");
    assert!(!query.is_invalid(0) && query.is_invalid(1));
    assert_eq!(query.count_records().expect("no error"), 0);
}
