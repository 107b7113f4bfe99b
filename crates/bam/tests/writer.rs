//! The writer round trip: what it writes reads back as the same records, with an index that
//! answers queries as the original's does, whether compressed on one thread or several.

use bam::{OpenOptions, OutputFormat, Reader, Record, Writer, WriterOptions};
use index::build::Scheme;
use region::parse_region;

fn data(name: &str) -> String {
    testkit::corpus_dir()
        .join("data")
        .join(name)
        .display()
        .to_string()
}

fn all(reader: &mut Reader) -> Vec<Record> {
    reader
        .records()
        .expect("records start")
        .collect::<Result<_, _>>()
        .expect("records read")
}

fn region(reader: &mut Reader, region: &str) -> Vec<Vec<u8>> {
    let target = parse_region(region, reader.header()).expect("a known region");
    reader
        .query(target)
        .expect("query starts")
        .map(|r| r.expect("record").into_data())
        .collect()
}

#[test]
fn bam_round_trip_with_index() {
    for (scheme, threads) in [
        (Scheme::Bai, 0),
        (
            Scheme::Csi {
                min_shift: 14,
                depth: 5,
            },
            3,
        ),
    ] {
        let mut original = Reader::open(&data("rand.bam"), &OpenOptions::default()).unwrap();
        let records = all(&mut original);
        let options = WriterOptions {
            format: OutputFormat::Bam,
            threads,
            index: Some(scheme),
            ..WriterOptions::default()
        };
        let mut writer = Writer::new(Vec::new(), original.header(), &options).unwrap();
        for r in &records {
            writer.write_record(r).unwrap();
        }
        let bam::Finished {
            output: bytes,
            index,
        } = writer.finish().unwrap();
        let mut index_bytes = Vec::new();
        index
            .expect("an index was asked for")
            .write(&mut index_bytes)
            .unwrap();

        let mut copy = Reader::from_bytes("copy.bam", bytes).unwrap();
        assert!(copy.has_eof_marker().unwrap());
        assert_eq!(copy.header().text(), original.header().text());
        let again = all(&mut copy);
        assert_eq!(again.len(), records.len());
        for (a, b) in again.iter().zip(&records) {
            assert_eq!(a.clone().into_data(), b.clone().into_data());
        }

        // Query the copy through the index just built.
        let dir = std::env::temp_dir().join(format!("bam-writer-{}-{threads}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (bam_path, ix_path) = (dir.join("c.bam"), dir.join("c.idx"));
        let mut file = Writer::new(
            std::fs::File::create(&bam_path).unwrap(),
            copy.header(),
            &options,
        )
        .unwrap();
        for r in &records {
            file.write_record(r).unwrap();
        }
        let built = file.finish().unwrap().index;
        built
            .unwrap()
            .write(std::fs::File::create(&ix_path).unwrap())
            .unwrap();
        let mut indexed =
            Reader::open(&bam_path.display().to_string(), &OpenOptions::default()).unwrap();
        indexed
            .load_index(Some(&ix_path.display().to_string()))
            .unwrap();
        original.load_index(None).unwrap();
        for r in ["chr1:10000-500000", "chr2", "*", "chr3:1-1"] {
            assert_eq!(region(&mut indexed, r), region(&mut original, r), "{r}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn sam_output_is_sam_text() {
    let mut reader = Reader::open(&data("auxf.bam"), &OpenOptions::default()).unwrap();
    let records = all(&mut reader);
    let options = WriterOptions {
        sam_header: true,
        ..WriterOptions::default()
    };
    let mut writer = Writer::new(Vec::new(), reader.header(), &options).unwrap();
    let mut expected = reader.header().text_for_output();
    for r in &records {
        writer.write_record(r).unwrap();
        bam::write_sam(r, reader.header(), &mut expected).unwrap();
    }
    let bam::Finished {
        output: text,
        index,
    } = writer.finish().unwrap();
    assert!(index.is_none());
    assert_eq!(text, expected);
}

#[test]
fn uncompressed_sam_cannot_be_indexed() {
    let reader = Reader::open(&data("auxf.bam"), &OpenOptions::default()).unwrap();
    let options = WriterOptions {
        index: Some(Scheme::Bai),
        ..WriterOptions::default()
    };
    assert!(matches!(
        Writer::new(Vec::new(), reader.header(), &options),
        Err(bam::Error::Unwritable { .. })
    ));
}
