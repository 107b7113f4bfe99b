//! Copy one region of a local or remote BAM file into a new indexed BAM file, as
//! `samtools view -b --write-index -o OUT.bam##idx##OUT.bam.bai IN REGION` does.
//!
//! `cargo run -p hts-bam --example region_to_bam -- FILE_OR_URL REGION OUT.bam`
//! (writes OUT.bam and OUT.bam.bai; the input's index is found next to it). The README shows
//! this program from its first `use` on (`tests/readme.rs` keeps the two the same).

use bam::{OpenOptions, OutputFormat, Reader, Writer, WriterOptions};
use index::build::Scheme;
use region::parse_region;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, region, output] = args.as_slice() else {
        return Err("usage: region_to_bam FILE_OR_URL REGION OUT.bam".into());
    };
    let mut reader = Reader::open(input, &OpenOptions::default())?;
    reader.select_index(None)?; // IN.bam.csi, IN.csi, IN.bam.bai, IN.bai, or IN##idx##INDEX
    let target = parse_region(region, reader.header())?;
    let options = WriterOptions {
        format: OutputFormat::Bam,
        index: Some(Scheme::Bai),
        name: output.clone(),
        ..WriterOptions::default()
    };
    let mut writer = Writer::new(std::fs::File::create(output)?, reader.header(), &options)?;
    for record in reader.query(target)? {
        writer.write_record(&record?)?;
    }
    if let Some(index) = writer.finish()?.index {
        index.write(std::fs::File::create(format!("{output}.bai"))?)?;
    }
    Ok(())
}
